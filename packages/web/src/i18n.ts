export type Language = "ru" | "en"
export type MessageKey = keyof typeof import("./translations/ru.json", { with: { type: "json" } })
/** One language's messages. */
export type Catalog = Readonly<Record<MessageKey, string>>

/**
 * The languages' messages known to this process, given before `textsOf` is called: the server's
 * renderer (and a test) gives both (entry-server.tsx); the browser loads only its page's language,
 * as a chunk of its own, before hydrating (entry-client.tsx), so a page does not carry the other
 * language's text (the two catalogs, ~300 KB of JSON, were most of the entry chunk).
 */
const catalogs: Partial<Record<Language, Catalog>> = {}

export const provideCatalogs = (given: Readonly<Partial<Record<Language, Catalog>>>): void => {
  Object.assign(catalogs, given)
}

/** `?lang=` first, then the browser's preference; Russian by default. */
export const languageOf = (search: URLSearchParams, acceptLanguage: string | undefined): Language => {
  const asked = search.get("lang")
  if (asked === "ru" || asked === "en") return asked
  const preferred = (acceptLanguage ?? "").split(",").map((part) => part.trim().slice(0, 2).toLowerCase())
  const enAt = preferred.indexOf("en")
  const ruAt = preferred.indexOf("ru")
  return enAt >= 0 && (ruAt < 0 || enAt < ruAt) ? "en" : "ru"
}

const locales: Record<Language, string> = { ru: "ru-RU", en: "en-GB" }

// `{n, plural, one {# day} other {# days}}`: the one ICU form the catalogs use, by Intl.PluralRules.
const plural = /\{(\w+), plural,((?:\s*\w+ \{[^{}]*\})+)\s*\}/g
const pluralForm = /(\w+) \{([^{}]*)\}/g

export interface Texts {
  readonly language: Language
  readonly t: (key: MessageKey, values?: Readonly<Record<string, string | number>>) => string
  readonly number: (value: number) => string
  readonly money: (amount: number, currency: string) => string
  /** A date (ISO string or `YYYY-MM-DD`) as the language writes it, in UTC so server and browser agree. */
  readonly date: (value: string) => string
  /** A month (`YYYY-MM`, or any date) as the language names it with its year, in UTC. */
  readonly month: (value: string) => string
}

const cache = new Map<Language, Texts>()

/** The messages and formats of one language (one instance per language: the formatters are costly to make). */
export const textsOf = (language: Language): Texts => {
  const known = cache.get(language)
  if (known !== undefined) return known
  const catalog = catalogs[language]
  if (catalog === undefined) throw new Error(`The ${language} messages are not loaded (provideCatalogs first)`)
  const locale = locales[language]
  const rules = new Intl.PluralRules(locale)
  const numbers = new Intl.NumberFormat(locale)
  const dates = new Intl.DateTimeFormat(locale, { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" })
  const months = new Intl.DateTimeFormat(locale, { month: "long", year: "numeric", timeZone: "UTC" })
  const moneys = new Map<string, Intl.NumberFormat>()
  const texts: Texts = {
    language,
    t: (key, values = {}) =>
      (catalog[key] ?? key)
        .replace(plural, (_, name: string, forms: string) => {
          const n = Number(values[name] ?? 0)
          const options = new Map([...forms.matchAll(pluralForm)].map((m) => [m[1]!, m[2]!]))
          return (options.get(rules.select(n)) ?? options.get("other") ?? "").replace(/#/g, numbers.format(n))
        })
        .replace(/\{(\w+)\}/g, (whole, name: string) => {
          const value = values[name]
          return value === undefined ? whole : typeof value === "number" ? numbers.format(value) : value
        }),
    number: (value) => numbers.format(value),
    money: (amount, currency) => {
      let format = moneys.get(currency)
      if (format === undefined) {
        format = new Intl.NumberFormat(locale, { style: "currency", currency, maximumFractionDigits: 0 })
        moneys.set(currency, format)
      }
      return format.format(amount)
    },
    date: (value) => {
      const parsed = new Date(value)
      return Number.isNaN(parsed.getTime()) ? value : dates.format(parsed)
    },
    month: (value) => {
      const parsed = new Date(/^\d{4}-\d{2}$/.test(value) ? `${value}-01T00:00:00Z` : value)
      return Number.isNaN(parsed.getTime()) ? value : months.format(parsed)
    }
  }
  cache.set(language, texts)
  return texts
}
