import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Either, ParseResult, Schema } from "effect"
import { rowsDecoder } from "../store/Rows.js"
import { createHash } from "node:crypto"
import { BlobStore } from "../files/BlobStore.js"
import { checkContent } from "../files/ContentSniffing.js"
import { ProfileData, type ProfileType } from "../profiles/Profile.js"
import {
  ArticleData,
  type Content,
  PortfolioData,
  ResumeData,
  ServiceData,
  TrainingData,
  VacancyData
} from "../publications/MediaData.js"
import { PublicationKind } from "../publications/Publication.js"
import { TaskCategory, TaskData } from "../publications/TaskData.js"
import { drawPicture, type Rgb } from "./DemoPicture.js"
import {
  businesses,
  type CategoryWords,
  categoryWords,
  cities,
  companyForms,
  companyNames,
  deadlines,
  degrees,
  femaleNames,
  maleNames,
  patronymicInitials,
  schools,
  type Subject,
  surnames,
  type TaskCategory as Category
} from "./DemoVocabulary.js"
import { type DemoLearningCounts, removeDemoLearning, seedDemoLearning } from "./DemoLearning.js"
import { type DemoRelationCounts, removeDemoRelations, seedDemoRelations } from "./DemoRelations.js"
import { seedDemoAccounts } from "./DemoAccounts.js"

/**
 * `birzha demo`: a living, Russian-language marketplace for a new installation and the data set of
 * the benchmarks. Profiles of every type, approved publications of every kind whose data is
 * decoded with that kind's own schema before it is stored, and pictures drawn in code, stored as
 * ready files through the `BlobStore`.
 *
 * Everything is derived from the seed and the row's index (uuid v5 names, a PRNG per row), so the
 * same seed gives the same rows and publication i is the same whatever the total. Rows go in
 * batches (multi-row INSERTs; publications a thousand at a time as one JSON parameter) in one
 * transaction: the whole set or nothing. Demo publications carry
 * `demo = true`. Each demo profile has an account of its own, like every real profile, at an
 * address under `demo.birzha.invalid` (a reserved name no mail reaches): that address is what
 * marks a profile as demo, profiles having no demo column. Accounts matter for more than looks:
 * the public reads join them, and the planner sizes those joins from real-looking statistics.
 */

export interface DemoOptions {
  /** How many approved publications (every kind present from 7 on). */
  readonly publications: number
  readonly seed: number
  /** Profiles of each of the four types; 30 unless told. */
  readonly profilesPerType?: number | undefined
  /** Replace demo data that is already there; without it, existing demo data is left alone. */
  readonly reset?: boolean | undefined
  /** Called after each stored batch of publications (progress for the CLI). */
  readonly onProgress?: ((stored: number, total: number) => Effect.Effect<void>) | undefined
}

export interface DemoSummary {
  readonly profiles: number
  readonly pictures: number
  readonly publications: Readonly<Record<PublicationKind, number>>
  /** What `reset` removed first. */
  readonly removed: DemoCounts
  /** Responses, offers, deals and job contacts in every state, threads and messages (`DemoRelations.ts`). */
  readonly relations: DemoRelationCounts
  /** Published demo courses made from training publications, with their runs (`DemoLearning.ts`). */
  readonly learning: DemoLearningCounts
}

export interface DemoCounts {
  readonly profiles: number
  readonly publications: number
}

/** Demo data is there already and `reset` was not asked for: nothing was changed. */
export class DemoDataPresent extends Data.TaggedError("DemoDataPresent")<DemoCounts> {}

export const maxDemoPublications = 1_000_000
export const defaultProfilesPerType = 30
const picturesPerProfile = 3
const batchSize = 1000
// Any constant works; it only has to be the same in every process seeding one database.
const demoLock = 0x64656d6f // "demo"

export const publicationKinds: ReadonlyArray<PublicationKind> = PublicationKind.literals

/** The domain of the demo accounts' addresses: `.invalid` is reserved (RFC 2606), no mail reaches it. */
export const demoEmailDomain = "demo.birzha.invalid"
const demoAccounts = `SELECT uuid FROM accounts WHERE email LIKE '%@${demoEmailDomain}'`
/** Demo profiles: those of demo accounts (see the module comment). */
const demoProfiles = `SELECT uuid FROM profiles WHERE account_uuid IN (${demoAccounts})`

// ---------------------------------------------------------------------------------------------
// Determinism: a PRNG per row and name-based uuids.

/** mulberry32: small, fast and good enough for picking words. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

class Dice {
  readonly next: () => number
  constructor(seed: number) {
    this.next = prng(seed)
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }
  pick<A>(items: ReadonlyArray<A>): A {
    return items[Math.floor(this.next() * items.length)]!
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  /** `count` distinct items in a random order (all of them when there are fewer). */
  sample<A>(items: ReadonlyArray<A>, count: number): Array<A> {
    const copy = [...items]
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1))
      const swap = copy[i]!
      copy[i] = copy[j]!
      copy[j] = swap
    }
    return copy.slice(0, Math.min(count, copy.length))
  }
  /** A price rounded to a thousand (or a hundred under ten thousand). */
  money(range: readonly [number, number]): number {
    const value = range[0] + this.next() * (range[1] - range[0])
    const step = value < 10_000 ? 100 : 1000
    return Math.round(value / step) * step
  }
}

// RFC 4122 uuid v5 names live under one namespace of ours.
const namespace = Buffer.from("6f1d7c3e8a4b4f0e9d2c5b7a1e3f9c08", "hex")

interface Named {
  readonly uuid: string
  /** 32 bits of the same digest, to seed the row's PRNG. */
  readonly seed: number
  readonly digest: Buffer
}

const named = (name: string): Named => {
  const digest = createHash("sha1").update(namespace).update(name).digest()
  const bytes = Buffer.from(digest.subarray(0, 16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x50
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return {
    uuid: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    seed: digest.readUInt32BE(16),
    digest
  }
}

const keyAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

/** A routing key of `length` characters from the digest (the form of `newRoutingKey`). */
const routingKey = (digest: Buffer, prefix: string, length = 12): string =>
  prefix + Array.from(digest.subarray(0, length - prefix.length), (byte) => keyAlphabet[byte % keyAlphabet.length]).join("")

// ---------------------------------------------------------------------------------------------
// Words.

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/** The Russian plural form after a number: 1 день, 2 дня, 5 дней. */
const plural = (n: number, one: string, few: string, many: string) => {
  const mod10 = n % 10
  const mod100 = n % 100
  if (mod10 === 1 && mod100 !== 11) return one
  if (mod10 >= 2 && mod10 <= 4 && (mod100 < 12 || mod100 > 14)) return few
  return many
}

/**
 * Made on first use, not as the module loads: the domain's modules load with every host, and an
 * `Intl.NumberFormat` loads ICU's number data, ~5 MB of resident memory a host that never makes
 * demo data would carry from its start (bench/README.md, `memory`).
 */
let rubleFormat: Intl.NumberFormat | undefined
const rubles = (n: number) => `${(rubleFormat ??= new Intl.NumberFormat("ru-RU")).format(n)} ₽`
const years = (n: number) => `${n} ${plural(n, "год", "года", "лет")}`
const days = (n: number) => `${n} ${plural(n, "день", "дня", "дней")}`

const categories: ReadonlyArray<Category> = TaskCategory.literals

// ---------------------------------------------------------------------------------------------
// Profiles and their pictures.

interface DemoProfile {
  readonly uuid: string
  readonly accountUuid: string
  readonly id: string
  readonly type: ProfileType
  readonly name: string
  /** A person's first name (for resumes); the company name otherwise. */
  readonly firstName: string
  readonly categories: ReadonlyArray<Category>
  readonly skills: ReadonlyArray<string>
  readonly city: string
  readonly createdAt: Date
  readonly data: ProfileData
  readonly pictures: ReadonlyArray<DemoPictureFile>
}

interface DemoPictureFile {
  readonly uuid: string
  readonly name: string
  readonly bytes: Uint8Array
}

const profileTypes: ReadonlyArray<ProfileType> = ["Физлицо", "Самозанятый", "ИП", "Компания"]

const hsl = (h: number, s: number, l: number): Rgb => {
  const k = (n: number) => (n + h / 30) % 12
  const a = s * Math.min(l, 1 - l)
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)))
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)]
}

const picture = (dice: Dice, hue: number): Uint8Array =>
  drawPicture({
    width: 320,
    height: 200,
    from: hsl(hue, 0.55, 0.62),
    to: hsl((hue + dice.int(25, 70)) % 360, 0.6, 0.34),
    circles: Array.from({ length: dice.int(2, 4) }, () => ({
      x: dice.next(),
      y: dice.next() * 0.66,
      r: 0.06 + dice.next() * 0.2,
      alpha: 0.15 + dice.next() * 0.25
    })),
    band: dice.chance(0.5)
      ? { top: 0.7, bottom: 0.7 + 0.08 + dice.next() * 0.12, color: hsl((hue + 180) % 360, 0.5, 0.5), alpha: 0.35 }
      : undefined
  })

const handle = (digest: Buffer) => routingKey(digest, "", 8)

const makeProfile = (seed: number, type: ProfileType, index: number, usedNames: Set<string>): DemoProfile => {
  const id = named(`${seed}/profile/${type}/${index}`)
  const dice = new Dice(id.seed)
  const categoryCount = dice.int(1, 3)
  const cats = dice.sample(categories, categoryCount)
  const main = categoryWords[cats[0]!]
  const skills = dice.sample([...new Set(cats.flatMap((c) => categoryWords[c].skills))], dice.int(3, 7))
  const city = dice.pick(cities)
  const experience = dice.int(1, 15)
  let name = ""
  let firstName = ""
  let female = false
  for (let attempt = 0; name === "" || usedNames.has(name); attempt++) {
    if (type === "Компания") {
      firstName = `«${dice.pick(companyNames)}»`
      name = `${dice.pick(companyForms)} ${firstName}`
    } else {
      female = dice.chance(0.5)
      firstName = dice.pick(female ? femaleNames : maleNames)
      const surname = dice.pick(surnames) + (female ? "а" : "")
      name = type === "ИП"
        ? `ИП ${surname} ${firstName.charAt(0)}. ${dice.pick(patronymicInitials)}`
        : `${firstName} ${surname}`
    }
    if (attempt > 50) name = `${name} ${index + 1}`
  }
  usedNames.add(name)
  const position = dice.pick(main.positions)
  const team = dice.int(5, 60)
  const about = type === "Компания"
    ? `${name} — команда из ${team} ${plural(team, "человека", "человек", "человек")}, город ${city}. Направления: ${cats.join(", ")}. ` +
      "Работаем с малым и средним бизнесом. " +
      `Заключаем договор, даём гарантию и отвечаем в течение рабочего дня. Среди клиентов — ${dice.pick(businesses)} и ${dice.pick(businesses)}.`
    : type === "Физлицо"
    ? `${firstName}, ${city}. ${position}, опыт ${years(experience)}. ` +
      `Иногда ${female ? "сама" : "сам"} заказываю работу для своих проектов, иногда беру небольшие заказы. ` +
      `Люблю понятные задачи и честные сроки.`
    : type === "Самозанятый"
    ? `${female ? "Самозанятая" : "Самозанятый"}. ${position}, опыт ${years(experience)}. Город ${city}, работаю удалённо. ` +
      `Выдаю чек за каждую оплату. Основные инструменты: ${skills.slice(0, 4).join(", ")}.`
    : `${name}. Направления: ${cats.join(", ")}. Работаю с ${2026 - experience} года, ` +
      `закрывающие документы и договор. Город ${city}, выезд к клиенту по договорённости.`
  const showContacts = dice.chance(0.4)
  const login = handle(id.digest)
  const data: ProfileData = {
    name,
    type,
    isPublic: true,
    showContacts,
    about,
    categories: cats,
    contacts: showContacts ? `Телеграм: @${login}, почта: ${login}@example.com` : "",
    networks: dice.chance(0.3) ? [{ kind: "Портфолио", url: `https://example.com/portfolio/${login}` }] : [],
    skills: skills.map((skill) => ({ name: skill, years: dice.int(1, experience) })),
    structuredContacts: showContacts
      ? [{ kind: "telegram", value: `@${login}` }, { kind: "email", value: `${login}@example.com` }]
      : []
  }
  const hue = dice.int(0, 359)
  const pictures = Array.from({ length: picturesPerProfile }, (_, n) => ({
    uuid: named(`${seed}/picture/${id.uuid}/${n}`).uuid,
    name: `обложка-${n + 1}.png`,
    bytes: picture(dice, (hue + n * 47) % 360)
  }))
  return {
    uuid: id.uuid,
    accountUuid: named(`${seed}/account/${type}/${index}`).uuid,
    id: routingKey(id.digest, "demo"),
    type,
    name,
    firstName,
    categories: cats,
    skills,
    city,
    createdAt: new Date(Date.now() - dice.int(30, 900) * 86_400_000),
    data,
    pictures
  }
}

// ---------------------------------------------------------------------------------------------
// Publications of each kind.

interface Draft {
  readonly dice: Dice
  readonly owner: DemoProfile
  readonly category: Category
  readonly words: CategoryWords
  readonly subject: Subject
}

/** The kinds each profile type publishes (a company posts vacancies, a person a resume). */
const publishers: Readonly<Record<PublicationKind, ReadonlyArray<ProfileType>>> = {
  task: ["Физлицо", "Самозанятый", "ИП", "Компания"],
  service: ["Самозанятый", "ИП", "Компания"],
  portfolio: ["Физлицо", "Самозанятый", "ИП", "Компания"],
  article: ["Физлицо", "Самозанятый", "ИП", "Компания"],
  vacancy: ["ИП", "Компания"],
  resume: ["Физлицо", "Самозанятый"],
  training: ["Самозанятый", "ИП", "Компания"]
}

/** The mix of kinds in the catalog: tasks most, then services, then the rest. */
const kindWeights: ReadonlyArray<readonly [PublicationKind, number]> = [
  ["task", 0.27],
  ["service", 0.2],
  ["portfolio", 0.14],
  ["article", 0.1],
  ["vacancy", 0.1],
  ["resume", 0.1],
  ["training", 0.09]
]

const kindOf = (dice: Dice, index: number): PublicationKind => {
  // The first seven cover every kind, so even a tiny demo has each.
  if (index < publicationKinds.length) return publicationKinds[index]!
  let roll = dice.next()
  for (const [kind, weight] of kindWeights) {
    roll -= weight
    if (roll < 0) return kind
  }
  return "task"
}

const assetsOf = (draft: Draft, title: string, count: number) =>
  draft.dice.sample(draft.owner.pictures, count).map((file, n) => ({
    id: file.uuid,
    kind: "image" as const,
    caption: n === 0 ? capitalize(draft.subject.nom) : capitalize(draft.dice.pick(draft.words.outcomes)),
    alt: `Иллюстрация к публикации «${title}»`
  }))

/** The content document of a media publication: preview picture, assets and a few blocks. */
const contentOf = (draft: Draft, title: string, summary: string, extra: ReadonlyArray<NonNullable<Content["blocks"]>[number]> = []) => {
  const assets = assetsOf(draft, title, draft.dice.int(1, picturesPerProfile))
  const blocks = [
    { id: "b1", type: "richtext" as const, text: summary },
    ...extra,
    assets.length > 1
      ? { id: "b9", type: "gallery" as const, title: "Примеры", mediaIds: assets.map((a) => a.id) }
      : { id: "b9", type: "image" as const, mediaIds: [assets[0]!.id], layout: "wide" as const }
  ]
  return {
    version: 1 as const,
    preview: { kind: "image" as const, assetIds: [assets[0]!.id], title, summary: summary.slice(0, 500), fit: "cover" as const },
    assets,
    blocks
  }
}

const sentence = (parts: ReadonlyArray<string>) => parts.filter((p) => p.length > 0).join(" ")

const taskOf = (draft: Draft, seed: number, index: number): unknown => {
  const { dice, subject, words } = draft
  const deadline = dice.pick(deadlines)
  const title = dice.pick([
    `Нужно сделать ${subject.acc}`,
    `Ищу исполнителя: ${subject.nom}`,
    `Заказ: ${subject.nom}`,
    `Сделать ${subject.acc} ${deadline === "сроки обсудим" ? "в ближайшее время" : deadline}`,
    `${capitalize(subject.nom)} (${draft.owner.city})`
  ])
  const budget = dice.chance(0.15) ? "по договорённости" : `до ${rubles(dice.money(words.budget))}`
  const description = sentence([
    `Нужно сделать ${subject.acc}.`,
    `У нас ${dice.pick(businesses)}, город ${draft.owner.city}.`,
    dice.pick(words.requirements),
    `Какой результат нужен: ${dice.pick(words.outcomes)}.`,
    dice.chance(0.5) ? `Пригодится опыт: ${dice.sample(words.skills, 3).join(", ")}.` : "",
    `Бюджет — ${budget}, сроки — ${deadline}.`,
    dice.pick([
      "Откликайтесь с примерами похожих работ.",
      "Пишите, если есть вопросы, — ответим в течение дня.",
      "Готовы обсудить детали по телефону.",
      "Оплата поэтапно, по результату каждого этапа."
    ])
  ])
  const files: Array<Record<string, unknown>> = []
  if (dice.chance(0.2)) {
    const brief = Buffer.from(`Техническое задание\n\n${title}\n\n${description}\n`, "utf8")
    files.push({ id: `brief-${index + 1}`, name: "ТЗ.txt", mimeType: "text/plain", size: brief.length, url: `data:text/plain;base64,${brief.toString("base64")}` })
  }
  if (dice.chance(0.1)) {
    const sketch = drawPicture({ width: 48, height: 32, from: hsl(dice.int(0, 359), 0.5, 0.6), to: hsl(dice.int(0, 359), 0.5, 0.4), circles: [] })
    files.push({ id: `sketch-${seed}-${index + 1}`, name: "эскиз.png", mimeType: "image/png", size: sketch.length, url: `data:image/png;base64,${Buffer.from(sketch).toString("base64")}` })
  }
  return { title, category: draft.category, description, budget, deadline, files }
}

const serviceOf = (draft: Draft): unknown => {
  const { dice, subject, words } = draft
  const deliveryDays = dice.int(2, 30)
  const title = dice.pick([
    `Сделаю ${subject.acc}`,
    `${capitalize(subject.nom)} под ключ`,
    `${capitalize(subject.nom)} за ${days(deliveryDays)}`,
    `Профессионально: ${subject.nom}`
  ])
  const experience = dice.int(2, 12)
  const skills = dice.sample(words.skills, 4)
  const outcome = dice.pick(words.outcomes)
  const description = sentence([
    `Делаю ${subject.acc} для малого бизнеса и частных клиентов.`,
    `Опыт — ${years(experience)}, завершённых проектов: ${dice.int(12, 240)}.`,
    `В работе использую ${skills.join(", ")}.`,
    `Результат: ${outcome}.`,
    "Точную стоимость назову после короткого брифа."
  ])
  const includes = dice.sample(["Бриф и созвон", "Две итерации правок", "Исходные файлы", "Инструкция по использованию", "Поддержка месяц после сдачи", capitalize(outcome)], 4)
  return {
    title,
    category: draft.category,
    files: [],
    description,
    content: contentOf(draft, title, description, [{ id: "b2", type: "list", title: "Что входит", items: includes }]),
    service: {
      price: dice.money(draft.words.budget),
      currency: "RUB",
      priceUnit: dice.pick(["fixed", "fixed", "fixed", "hour", "day"] as const),
      deliveryDays,
      revisions: dice.int(1, 5),
      includes,
      skills
    }
  }
}

const portfolioOf = (draft: Draft): unknown => {
  const { dice, subject, words } = draft
  const client = `${dice.pick(companyForms)} «${dice.pick(companyNames)}»`
  const year = dice.int(2018, 2026)
  const title = dice.pick([
    `${capitalize(subject.nom)}: кейс`,
    `Кейс: ${subject.nom} для ${client}`,
    `Как мы сделали ${subject.acc}`,
    `${capitalize(subject.nom)}, ${year}`
  ])
  const description = sentence([
    `Задача клиента — ${subject.nom}.`,
    dice.pick(words.requirements),
    `Что получилось: ${dice.sample(words.outcomes, 2).join(", а ещё ")}.`,
    `Срок — ${days(dice.int(5, 60))}.`
  ])
  const content = contentOf(draft, title, description)
  return {
    title,
    category: draft.category,
    files: [],
    description,
    content,
    portfolio: {
      client,
      year,
      role: dice.pick(words.positions),
      ...(dice.chance(0.3) ? { projectUrl: `https://example.com/cases/${year}-${dice.int(100, 999)}` } : {}),
      tools: dice.sample(words.skills, 3),
      // The legacy copy old clients still read; the catalog sends it empty (CatalogPublication).
      assets: content.assets,
      blocks: content.blocks
    }
  }
}

const articleOf = (draft: Draft): unknown => {
  const { dice, subject, words } = draft
  const title = dice.pick([
    `Сколько ${subject.plural === true ? "стоят" : "стоит"} ${subject.nom} в 2026 году`,
    `${dice.pick([5, 6, 7, 8, 9, 10])} ошибок, когда заказываете ${subject.acc}`,
    `Как заказать ${subject.acc} и не переплатить`,
    `Чек-лист: ${subject.nom}`,
    `Разбор: ${subject.nom} от идеи до запуска`
  ])
  const lead = sentence([
    `Рассказываем, из чего складывается работа, когда нужно ${dice.pick(["сделать", "заказать", "запустить"])} ${subject.acc}.`,
    `Главное в результате: ${dice.pick(words.outcomes)}.`
  ])
  const points = dice.sample(words.requirements, 3)
  const content = contentOf(draft, title, lead, [
    { id: "b2", type: "heading", title: "С чего начать" },
    { id: "b3", type: "richtext", text: sentence(points) },
    { id: "b4", type: "list", title: "Что проверить", items: dice.sample(words.outcomes, 3).map(capitalize) },
    { id: "b5", type: "quote", text: capitalize(dice.pick(words.outcomes)) + ".", author: draft.owner.name, role: dice.pick(words.positions) }
  ])
  return {
    title,
    category: draft.category,
    files: [],
    description: lead,
    content: {
      ...content,
      article: {
        lead,
        coverId: content.assets[0]!.id,
        readingMinutes: String(dice.int(3, 15)),
        tags: [draft.category.toLowerCase(), ...dice.sample(words.skills, 2)]
      }
    }
  }
}

const vacancyOf = (draft: Draft): unknown => {
  const { dice, words } = draft
  const position = dice.pick(words.positions)
  const workplace = dice.pick(["remote", "onsite", "hybrid"] as const)
  const company = draft.owner.name
  const salaryFrom = dice.money([60_000, 220_000])
  const salaryTo = salaryFrom + dice.money([20_000, 150_000])
  const title = dice.pick([`${position}`, `${position} в ${company}`, `${position} (${workplace === "remote" ? "удалённо" : draft.owner.city})`])
  const skills = dice.sample(words.skills, 4)
  const description = sentence([
    `Открыта вакансия «${position}» в ${company}.`,
    `Будете делать ${draft.subject.acc} и похожие проекты.`,
    `Нам важно одно: ${dice.pick(words.outcomes)}.`,
    `Зарплата от ${rubles(salaryFrom)} до ${rubles(salaryTo)}.`
  ])
  return {
    title,
    category: draft.category,
    files: [],
    description,
    content: contentOf(draft, title, description),
    vacancy: {
      company,
      salaryFrom,
      salaryTo,
      currency: "RUB",
      salaryGross: dice.chance(0.5),
      employment: dice.pick(["full_time", "full_time", "part_time", "project"] as const),
      workplace,
      location: draft.owner.city,
      experience: dice.pick(["none", "1-3", "1-3", "3-6", "6+"] as const),
      skills,
      responsibilities: [capitalize(draft.subject.nom), ...dice.sample(words.outcomes, 2).map((o) => `Отвечать за результат: ${o}`)],
      requirements: [`Опыт с ${skills.slice(0, 2).join(" и ")}`, "Умение договариваться и держать сроки"]
    }
  }
}

const month = (year: number, m: number) => `${year}-${String(m).padStart(2, "0")}`

const resumeOf = (draft: Draft): unknown => {
  const { dice, words } = draft
  const position = dice.pick(words.positions)
  const experienceYears = dice.int(1, 14)
  const title = dice.pick([position, `${position}, опыт ${years(experienceYears)}`, `${position} (${draft.owner.city})`])
  const skills = dice.sample([...new Set([...draft.owner.skills, ...words.skills])], 6)
  const startYear = 2026 - experienceYears
  const middle = startYear + dice.int(0, Math.max(0, experienceYears - 1))
  const description = sentence([
    `Меня зовут ${draft.owner.firstName}.`,
    `${position}, опыт ${years(experienceYears)}.`,
    `Последний проект — ${draft.subject.nom}; ${dice.pick(words.outcomes)}.`,
    `Ищу ${dice.pick(["постоянную работу", "проектную работу", "команду с интересными задачами"])}.`
  ])
  return {
    title,
    category: draft.category,
    files: [],
    description,
    content: contentOf(draft, title, description),
    resume: {
      position,
      salary: dice.money([70_000, 350_000]),
      currency: "RUB",
      employment: dice.sample(["full_time", "part_time", "project"] as const, dice.int(1, 2)),
      workplace: dice.sample(["remote", "hybrid", "onsite"] as const, dice.int(1, 2)),
      location: draft.owner.city,
      experienceYears,
      skills,
      experience: [
        {
          company: `${dice.pick(companyForms)} «${dice.pick(companyNames)}»`,
          position,
          from: month(middle, dice.int(1, 12)),
          description: capitalize(dice.pick(words.outcomes)) + "."
        },
        {
          company: `${dice.pick(companyForms)} «${dice.pick(companyNames)}»`,
          position: dice.pick(words.positions),
          from: month(startYear, dice.int(1, 6)),
          to: month(Math.max(startYear, middle), 12)
        }
      ],
      education: [{ institution: dice.pick(schools), degree: dice.pick(degrees), year: startYear - dice.int(0, 3) }]
    }
  }
}

const trainingOf = (draft: Draft): unknown => {
  const { dice, words } = draft
  const course = dice.pick(words.courses)
  const format = dice.pick(["online", "online", "offline", "hybrid"] as const)
  const level = dice.pick(["beginner", "intermediate", "advanced"] as const)
  const durationHours = dice.int(6, 120)
  const title = dice.pick([`Курс «${course}»`, course, `${course}: практикум`, `Интенсив «${course}»`])
  const outcomes = dice.sample(words.outcomes, 3).map(capitalize)
  const description = sentence([
    `${capitalize(durationHours >= 40 ? "большой курс" : "короткий практикум")} для тех, кто хочет сам делать ${draft.subject.acc}.`,
    `${days(Math.max(1, Math.round(durationHours / 4)))} занятий, ${durationHours} ${plural(durationHours, "час", "часа", "часов")} практики.`,
    `После курса: ${outcomes.map((o) => o.toLowerCase()).join("; ")}.`,
    format === "online" ? "Занятия онлайн, записи остаются у вас." : `Очные занятия, город ${draft.owner.city}.`
  ])
  const start = new Date(Date.now() + dice.int(7, 120) * 86_400_000)
  return {
    title,
    category: draft.category,
    files: [],
    description,
    content: contentOf(draft, title, description, [{ id: "b2", type: "list", title: "Чему научитесь", items: outcomes }]),
    training: {
      format,
      level,
      durationHours,
      price: dice.money([3_000, 90_000]),
      currency: "RUB",
      startsOn: start.toISOString().slice(0, 10),
      ...(format === "online" ? {} : { location: draft.owner.city }),
      outcomes,
      certificate: dice.chance(0.6)
    }
  }
}

/** Each kind's own schema: the data is decoded with it before it is stored. */
const decoders: Readonly<Record<PublicationKind, (raw: unknown) => Either.Either<unknown, ParseResult.ParseError>>> = {
  task: Schema.decodeUnknownEither(TaskData),
  service: Schema.decodeUnknownEither(ServiceData),
  portfolio: Schema.decodeUnknownEither(PortfolioData),
  article: Schema.decodeUnknownEither(ArticleData),
  vacancy: Schema.decodeUnknownEither(VacancyData),
  resume: Schema.decodeUnknownEither(ResumeData),
  training: Schema.decodeUnknownEither(TrainingData)
}

/**
 * The data as it is stored, once its kind's schema decodes it; a generator bug is a defect that
 * stops the run before anything is committed. The generators write every field the schemas
 * default (files, currency, assets, blocks), so the raw object is already the encoded form a
 * save stores (the demo test checks encode(decode(stored)) equals stored), and encoding it
 * again would only double the cost.
 */
const validated = (kind: PublicationKind, raw: unknown, label: string): Effect.Effect<unknown> =>
  Either.match(decoders[kind](raw), {
    onLeft: (error) => Effect.dieMessage(`demo ${label} does not fit its schema: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
    onRight: () => Effect.succeed(raw)
  })

/** One publication as the batch insert reads it (`json_to_recordset`). */
type PublicationRecord = {
  readonly uuid: string
  readonly id: string
  readonly kind: PublicationKind
  readonly owner: string
  readonly data: unknown
  readonly approved_at: string
  readonly submitted_at: string
  readonly created_at: string
  readonly closed: boolean
}

const publicationOf = (
  seed: number,
  index: number,
  now: number,
  owners: Readonly<Record<PublicationKind, ReadonlyArray<DemoProfile>>>
): Effect.Effect<PublicationRecord> => {
  const id = named(`${seed}/publication/${index}`)
  const dice = new Dice(id.seed)
  const kind = kindOf(dice, index)
  const owner = dice.pick(owners[kind])
  const category = dice.chance(0.8) ? dice.pick(owner.categories) : dice.pick(categories)
  const words = categoryWords[category]
  const draft: Draft = { dice, owner, category, words, subject: dice.pick(words.subjects) }
  const raw = kind === "task"
    ? taskOf(draft, seed, index)
    : kind === "service"
    ? serviceOf(draft)
    : kind === "portfolio"
    ? portfolioOf(draft)
    : kind === "article"
    ? articleOf(draft)
    : kind === "vacancy"
    ? vacancyOf(draft)
    : kind === "resume"
    ? resumeOf(draft)
    : trainingOf(draft)
  // Newer rows are likelier: a living catalog has more this month than half a year ago.
  const approvedAt = now - Math.floor(Math.pow(dice.next(), 1.5) * 180 * 86_400_000)
  const submittedAt = approvedAt - dice.int(10, 24 * 60) * 60_000
  const createdAt = submittedAt - dice.int(5, 72 * 60) * 60_000
  const closed = kind === "task" && dice.chance(0.08)
  return Effect.map(validated(kind, raw, `${kind} #${index}`), (data) => ({
    uuid: id.uuid,
    id: routingKey(id.digest.subarray(4), ""),
    kind,
    owner: owner.uuid,
    data,
    approved_at: new Date(approvedAt).toISOString(),
    submitted_at: new Date(submittedAt).toISOString(),
    created_at: new Date(createdAt).toISOString(),
    closed
  }))
}

// ---------------------------------------------------------------------------------------------
// The store.

/** How much demo data the database holds. */
const decodeCounts = rowsDecoder(Schema.Struct({ profiles: Schema.Number, publications: Schema.Number }))
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))

export const demoDataCounts: Effect.Effect<DemoCounts, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* Effect.flatMap(
    sql`SELECT
    (SELECT count(*)::int FROM (${sql.literal(demoProfiles)}) d) AS profiles,
    (SELECT count(*)::int FROM publications WHERE demo) AS publications`,
    decodeCounts
  )
  return { profiles: row?.profiles ?? 0, publications: row?.publications ?? 0 }
})

/**
 * Removes the demo data: demo publications with their comments and moderation decisions, then the
 * demo profiles with their files (bytes through the `BlobStore`), then the demo accounts with
 * their sessions and sign-in challenges (an operator may have signed in as one through the
 * development mailbox). Anything else made with a demo account (keys, webhooks...) stops the
 * removal with the database's foreign-key error, and nothing is removed.
 */
export const removeDemoData: Effect.Effect<DemoCounts, SqlError, SqlClient.SqlClient | BlobStore> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const blobs = yield* BlobStore
  return yield* sql.withTransaction(Effect.gen(function*() {
    const counts = yield* demoDataCounts
    const doomed = `SELECT uuid FROM publications WHERE demo OR owner_profile_uuid IN (${demoProfiles})`
    // Relations, threads and messages of demo profiles first: they point at profiles and publications.
    yield* removeDemoRelations(demoEmailDomain)
    // Courses point at publications and profiles.
    yield* removeDemoLearning(demoProfiles)
    // Comments people left on demo publications go with them (answers and roots in one statement).
    yield* sql`DELETE FROM publication_comments WHERE publication_uuid IN (${sql.literal(doomed)})`
    yield* sql`DELETE FROM moderation_decisions WHERE publication_uuid IN (${sql.literal(doomed)})`
    yield* sql`DELETE FROM publications WHERE uuid IN (${sql.literal(doomed)})`
    const files = yield* Effect.flatMap(sql`SELECT uuid FROM files WHERE profile_uuid IN (${sql.literal(demoProfiles)})`, decodeUuids)
    yield* Effect.forEach(files, (file) => blobs.delete(file.uuid), { discard: true })
    yield* sql`DELETE FROM files WHERE profile_uuid IN (${sql.literal(demoProfiles)})`
    yield* sql`DELETE FROM sessions WHERE account_uuid IN (${sql.literal(demoAccounts)})`
    yield* sql`DELETE FROM sign_in_challenges WHERE account_uuid IN (${sql.literal(demoAccounts)})`
    yield* sql`DELETE FROM profiles WHERE uuid IN (${sql.literal(demoProfiles)})`
    yield* sql`DELETE FROM accounts WHERE uuid IN (${sql.literal(demoAccounts)})`
    // The demo moderator's role (DemoAccounts.ts) goes with its account.
    yield* sql`DELETE FROM moderators WHERE email LIKE ${`%@${demoEmailDomain}`}`
    return counts
  }))
})

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))

/**
 * Fills the database with demo data (see the module comment). Fails with `DemoDataPresent` when
 * demo data is there and `reset` is not set, changing nothing.
 */
export const seedDemoData = (
  options: DemoOptions
): Effect.Effect<DemoSummary, DemoDataPresent | SqlError, SqlClient.SqlClient | BlobStore> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const blobs = yield* BlobStore
    const total = Math.max(0, Math.min(maxDemoPublications, Math.floor(options.publications)))
    const perType = Math.max(1, Math.floor(options.profilesPerType ?? defaultProfilesPerType))
    const seed = Math.floor(options.seed)

    // Profiles and pictures first (pure): a bad one is a bug and dies before anything is written.
    const usedNames = new Set<string>()
    const profiles = profileTypes.flatMap((type) => Array.from({ length: perType }, (_, i) => makeProfile(seed, type, i, usedNames)))
    const decodeProfile = Schema.decodeUnknownEither(ProfileData)
    for (const profile of profiles) {
      const decoded = decodeProfile(profile.data)
      if (Either.isLeft(decoded)) {
        return yield* Effect.dieMessage(`demo profile ${profile.name} does not fit ProfileData: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
      }
      for (const file of profile.pictures) {
        const sniffed = checkContent("image/png", file.bytes)
        if (!sniffed.ok) return yield* Effect.dieMessage(`demo picture is not a PNG: ${sniffed.reason}`)
      }
    }
    const eligible = (kind: PublicationKind) => profiles.filter((p) => publishers[kind].includes(p.type))
    const owners: Record<PublicationKind, ReadonlyArray<DemoProfile>> = {
      task: eligible("task"),
      service: eligible("service"),
      portfolio: eligible("portfolio"),
      article: eligible("article"),
      vacancy: eligible("vacancy"),
      resume: eligible("resume"),
      training: eligible("training")
    }

    const summary = yield* sql.withTransaction(Effect.gen(function*() {
      // Two runs at once queue here; the second then finds the first one's data and changes nothing.
      yield* sql`SELECT pg_advisory_xact_lock(${demoLock})`
      const present = yield* demoDataCounts
      const there = present.profiles > 0 || present.publications > 0
      if (there && options.reset !== true) return yield* new DemoDataPresent(present)
      const removed = there ? yield* removeDemoData : { profiles: 0, publications: 0 }

      yield* sql`INSERT INTO accounts ${
        sql.insert(profiles.map((p) => ({
          uuid: p.accountUuid,
          email: `${p.id}@${demoEmailDomain}`,
          current_profile_uuid: p.uuid,
          created_at: p.createdAt.toISOString(),
          updated_at: p.createdAt.toISOString()
        })))
      }`
      yield* sql`INSERT INTO profiles ${
        sql.insert(profiles.map((p) => ({
          uuid: p.uuid,
          account_uuid: p.accountUuid,
          id: p.id,
          name: p.data.name,
          type: p.data.type,
          is_public: p.data.isPublic,
          show_contacts: p.data.showContacts,
          about: p.data.about,
          categories: JSON.stringify(p.data.categories),
          contacts: p.data.contacts,
          networks: JSON.stringify(p.data.networks),
          skills: JSON.stringify(p.data.skills),
          structured_contacts: JSON.stringify(p.data.structuredContacts),
          created_at: p.createdAt.toISOString(),
          updated_at: p.createdAt.toISOString()
        })))
      }`

      const pictures = profiles.flatMap((p) => p.pictures.map((file) => ({ profile: p, file })))
      for (const batch of chunks(pictures, 200)) {
        yield* sql`INSERT INTO files ${
          sql.insert(batch.map(({ file, profile }) => ({
            uuid: file.uuid,
            profile_uuid: profile.uuid,
            purpose: "publication_asset",
            name: file.name,
            mime_type: "image/png",
            size: file.bytes.length,
            status: "ready",
            // No upload address: the file was never uploaded, so no token can match.
            upload_token_hash: "",
            upload_expires_at: profile.createdAt.toISOString(),
            sha256: createHash("sha256").update(file.bytes).digest("hex"),
            created_at: profile.createdAt.toISOString(),
            updated_at: profile.createdAt.toISOString(),
            uploaded_at: profile.createdAt.toISOString(),
            ready_at: profile.createdAt.toISOString()
          })))
        }`
        yield* Effect.forEach(batch, ({ file }) => blobs.put(file.uuid, file.bytes), { discard: true })
      }

      const counts: Record<PublicationKind, number> = { task: 0, service: 0, portfolio: 0, article: 0, vacancy: 0, resume: 0, training: 0 }
      const now = Date.now()
      // A pause every hundred rows lets the socket send the batch being stored meanwhile (a
      // busy event loop would hold the rest of the statement back and Postgres would wait).
      const generate = (start: number) =>
        Effect.forEach(
          Array.from({ length: Math.max(0, Math.min(batchSize, total - start)) }, (_, i) => start + i),
          (index) => index % 100 === 99 ? Effect.zipLeft(publicationOf(seed, index, now, owners), Effect.sleep(0)) : publicationOf(seed, index, now, owners)
        )
      // One JSON parameter a batch: the data is parsed once for both columns, and the next batch
      // is generated here while Postgres stores this one.
      const store = (rows: ReadonlyArray<PublicationRecord>) =>
        rows.length === 0 ? Effect.void : sql`INSERT INTO publications (uuid, id, kind, owner_profile_uuid, status, draft, approved,
            approved_at, submitted_at, closed, demo, revision, created_at, updated_at)
          SELECT r.uuid, r.id, r.kind, r.owner, 'approved', r.data, r.data, r.approved_at, r.submitted_at, r.closed, true,
            -- saved (1), submitted (2), approved (3)
            3, r.created_at, r.approved_at
          FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(uuid uuid, id text, kind text, owner uuid, data jsonb,
            approved_at timestamptz, submitted_at timestamptz, created_at timestamptz, closed boolean)
`.pipe(Effect.asVoid)
      let rows = yield* generate(0)
      for (let start = 0; start < total; start += batchSize) {
        for (const row of rows) counts[row.kind]++
        const [, following] = yield* Effect.all([store(rows), generate(start + batchSize)], { concurrency: 2 })
        if (options.onProgress !== undefined) yield* options.onProgress(start + rows.length, total)
        rows = following
      }
      const relations = yield* seedDemoRelations(seed, demoEmailDomain, now)
      yield* seedDemoAccounts(seed, demoEmailDomain, now)
      const learning = yield* seedDemoLearning((name) => named(`${seed}/${name}`).uuid, now)
      return { profiles: profiles.length, pictures: pictures.length, publications: counts, removed, relations, learning }
    }))
    // Fresh statistics for the planner now rather than when autovacuum gets to it: a bulk load
    // changes the tables' sizes by orders of magnitude.
    yield* sql`ANALYZE accounts, profiles, publications, files, relations, threads, messages`
    return summary
  })
