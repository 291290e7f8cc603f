import { catalog, scopeCatalog } from "@birzha/domain"
import { describe, expect, it } from "vitest"
import { factsOf, keyNameOf, operationSummary, profileTypeLabel } from "./components/format.js"
import { presets, scopeGroups, scopeSentence } from "./pages/IntegrationsPage/keyPresets.js"
import { languageOf, provideCatalogs, textsOf } from "./i18n.js"
import en from "./translations/en.json" with { type: "json" }
import ru from "./translations/ru.json" with { type: "json" }

provideCatalogs({ ru, en })

describe("the translations", () => {
  it("have the same keys in both languages, and every placeholder of one in the other", () => {
    expect(Object.keys(en).sort()).toEqual(Object.keys(ru).sort())
    const placeholders = (message: string) => [...message.matchAll(/\{(\w+)[,}]/g)].map((m) => m[1]).sort()
    for (const key of Object.keys(ru) as Array<keyof typeof ru>) expect(placeholders(en[key]), key).toEqual(placeholders(ru[key]))
  })

  it("pick the plural form and format numbers, money and dates for the language", () => {
    const r = textsOf("ru")
    const e = textsOf("en")
    expect([1, 2, 5, 21].map((n) => r.t("value.days", { n }))).toEqual(["1 день", "2 дня", "5 дней", "21 день"])
    expect([1, 2].map((n) => e.t("value.days", { n }))).toEqual(["1 day", "2 days"])
    expect(r.money(30000, "RUB").replace(/\s/g, " ")).toBe("30 000 ₽")
    expect(e.money(30000, "USD")).toBe("US$30,000")
    expect(r.date("2026-11-23T10:00:00Z")).toBe("23 ноября 2026 г.")
    expect(e.date("2026-11-23T10:00:00Z")).toBe("23 November 2026")
  })

  it("choose the language by ?lang=, then the browser's preference, Russian by default", () => {
    expect(languageOf(new URLSearchParams("lang=en"), "ru")).toBe("en")
    expect(languageOf(new URLSearchParams(""), "en-GB,en;q=0.9,ru;q=0.8")).toBe("en")
    expect(languageOf(new URLSearchParams(""), "ru-RU,en;q=0.5")).toBe("ru")
    expect(languageOf(new URLSearchParams("lang=de"), undefined)).toBe("ru")
  })
})

describe("what keys and approvals say", () => {
  it("every operation an approval page can show (approval-flagged, or widened into one by an input flag) has its summary in both languages", () => {
    const approval = new Set(catalog.filter((entry) => entry.approval).map((entry) => entry.id))
    const flagged = catalog.filter((entry) => entry.approval || Object.values(entry.widenedBy).some((id) => approval.has(id)))
    expect(flagged.length).toBeGreaterThan(0)
    for (const entry of flagged) {
      const key = `approval.summary.${entry.id}`
      expect(en[key as keyof typeof en], key).toBeTypeOf("string")
      expect(ru[key as keyof typeof ru], key).toBeTypeOf("string")
      expect(operationSummary(textsOf("ru"), entry.id, entry.summary ?? "")).toMatch(/^[А-ЯЁ]/u)
      expect(operationSummary(textsOf("ru"), entry.id, entry.summary ?? "")).not.toBe(entry.summary)
    }
    // The translations name no operation the catalog lacks.
    const ids = new Set(catalog.map((entry) => entry.id))
    expect(Object.keys(en).filter((key) => key.startsWith("approval.summary.") && !ids.has(key.slice("approval.summary.".length)))).toEqual([])
  })

  it("every scope a key may be given has a sentence in both languages, an area, and presets ask only for grantable scopes", () => {
    const grantable = scopeCatalog.filter((scope) => scope.grantable).map((scope) => scope.name)
    for (const scope of grantable) {
      for (const language of ["en", "ru"] as const) expect(scopeSentence(textsOf(language), scope), `${language} ${scope}`).not.toBe(scope)
    }
    const grouped = scopeGroups(grantable)
    expect(grouped.flatMap((group) => group.scopes).sort()).toEqual([...grantable].sort())
    expect(grouped.map((group) => group.id)).not.toContain("other")
    for (const preset of presets) for (const scope of preset.scopes) expect(grantable, `${preset.id} ${scope}`).toContain(scope)
    expect(keyNameOf(textsOf("ru"), "Personal key")).toBe("Личный ключ")
    expect(keyNameOf(textsOf("ru"), "CI bot")).toBe("CI bot")
  })
})

describe("a publication's details", () => {
  const details = {
    task: { budget: "до 30 000 ₽", deadline: "две недели" },
    service: { price: 7300, currency: "RUB", priceUnit: "hour", deliveryDays: 20, revisions: 4, includes: ["Бриф"], skills: ["SEO"] },
    portfolio: { client: "Кофейня", year: 2024, role: "Дизайнер", projectUrl: "https://example.com", tools: ["Figma"] },
    vacancy: { company: "ООО «Птица»", salaryFrom: 100000, salaryTo: 150000, currency: "RUB", employment: "full_time", workplace: "remote", experience: "1-3", requirements: ["SQL"] },
    resume: { position: "Аналитик", salary: 120000, currency: "RUB", employment: ["part_time"], workplace: ["hybrid"], experienceYears: 3 },
    training: { format: "online", level: "beginner", durationHours: 12, price: 5000, currency: "RUB", startsOn: "2026-12-01", certificate: true }
  } as const

  it("are labelled and their values written in the page's language, never as raw field names or codes", () => {
    for (const language of ["ru", "en"] as const) {
      const texts = textsOf(language)
      for (const [kind, data] of Object.entries(details)) {
        const facts = factsOf(texts, kind, data)
        expect(facts.length, `${kind} ${language}`).toBe(Object.keys(data).filter((key) => key !== "currency" && key !== "priceUnit").length - (kind === "vacancy" ? 1 : 0))
        const shown = facts.flatMap((fact) => [texts.t(fact.label), ...(typeof fact.value === "string" ? [fact.value] : fact.value)]).join(" | ")
        expect(shown, `${kind} ${language}`).not.toMatch(/\b(budget|deadline|priceUnit|deliveryDays|salaryFrom|experienceYears|durationHours|full_time|part_time|field\.|value\.)/)
        // The codes that are English words are written in Russian on a Russian page.
        // (Values the publication wrote itself, a URL, a tool's name, are shown as written.)
        const written = new Set(Object.values(data).flatMap((value) => Array.isArray(value) ? value : [String(value)]))
        const words = facts.flatMap((fact) => [texts.t(fact.label), ...(typeof fact.value === "string" ? [fact.value] : fact.value)]).filter((text) => !written.has(text))
        if (language === "ru") expect(words.join(" | "), kind).not.toMatch(/[A-Za-z_]{4,}/u)
      }
    }
    const service = factsOf(textsOf("en"), "service", details.service)
    expect(service[0]!.label).toBe("field.price")
    expect(String(service[0]!.value).replace(/\s/g, " ")).toBe("RUB 7,300 per hour")
    expect(factsOf(textsOf("ru"), "vacancy", details.vacancy)[1]!.value).toMatch(/^от 100\s000\s₽ до 150\s000\s₽$/)
    expect(profileTypeLabel(textsOf("en"), "Самозанятый")).toBe("Self-employed")
  })
})
