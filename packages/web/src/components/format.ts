import type { MessageKey, Texts } from "../i18n.js"

const kinds = new Set(["task", "service", "portfolio", "article", "vacancy", "resume", "training"])

export const kindLabel = (texts: Texts, kind: string) => kinds.has(kind) ? texts.t(`kind.${kind}` as MessageKey) : kind

const profileTypes: Readonly<Record<string, MessageKey>> = {
  "Физлицо": "profile.type.person",
  "Самозанятый": "profile.type.selfEmployed",
  "ИП": "profile.type.soleProprietor",
  "Компания": "profile.type.company"
}

/** The profile's type (stored in Russian, as the API names it) in the page's language. */
export const profileTypeLabel = (texts: Texts, type: string) => {
  const key = profileTypes[type]
  return key === undefined ? type : texts.t(key)
}

/** The name the service gives every account's automatic key (packages/domain/src/keys/KeyRepository.ts), said in the page's language. */
const personalKeyName = "Personal key"

/** A key's name as the person reads it: the automatic key's stored English name in the page's language, any other as written. */
export const keyNameOf = (texts: Texts, name: string) => name === personalKeyName ? texts.t("keys.personalName") : name

/**
 * What an operation does, in the page's language (`approval.summary.<operationId>`, a translation
 * for every approval-flagged operation, tested in packages/web/src/i18n.test.ts); the declared
 * English summary when there is none.
 */
export const operationSummary = (texts: Texts, operationId: string, declared: string) => {
  const key = `approval.summary.${operationId}` as MessageKey
  const said = texts.t(key)
  return said === key ? declared : said
}

/** A card's headline figure: a task's budget as written, else `amount currency` as money of the locale. */
export const priceOf = (texts: Texts, kind: string, price: string) => {
  if (kind === "task") return price
  const [amount, currency] = price.split(" ")
  const value = Number(amount)
  return Number.isFinite(value) && currency !== undefined ? texts.money(value, currency) : price
}

type Json = Readonly<Record<string, unknown>>

export interface Fact {
  readonly label: MessageKey
  readonly value: string | ReadonlyArray<string>
  /** A link the value goes to (a portfolio's project). */
  readonly href?: string
}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string" && item !== "") : []

/** A publication's own fields, labelled and formatted in the page's language; unknown fields are left out. */
export const factsOf = (texts: Texts, kind: string, details: Json): ReadonlyArray<Fact> => {
  const { t } = texts
  const currency = typeof details["currency"] === "string" ? details["currency"] : "RUB"
  const money = (value: unknown) => typeof value === "number" ? texts.money(value, currency) : undefined
  const enumValue = (prefix: string, value: unknown) => {
    if (typeof value !== "string") return undefined
    const key = `value.${prefix}.${value}` as MessageKey
    const text = t(key)
    return text === key ? value : text
  }
  const facts: Array<Fact> = []
  const add = (label: MessageKey, value: string | ReadonlyArray<string> | undefined, link?: string) => {
    if (value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return
    facts.push({ label, value, ...(link === undefined ? {} : { href: link }) })
  }
  const text = (field: string) => typeof details[field] === "string" ? details[field] : undefined
  const int = (field: string) => typeof details[field] === "number" ? texts.number(details[field]) : undefined
  switch (kind) {
    case "task":
      add("field.budget", text("budget"))
      add("field.deadline", text("deadline"))
      break
    case "service": {
      const price = money(details["price"])
      const unit = enumValue("unit", details["priceUnit"])
      add("field.price", price === undefined ? undefined : unit === undefined || unit === "" ? price : `${price} ${unit}`)
      add("field.deliveryDays", typeof details["deliveryDays"] === "number" ? t("value.days", { n: details["deliveryDays"] }) : undefined)
      add("field.revisions", int("revisions"))
      add("field.includes", strings(details["includes"]))
      add("field.skills", strings(details["skills"]))
      break
    }
    case "portfolio": {
      add("field.client", text("client"))
      add("field.year", typeof details["year"] === "number" ? String(details["year"]) : undefined)
      add("field.role", text("role"))
      const url = text("projectUrl")
      add("field.projectUrl", url, url !== undefined && url.startsWith("https://") ? url : undefined)
      add("field.tools", strings(details["tools"]))
      break
    }
    case "vacancy": {
      const from = money(details["salaryFrom"])
      const to = money(details["salaryTo"])
      add("field.company", text("company"))
      add(
        "field.salary",
        from !== undefined && to !== undefined
          ? t("value.salaryRange", { from, to })
          : from !== undefined
          ? t("value.salaryFrom", { from })
          : to !== undefined
          ? t("value.salaryTo", { to })
          : undefined
      )
      add("field.employment", enumValue("employment", details["employment"]))
      add("field.workplace", enumValue("workplace", details["workplace"]))
      add("field.location", text("location"))
      add("field.experience", enumValue("experience", details["experience"]))
      add("field.skills", strings(details["skills"]))
      add("field.responsibilities", strings(details["responsibilities"]))
      add("field.requirements", strings(details["requirements"]))
      break
    }
    case "resume":
      add("field.position", text("position"))
      add("field.salary", money(details["salary"]))
      add("field.employment", strings(details["employment"]).map((v) => enumValue("employment", v) ?? v))
      add("field.workplace", strings(details["workplace"]).map((v) => enumValue("workplace", v) ?? v))
      add("field.location", text("location"))
      add("field.experienceYears", int("experienceYears"))
      add("field.skills", strings(details["skills"]))
      break
    case "training":
      add("field.format", enumValue("format", details["format"]))
      add("field.level", enumValue("level", details["level"]))
      add("field.durationHours", typeof details["durationHours"] === "number" ? t("value.hours", { n: details["durationHours"] }) : undefined)
      add("field.price", money(details["price"]))
      add("field.startsOn", text("startsOn") === undefined ? undefined : texts.date(text("startsOn")!))
      add("field.location", text("location"))
      add("field.outcomes", strings(details["outcomes"]))
      add("field.certificate", typeof details["certificate"] === "boolean" ? t(details["certificate"] ? "value.yes" : "value.no") : undefined)
      break
  }
  return facts
}
