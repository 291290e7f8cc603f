import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

// The layout's rules, read from the sources themselves (docs/layout.md): no import cycles, one
// writer per table, every row decoded.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const domainSrc = join(root, "packages/domain/src")

const sourcesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sourcesUnder(path)
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

const packageSources = readdirSync(join(root, "packages")).flatMap((name) => {
  try {
    return sourcesUnder(join(root, "packages", name, "src"))
  } catch {
    return []
  }
})

const relativeImports = (file: string): Array<string> =>
  ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => resolve(dirname(file), name).replace(/\.js$/, ".ts"))
    .map((path) => (packageSources.includes(path) ? path : path.replace(/\.ts$/, ".tsx")))
    .filter((path) => packageSources.includes(path))

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
const cycles = (graph: Map<string, Array<string>>): Array<Array<string>> => {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (node: string) => {
    indices.set(node, index)
    low.set(node, index)
    index++
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!))
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.map((file) => relative(root, file)).sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node)
  return found
}

/** Bulk seeders of an empty database (`birzha demo`): they write many tables at once by design. */
const seeders = ["demo/DemoAccounts.ts", "demo/DemoData.ts", "demo/DemoLearning.ts", "demo/DemoRelations.ts"]

const domainFiles = sourcesUnder(domainSrc).filter((file) => !file.includes("/store/migrations/"))
const strip = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

/** The tables each file inserts into, updates or deletes from. */
const writesOf = (file: string): Set<string> => {
  const text = strip(readFileSync(file, "utf8"))
  const tables = new Set<string>()
  for (const match of text.matchAll(/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)\b/g)) tables.add(match[1]!)
  return tables
}

const castsOf = (file: string): number => (strip(readFileSync(file, "utf8")).match(/\bsql<[^>]/g) ?? []).length

const domainPath = (file: string) => relative(domainSrc, file)

describe("the layout", () => {
  it("has no import cycles between source files", () => {
    const graph = new Map(packageSources.map((file) => [file, relativeImports(file)]))
    expect(cycles(graph)).toEqual([])
  })

  it("finds a cycle when there is one (the check itself)", () => {
    expect(cycles(new Map([["/a", ["/b"]], ["/b", ["/a"]], ["/c", ["/a"]]]))).toEqual([[relative(root, "/a"), relative(root, "/b")]])
  })

  it("writes each table from one module only (its repository)", () => {
    const writers = new Map<string, Set<string>>()
    for (const file of domainFiles) {
      if (seeders.includes(domainPath(file))) continue
      for (const table of writesOf(file)) writers.set(table, new Set([...(writers.get(table) ?? []), domainPath(file)]))
    }
    const shared = Object.fromEntries(
      [...writers].filter(([, files]) => files.size > 1).sort(([a], [b]) => a.localeCompare(b)).map(([table, files]) => [table, [...files].sort()])
    )
    expect(shared).toEqual({})
  })

  it("decodes every row it reads with a Schema: no sql<Row> cast", () => {
    const casts = Object.fromEntries(
      domainFiles.map((file) => [domainPath(file), castsOf(file)] as const).filter(([, count]) => count > 0).sort(([a], [b]) => a.localeCompare(b))
    )
    expect(casts).toEqual({})
  })
})
