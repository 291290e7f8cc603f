import type { CatalogEntry } from "@birzha/domain"

/**
 * Path templates of the catalog compiled once, so an unmatched request can be told apart:
 * a known path with another method is 405 (with `Allow`), anything else 404.
 */
export interface RouteTable {
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

export const makeRouteTable = (
  catalog: ReadonlyArray<Pick<CatalogEntry, "method" | "path">>,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }> = []
): RouteTable => {
  const compiled = [...catalog, ...extra].map(({ method, path }) => ({
    method,
    pattern: new RegExp(
      "^" + path.split(/(\{[^}]+\})/).map((part) => part.startsWith("{") ? "[^/]+" : escape(part)).join("") + "/?$"
    )
  }))
  return {
    allowedMethods: (path) => {
      const methods = new Set<string>()
      for (const route of compiled) if (route.pattern.test(path)) methods.add(route.method)
      return [...methods].sort()
    }
  }
}
