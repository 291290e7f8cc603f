import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { areaDocs, declaredTransitionTables, directivesOf, machines, regenerate, root } from "./docs-state-machines.mjs"

// The TypeScript sources load as the tests load them (vitest resolves the `source` condition).
const load = (path) => import(join(root, path))
const directives = areaDocs().flatMap((file) => directivesOf(readFileSync(file, "utf8")))
const argumentsOf = (name) => directives.filter((d) => d.startsWith(`${name} `)).flatMap((d) => d.slice(name.length + 1).split(","))

describe("docs/areas", () => {
  it.each(areaDocs().map((file) => relative(root, file)))("%s holds the code's current tables (else run node scripts/docs-state-machines.mjs)", async (file) => {
    const text = readFileSync(join(root, file), "utf8")
    expect(await regenerate(text, load)).toBe(text)
  })

  it("documents every transition table of the domain", () => {
    const known = Object.values(machines).map((m) => `${m.module}#${m.export}`)
    const declared = declaredTransitionTables().map((t) => `${t.module}#${t.export}`)
    expect(declared.filter((t) => !known.includes(t))).toEqual([])
    expect(Object.keys(machines).filter((name) => !argumentsOf("machine").includes(name))).toEqual([])
  })

  it("lists every operation group and every event's record kind", async () => {
    const { catalog } = await load("packages/domain/src/api/BirzhaApi.ts")
    const { eventCatalogOf } = await load("packages/domain/src/events/EventCatalog.ts")
    const groups = [...new Set(catalog.map((entry) => entry.group))]
    expect(groups.filter((group) => group !== "health" && !argumentsOf("operations").includes(group))).toEqual([])
    const kinds = [...new Set(eventCatalogOf(catalog).types.map((entry) => entry.aggregateKind))]
    expect(kinds.filter((kind) => !argumentsOf("events").includes(kind))).toEqual([])
  })

  it("fails on a directive it does not know, so a typo cannot leave a part unwritten", async () => {
    await expect(regenerate("<!-- generated: machine nothing -->\n<!-- end generated -->", load)).rejects.toThrow(/no machine nothing/)
    await expect(regenerate("<!-- generated: tables -->\n<!-- end generated -->", load)).rejects.toThrow(/unknown directive/)
  })
})
