import type { MessageKey, Texts } from "../../i18n.js"

/**
 * What a person picks instead of raw scopes: a preset said in words, and the grantable scopes
 * (scopes.list) grouped by area, each with a sentence (`keys.scope.<name>`). The server stays the
 * judge of what a key may hold (packages/domain/src/keys/Scopes.ts); a preset only ticks boxes.
 */
export type PresetId = "read" | "tasks" | "agent" | "integrations" | "custom"

export interface Preset {
  readonly id: PresetId
  readonly scopes: ReadonlyArray<string>
  readonly httpEnabled: boolean
  readonly mcpEnabled: boolean
}

const publicationKinds = ["tasks", "services", "portfolio", "articles", "jobs", "resumes"] as const

export const presets: ReadonlyArray<Preset> = [
  { id: "read", scopes: ["profiles:read", ...publicationKinds.map((kind) => `${kind}:read`)], httpEnabled: true, mcpEnabled: false },
  {
    id: "tasks",
    scopes: ["profiles:read", "tasks:read", "tasks:write", "tasks:submit", "files:read", "files:write", "responses:read"],
    httpEnabled: true,
    mcpEnabled: false
  },
  {
    id: "agent",
    scopes: [
      "profiles:read", "tasks:read", "tasks:write", "tasks:submit", "services:read", "services:write", "services:submit",
      "responses:read", "responses:write", "offers:read", "offers:write", "deals:read", "deals:write",
      "threads:read", "threads:write", "files:read", "files:write", "events:read"
    ],
    httpEnabled: true,
    mcpEnabled: true
  },
  {
    id: "integrations",
    scopes: ["profiles:read", "events:read", "webhooks:read", "webhooks:write", "automations:read", "automations:write"],
    httpEnabled: true,
    mcpEnabled: false
  },
  { id: "custom", scopes: [], httpEnabled: true, mcpEnabled: false }
]

/** A preset's scopes that the service grants to keys today (a preset never asks for more). */
export const presetScopes = (preset: Preset, grantable: ReadonlyArray<string>) => preset.scopes.filter((scope) => grantable.includes(scope))

const areas: ReadonlyArray<{ readonly id: string; readonly prefixes: ReadonlyArray<string> }> = [
  { id: "profile", prefixes: ["profiles:", "account:"] },
  { id: "publications", prefixes: publicationKinds.map((kind) => `${kind}:`) },
  { id: "work", prefixes: ["responses:", "offers:", "deals:", "threads:", "reviews:", "comments:", "complaints:", "favorites:"] },
  { id: "learning", prefixes: ["learning:"] },
  { id: "files", prefixes: ["files:"] },
  { id: "integrations", prefixes: ["events:", "webhooks:", "automations:"] }
]

/** The scopes by area, in the areas' order; a scope of no known area lands in "other" rather than vanishing. */
export const scopeGroups = (scopes: ReadonlyArray<string>): ReadonlyArray<{ readonly id: string; readonly scopes: ReadonlyArray<string> }> => {
  const areaOf = (scope: string) => areas.find((area) => area.prefixes.some((prefix) => scope.startsWith(prefix)))?.id ?? "other"
  return [...areas.map((area) => area.id), "other"]
    .map((id) => ({ id, scopes: scopes.filter((scope) => areaOf(scope) === id) }))
    .filter((group) => group.scopes.length > 0)
}

/** A scope's sentence in the page's language; a scope the translations do not know yet is shown by its name. */
export const scopeSentence = (texts: Texts, scope: string) => {
  const key = `keys.scope.${scope}` as MessageKey
  const said = texts.t(key)
  return said === key ? scope : said
}

export const groupLabel = (texts: Texts, id: string) => texts.t(`keys.group.${id}` as MessageKey)

/** The preset whose scopes are exactly these (and HTTP/MCP as it sets them), or "custom". */
export const presetOf = (scopes: ReadonlyArray<string>, grantable: ReadonlyArray<string>): PresetId => {
  const chosen = [...scopes].sort().join(" ")
  return presets.find((preset) => preset.id !== "custom" && [...presetScopes(preset, grantable)].sort().join(" ") === chosen)?.id ?? "custom"
}
