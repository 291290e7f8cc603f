import type { CatalogEntry } from "@birzha/domain"

/**
 * Path templates of the catalog compiled once, so the host's middleware can see which operation
 * a request is for before the router runs: to enforce the operation's policy (same origin),
 * to pick its error for a schema violation, and to tell 405 (known path, other method) from 404.
 */
export interface RouteTable {
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
  readonly operation: (method: string, path: string) => CatalogEntry | undefined
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const compile = (path: string) =>
  new RegExp("^" + path.split(/(\{[^}]+\})/).map((part) => part.startsWith("{") ? "[^/]+" : escape(part)).join("") + "/?$")

export const makeRouteTable = (
  catalog: ReadonlyArray<CatalogEntry>,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }> = []
): RouteTable => {
  const operations = catalog.map((entry) => ({ entry, method: entry.method as string, pattern: compile(entry.path) }))
  const others = extra.map(({ method, path }) => ({ method, pattern: compile(path) }))
  return {
    allowedMethods: (path) => {
      const methods = new Set<string>()
      for (const route of [...operations, ...others]) if (route.pattern.test(path)) methods.add(route.method)
      return [...methods].sort()
    },
    operation: (method, path) => operations.find((route) => route.method === method && route.pattern.test(path))?.entry
  }
}
