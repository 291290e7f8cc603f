import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { eventTypes } from "../events/EventType.js"
import { catalog, openApiDocument } from "./BirzhaApi.js"
import { coverage, type SpecOperation } from "./SpecOperations.js"

interface Json { readonly [key: string]: any }
/** The served document as plain JSON, which is what clients and validators see. */
const documentJson = (): Json => JSON.parse(JSON.stringify(openApiDocument()))

const specOperations: ReadonlyArray<SpecOperation> = JSON.parse(
  readFileSync(new URL("../../../../docs/spec/operations.json", import.meta.url), "utf8")
)

describe("the operation catalog", () => {
  it("declares every operation id once", () => {
    const ids = catalog.map((entry) => entry.id)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("describes every operation in words: a declared summary (MCP tools and approval pages show it), not its id", () => {
    expect(catalog.filter((entry) => entry.summary === entry.id || entry.summary.trim().length < 10).map((entry) => entry.id)).toEqual([])
  })

  it("matches the spec's method and path for every declared operation", () => {
    const result = coverage(catalog, specOperations)
    expect(result.mismatched).toEqual([])
    // Only operations declared as ours are outside the spec's list.
    expect(result.extra).toEqual(catalog.filter((entry) => entry.extension).map((entry) => entry.id))
  })

  it("names the same operations in the OpenAPI document as in the catalog", () => {
    const spec = documentJson()
    const fromDocument = Object.entries(spec.paths).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => `${op.operationId} ${method.toUpperCase()} ${path}`)
    )
    expect(fromDocument.sort()).toEqual(catalog.map((e) => `${e.id} ${e.method} ${e.path}`).sort())
  })

  it("carries x-scopes and x-approval on every OpenAPI operation, as declared", () => {
    const spec = documentJson()
    for (const entry of catalog) {
      const op = spec.paths[entry.path][entry.method.toLowerCase()]
      expect(op["x-scopes"], entry.id).toEqual(entry.scopes)
      expect(op["x-approval"], entry.id).toBe(entry.approval)
    }
  })

  it("declares each operation's security as it is enforced: the cookie for session-only, the key for key-only", () => {
    const spec = documentJson()
    for (const entry of catalog) {
      const op = spec.paths[entry.path][entry.method.toLowerCase()]
      if (entry.access === "public") {
        expect(op.security, entry.id).toEqual(entry.id === "auth.logout" ? [{ session: [] }, {}] : [])
      } else if (entry.sessionOnly) {
        expect(op.security, entry.id).toEqual([{ session: [] }])
      } else if (entry.keyOnly) {
        expect(op.security, entry.id).toEqual([{ bearer: [] }])
      } else {
        expect(op.security, entry.id).toEqual([{ bearer: [] }, { session: [] }])
      }
    }
  })

  it("publishes every query parameter, and every list limit as an integer from 1 to 100", () => {
    const spec = documentJson()
    const names = (path: string, method: string) =>
      (spec.paths[path][method].parameters as Array<{ name: string; in: string }>).filter((p) => p.in === "query").map((p) => p.name)
    expect(names("/api/v1/events", "get").sort()).toEqual(["aggregateKind", "aggregateUuid", "cursor", "limit", "types"])
    expect(names("/api/v1/webhook-endpoints/{uuid}/deliveries", "get").sort()).toEqual(["cursor", "limit", "status"])
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(item as Json)) {
        for (const parameter of (op.parameters ?? []) as Array<{ name: string; schema: Json }>) {
          if (parameter.name !== "limit") continue
          // The spec's shared field set of the relation operations declares limit as an integer, minimum 0,
          // no maximum: 0 reads as the default and above 100 as 100 (docs/decisions.md); so does customers.get.
          const shared = catalog.some((entry) => entry.path === path && ["responses", "offers", "deals", "job_contacts", "threads", "customers"].includes(entry.group))
          expect(parameter.schema, `${method} ${path}`).toMatchObject(shared ? { type: "integer", minimum: 0 } : { type: "integer", minimum: 1, maximum: 100 })
        }
      }
    }
  })

  it("lets a Profile carry extra properties (spec), unlike the closed resources", () => {
    const spec = documentJson()
    expect(spec.components.schemas.Profile.additionalProperties).toBe(true)
    expect(spec.components.schemas.Profile.required).toContain("uuid")
  })

  it("documents the error envelope on every error response", () => {
    const spec = documentJson()
    const resolve = (schema: Json): Json =>
      typeof schema.$ref === "string" ? spec.components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema
    let checked = 0
    for (const item of Object.values(spec.paths) as Array<Json>) {
      for (const op of Object.values(item) as Array<Json>) {
        for (const [status, response] of Object.entries(op.responses) as Array<[string, Json]>) {
          if (Number(status) < 400) continue
          const schema: Json = response.content["application/json"].schema
          const variants: Array<Json> = schema.anyOf ?? [schema]
          for (const variant of variants) {
            const resolved = resolve(variant)
            expect(resolved.required, `${op.operationId} ${status}`).toEqual(["error"])
            const inner = resolve(resolved.properties.error)
            expect(inner.required).toEqual(expect.arrayContaining(["code", "message"]))
            checked++
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(0)
  })

  it("does not advertise the framework's own decode error shape", () => {
    expect(JSON.stringify(documentJson())).not.toContain("HttpApiDecodeError")
  })

  it("uses OpenAPI 3.1.0 and the interface version 2026-10-15", () => {
    const spec = documentJson()
    expect(spec.openapi).toBe("3.1.0")
    expect(spec.info.version).toBe("2026-10-15")
  })
})

describe("event types", () => {
  it("lists exactly the spec's 57 event types", () => {
    expect(eventTypes).toHaveLength(57)
    expect(new Set(eventTypes).size).toBe(57)
    expect(eventTypes).toContain("publication.draft_saved")
    expect(eventTypes).toContain("learning.enrollment.withdrawn")
  })
})
