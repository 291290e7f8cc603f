import { catalog, type CatalogEntry } from "@birzha/domain"
import { Option, Schema, SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
import {
  defaultOperations,
  discoveryToolName,
  entryOfTool,
  serverFixed,
  toolEntries,
  toolNameOf,
  toolNamePattern,
  toolOf
} from "./McpTools.js"

/** The fields an operation's declared input schemas name (path, query, body), from the schemas themselves. */
const declaredFields = (entry: CatalogEntry): ReadonlyArray<string> =>
  [entry.schemas.path, entry.schemas.urlParams, entry.schemas.payload].flatMap((part) =>
    Option.match(part, {
      onNone: () => [],
      onSome: (ast) => {
        const encoded = SchemaAST.encodedAST(Schema.make(ast).ast)
        try {
          return SchemaAST.getPropertySignatures(encoded).map((signature) => String(signature.name))
        } catch {
          return [] // a body of several shapes (a union) has no one list of fields
        }
      }
    })
  )

/** What the operation reads: its declared `UsedFields`, or every declared field; an approval tool leaves out what the server fixes. */
const readFields = (entry: CatalogEntry) =>
  (entry.usedFields ?? declaredFields(entry)).filter((name) => !(entry.approval && serverFixed.includes(name)))

describe("MCP tool names", () => {
  it("are valid function names of the model APIs, one per operation, and read back to their operation (the mapping is injective and reversible)", () => {
    const names = toolEntries.map((entry) => toolNameOf(entry.id))
    for (const name of names) expect(name, name).toMatch(toolNamePattern)
    expect(new Set(names).size).toBe(toolEntries.length)
    for (const entry of toolEntries) expect(entryOfTool(toolNameOf(entry.id))?.id, entry.id).toBe(entry.id)
    expect(names).not.toContain(discoveryToolName)
    // One style: snake case, whatever the id's style.
    expect(toolNameOf("tasks.save")).toBe("tasks_save")
    expect(toolNameOf("getMyCapabilities")).toBe("get_my_capabilities")
    expect(toolNameOf("profiles.get_own")).toBe("profiles_get_own")
    expect(toolNameOf("learning.enrollments.pause")).toBe("learning_enrollments_pause")
    for (const name of names) expect(name, name).toMatch(/^[a-z0-9_]+$/)
    // A name that is no operation's reads back to nothing.
    expect(entryOfTool("tasks.save")).toBeUndefined()
  })

  it("every operation's tool builds: an object input schema, and an object output schema where it declares one", () => {
    for (const entry of toolEntries) {
      const tool = toolOf(entry)
      expect(tool.inputSchema.type, entry.id).toBe("object")
      if (tool.outputSchema !== undefined) expect(tool.outputSchema.type, entry.id).toBe("object")
    }
    expect(toolEntries.filter((entry) => toolOf(entry).outputSchema !== undefined).length).toBeGreaterThan(toolEntries.length / 2)
  })

  it("leave out the health probes: they are for load balancers", () => {
    const health = catalog.filter((entry) => entry.group === "health")
    expect(health.length).toBeGreaterThan(0)
    for (const entry of health) expect(entryOfTool(toolNameOf(entry.id)), entry.id).toBeUndefined()
  })
})

describe("the default tools' input schemas (generated from the catalog)", () => {
  const entries = defaultOperations.map((id) => catalog.find((entry) => entry.id === id)!)
  for (const entry of entries) {
    it(`${toolNameOf(entry.id)}: exactly the fields ${entry.id} reads, each with a sentence of meaning`, () => {
      const tool = toolOf(entry)
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: unknown }>
      expect(Object.keys(properties).sort()).toEqual([...readFields(entry)].sort())
      for (const [name, schema] of Object.entries(properties)) {
        const description = schema.description
        expect(typeof description, `${entry.id} ${name}`).toBe("string")
        // A sentence written on the schema, not a generated constraint ("a string at most 80 character(s) long").
        expect(description, `${entry.id} ${name}`).toMatch(/^[A-Z0-9"].{20,}$/)
      }
      const required = [...(tool.inputSchema.required ?? [])]
      for (const name of required) expect(Object.keys(properties), `${entry.id} requires ${name}`).toContain(name)
    })
  }

  it("the shared field set stays whole on HTTP: responses.create still declares cursor and limit in its body", () => {
    const entry = catalog.find((e) => e.id === "responses.create")!
    expect(declaredFields(entry)).toEqual(expect.arrayContaining(["cursor", "limit", "status", "relationUuid", "threadUuid"]))
    expect(Object.keys(toolOf(entry).inputSchema.properties ?? {})).not.toContain("cursor")
  })
})
