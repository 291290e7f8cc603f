import { catalog } from "../api/BirzhaApi.js"
import type { CatalogEntry } from "../kernel/Operation.js"
import type { ScopeInfo } from "./Key.js"

/**
 * Scope names no key may ever hold, whatever the catalog says: administrative areas. A second
 * fence behind `sessionOnly` (an administrative operation declared without it still opens to no key).
 */
export const reservedScopePrefixes: ReadonlyArray<string> = ["moderation:", "keys:", "admin:"]

/** What the personal key may do until its owner chooses otherwise (spec: read of the own profile). */
export const personalKeyDefaultScopes: ReadonlyArray<string> = ["profiles:read"]

/**
 * Every scope the catalog names, with its operations, sorted. A scope is grantable to keys when a
 * non-session-only operation names it and it is not reserved; so choosing scopes can only open the
 * key owner's own records through operations a key may call.
 */
export const scopeCatalogOf = (entries: ReadonlyArray<CatalogEntry>): ReadonlyArray<ScopeInfo> => {
  const byScope = new Map<string, { operations: Array<string>; grantable: boolean }>()
  for (const entry of entries) {
    for (const scope of entry.scopes) {
      const info = byScope.get(scope) ?? { operations: [], grantable: false }
      info.operations.push(entry.id)
      if (entry.access === "authenticated" && !entry.sessionOnly) info.grantable = true
      byScope.set(scope, info)
    }
  }
  return [...byScope.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, info]) => ({
      name,
      grantable: info.grantable && !reservedScopePrefixes.some((prefix) => name.startsWith(prefix)),
      operations: info.operations
    }))
}

/** The service's scopes, derived once from the catalog. */
export const scopeCatalog: ReadonlyArray<ScopeInfo> = scopeCatalogOf(catalog)

/** Every scope name of the catalog: what a session holds. */
export const allScopes: ReadonlyArray<string> = scopeCatalog.map((scope) => scope.name)

/** The scopes a key may be given. */
export const grantableScopes: ReadonlyArray<string> = scopeCatalog.filter((scope) => scope.grantable).map((scope) => scope.name)

const grantable = new Set(grantableScopes)
export const isGrantableScope = (scope: string): boolean => grantable.has(scope)
