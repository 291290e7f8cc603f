import { Schema } from "effect"
import { maxChars, minChars, strict } from "../kernel/Common.js"

/**
 * The draft data of the media kinds (service, portfolio, article, vacancy, resume, training): the
 * spec's title, category, description, content document version 1 and files, plus one optional
 * object of kind-specific fields. Bounds are ours where the spec shows none (docs/decisions.md).
 */

const text = (max: number) => Schema.String.pipe(maxChars(max))
const line = (min: number, max: number) => Schema.String.pipe(minChars(min), maxChars(max))
const list = <A, I, R>(item: Schema.Schema<A, I, R>, max: number) => Schema.Array(item).pipe(Schema.maxItems(max))

const HttpsUrl = Schema.String.pipe(
  maxChars(2048),
  Schema.filter((value) => URL.canParse(value) && new URL(value).protocol === "https:", {
    message: () => "expected an https:// URL of at most 2048 characters"
  })
).annotations({ jsonSchema: { type: "string", format: "uri", maxLength: 2048, pattern: "^https://" } })

const Percent = Schema.Number.pipe(Schema.between(0, 100))

export const ContentPreview = Schema.Struct({
  kind: Schema.optional(Schema.Literal("image", "text")),
  assetIds: Schema.optional(list(Schema.UUID, 10)),
  title: Schema.optional(text(160)),
  summary: Schema.optional(text(500)),
  fit: Schema.optional(Schema.Literal("contain", "cover")),
  focalPoint: Schema.optional(Schema.Struct({ x: Percent, y: Percent }).annotations(strict))
}).annotations({ identifier: "ContentPreview", ...strict })

export const ContentArticle = Schema.Struct({
  lead: Schema.optional(text(1000)),
  coverId: Schema.optional(Schema.UUID),
  // Spec: a string that may be empty ("7", "7 мин", ""): free text, bounded.
  readingMinutes: Schema.optional(text(40)),
  tags: Schema.optional(list(line(1, 40), 20)),
  sources: Schema.optional(list(Schema.Struct({ title: line(1, 240), url: Schema.optional(HttpsUrl) }).annotations(strict), 50))
}).annotations({ identifier: "ContentArticle", ...strict })

export const ContentAsset = Schema.Struct({
  id: Schema.UUID,
  kind: Schema.Literal("image"),
  caption: Schema.optional(text(500)),
  alt: Schema.optional(text(500))
}).annotations({ identifier: "ContentAsset", ...strict })

export const BlockType = Schema.Literal("richtext", "image", "gallery", "list", "code", "quote", "heading")

export const ContentBlock = Schema.Struct({
  id: line(1, 100),
  type: BlockType,
  title: Schema.optional(text(240)),
  lead: Schema.optional(text(1000)),
  text: Schema.optional(text(20000)),
  mediaIds: Schema.optional(list(Schema.UUID, 30)),
  items: Schema.optional(list(text(1000), 100)),
  layout: Schema.optional(Schema.Literal("wide", "normal")),
  tone: Schema.optional(Schema.Literal("plain", "accent")),
  author: Schema.optional(text(160)),
  role: Schema.optional(text(160)),
  language: Schema.optional(line(1, 40))
}).pipe(
  Schema.filter((block) => {
    const media = block.mediaIds?.length ?? 0
    if (block.type === "image" && media !== 1) return "an image block holds exactly one asset id in mediaIds"
    if (block.type === "gallery" && media < 1) return "a gallery block holds one or more asset ids in mediaIds"
    if (block.type === "list" && (block.items?.length ?? 0) < 1) return "a list block holds one or more items"
    return true
  })
).annotations({ identifier: "ContentBlock", ...strict })

/**
 * The content document, version 1. Every asset referenced by preview, cover or blocks must be
 * listed in `assets` (and each asset is checked to be a ready file of the same profile by save).
 */
export const Content = Schema.Struct({
  version: Schema.Literal(1),
  preview: Schema.optional(ContentPreview),
  article: Schema.optional(ContentArticle),
  // Kept absent when the client leaves them out: whether they are present decides the catalog's
  // projection of `portfolio` (spec CatalogPublication), so a default would change what was sent.
  assets: Schema.optional(list(ContentAsset, 50)),
  blocks: Schema.optional(list(ContentBlock, 200))
}).pipe(
  Schema.filter((content) => {
    const listed = new Set((content.assets ?? []).map((asset) => asset.id))
    const referenced = [
      ...(content.preview?.assetIds ?? []),
      ...(content.article?.coverId === undefined ? [] : [content.article.coverId]),
      ...(content.blocks ?? []).flatMap((block) => block.mediaIds ?? [])
    ]
    const missing = referenced.find((id) => !listed.has(id))
    return missing === undefined ? true : `asset ${missing} is referenced but not listed in content.assets`
  })
).annotations({ identifier: "Content", ...strict })
export type Content = typeof Content.Type

const Currency = Schema.Literal("RUB", "USD", "EUR")
const Workplace = Schema.Literal("remote", "onsite", "hybrid")
const EmploymentType = Schema.Literal("full_time", "part_time", "project", "internship", "temporary")
const Money = Schema.Int.pipe(Schema.between(0, 1_000_000_000))
const Skills = list(line(1, 80), 30)

/** Services (after Kwork, Fiverr gigs): a fixed or hourly price, delivery time, what is included. */
export const ServiceDetails = Schema.Struct({
  price: Schema.optional(Money),
  currency: Schema.optionalWith(Currency, { default: () => "RUB" as const }),
  priceUnit: Schema.optionalWith(Schema.Literal("fixed", "hour", "day", "month"), { default: () => "fixed" as const }),
  deliveryDays: Schema.optional(Schema.Int.pipe(Schema.between(1, 365))),
  revisions: Schema.optional(Schema.Int.pipe(Schema.between(0, 100))),
  includes: Schema.optional(list(line(1, 240), 20)),
  skills: Schema.optional(Skills)
}).annotations({ identifier: "ServiceDetails", ...strict })

/** Portfolio items (after Behance, Dribbble): the project's facts; legacy assets and blocks kept for old clients. */
export const PortfolioDetails = Schema.Struct({
  client: Schema.optional(text(160)),
  year: Schema.optional(Schema.Int.pipe(Schema.between(1950, 2100))),
  role: Schema.optional(text(160)),
  projectUrl: Schema.optional(HttpsUrl),
  tools: Schema.optional(Skills),
  assets: Schema.optionalWith(list(ContentAsset, 50), { default: () => [] }),
  blocks: Schema.optionalWith(list(ContentBlock, 200), { default: () => [] })
}).annotations({ identifier: "PortfolioDetails", ...strict })

/** Vacancies (after hh.ru, LinkedIn Jobs): salary fork, employment, workplace, experience. */
export const VacancyDetails = Schema.Struct({
  company: Schema.optional(text(160)),
  salaryFrom: Schema.optional(Money),
  salaryTo: Schema.optional(Money),
  currency: Schema.optionalWith(Currency, { default: () => "RUB" as const }),
  salaryGross: Schema.optional(Schema.Boolean),
  employment: Schema.optional(EmploymentType),
  workplace: Schema.optional(Workplace),
  location: Schema.optional(text(160)),
  experience: Schema.optional(Schema.Literal("none", "1-3", "3-6", "6+")),
  skills: Schema.optional(Skills),
  responsibilities: Schema.optional(list(line(1, 500), 30)),
  requirements: Schema.optional(list(line(1, 500), 30))
}).pipe(
  Schema.filter((v) =>
    v.salaryFrom === undefined || v.salaryTo === undefined || v.salaryFrom <= v.salaryTo ? true : "salaryFrom is above salaryTo"
  )
).annotations({ identifier: "VacancyDetails", ...strict })

/** Resumes (after hh.ru): the wanted position, expectations, experience and education. */
export const ResumeDetails = Schema.Struct({
  position: Schema.optional(text(160)),
  salary: Schema.optional(Money),
  currency: Schema.optionalWith(Currency, { default: () => "RUB" as const }),
  employment: Schema.optional(list(EmploymentType, 5)),
  workplace: Schema.optional(list(Workplace, 3)),
  location: Schema.optional(text(160)),
  experienceYears: Schema.optional(Schema.Int.pipe(Schema.between(0, 70))),
  skills: Schema.optional(Skills),
  experience: Schema.optional(list(Schema.Struct({
    company: line(1, 160),
    position: line(1, 160),
    from: Schema.String.pipe(Schema.pattern(/^\d{4}-(0[1-9]|1[0-2])$/)),
    to: Schema.optional(Schema.String.pipe(Schema.pattern(/^\d{4}-(0[1-9]|1[0-2])$/))),
    description: Schema.optional(text(2000))
  }).annotations(strict), 30)),
  education: Schema.optional(list(Schema.Struct({
    institution: line(1, 240),
    degree: Schema.optional(text(160)),
    year: Schema.optional(Schema.Int.pipe(Schema.between(1950, 2100)))
  }).annotations(strict), 10))
}).annotations({ identifier: "ResumeDetails", ...strict })

/** Trainings (after Stepik, Coursera listings): format, level, duration, price, schedule. */
export const TrainingDetails = Schema.Struct({
  format: Schema.optional(Schema.Literal("online", "offline", "hybrid")),
  level: Schema.optional(Schema.Literal("beginner", "intermediate", "advanced")),
  durationHours: Schema.optional(Schema.Int.pipe(Schema.between(1, 10000))),
  price: Schema.optional(Money),
  currency: Schema.optionalWith(Currency, { default: () => "RUB" as const }),
  startsOn: Schema.optional(Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/))),
  location: Schema.optional(text(160)),
  outcomes: Schema.optional(list(line(1, 240), 20)),
  certificate: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "TrainingDetails", ...strict })

const common = {
  title: Schema.String.pipe(minChars(3), maxChars(160)),
  category: Schema.optional(text(80)),
  description: Schema.optionalWith(text(20000), { default: () => "" }),
  content: Schema.optional(Content),
  /** Attachments: uuids of ready files (purpose publication_file) of the same profile. */
  files: Schema.optionalWith(list(Schema.UUID, 10), { default: () => [] })
}

export const ServiceData = Schema.Struct({ ...common, service: Schema.optional(ServiceDetails) })
  .annotations({ identifier: "ServiceData", ...strict })
export const PortfolioData = Schema.Struct({ ...common, portfolio: Schema.optional(PortfolioDetails) })
  .annotations({ identifier: "PortfolioData", ...strict })
export const ArticleData = Schema.Struct(common).annotations({ identifier: "ArticleData", ...strict })
export const VacancyData = Schema.Struct({ ...common, vacancy: Schema.optional(VacancyDetails) })
  .annotations({ identifier: "VacancyData", ...strict })
export const ResumeData = Schema.Struct({ ...common, resume: Schema.optional(ResumeDetails) })
  .annotations({ identifier: "ResumeData", ...strict })
export const TrainingData = Schema.Struct({ ...common, training: Schema.optional(TrainingDetails) })
  .annotations({ identifier: "TrainingData", ...strict })

/** What save checks beyond the schema: every file and asset a media draft references. */
export const referencedFiles = (data: {
  readonly content?: Content | undefined
  readonly files: ReadonlyArray<string>
  readonly portfolio?: { readonly assets: ReadonlyArray<{ readonly id: string }> } | undefined
}): { readonly assets: ReadonlyArray<string>; readonly files: ReadonlyArray<string> } => ({
  assets: [...new Set([...(data.content?.assets ?? []), ...(data.portfolio?.assets ?? [])].map((asset) => asset.id))],
  files: [...new Set(data.files)]
})
