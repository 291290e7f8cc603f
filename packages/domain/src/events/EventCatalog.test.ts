import { describe, expect, it } from "vitest"
import { catalog } from "../api/BirzhaApi.js"
import { eventCatalogOf, eventDescription } from "./EventCatalog.js"
import { eventTypes } from "./EventType.js"

const readIds = (operations: ReadonlyArray<{ readonly id: string; readonly method: string; readonly path: string }>) =>
  [...new Set(eventCatalogOf(operations).types.flatMap((entry) => entry.read.operations.map((read) => read.operationId)))]

describe("the event catalog's read operations", () => {
  it("take their method and path from the operation catalog's declaration of the same id", () => {
    const byId = new Map(catalog.map((entry) => [entry.id, entry]))
    const types = eventCatalogOf(catalog).types
    expect(types.map((entry) => entry.type)).toEqual([...eventTypes])
    for (const entry of types) {
      for (const read of entry.read.operations) {
        expect([read.method, read.path], `${entry.type} ${read.operationId}`).toEqual([byId.get(read.operationId)?.method, byId.get(read.operationId)?.path])
      }
    }
    // A moved path moves with it: the catalog carries no copy of its own.
    const moved = catalog.map((entry) => entry.id === "deals.get" ? { ...entry, path: "/api/v2/deals/{relationUuid}" } : entry)
    const deal = eventCatalogOf(moved).types.find((entry) => entry.type === "deal.started")!
    expect(deal.read.operations).toEqual([{ operationId: "deals.get", method: "GET", path: "/api/v2/deals/{relationUuid}" }])
  })

  it("refuse an id that names no operation, or no GET one, naming it", () => {
    const ids = readIds(catalog)
    expect(ids.length).toBeGreaterThan(20)
    for (const id of ["deals.get", "learning.steps.get", "tasks.get"]) {
      expect(ids).toContain(id)
      expect(() => eventCatalogOf(catalog.filter((entry) => entry.id !== id)), id).toThrow(new RegExp(`: ${id.replace(/\./g, "\\.")}: no GET operation`))
      const posted = catalog.map((entry) => entry.id === id ? { ...entry, method: "POST" as const } : entry)
      expect(() => eventCatalogOf(posted), id).toThrow(id)
    }
  })

  it("tell the workers the same summary and first read operation as the served catalog", () => {
    for (const entry of eventCatalogOf(catalog).types) {
      expect(eventDescription(entry.type), entry.type).toEqual({ summary: entry.summary, readOperationId: entry.read.operations[0]?.operationId })
    }
    expect(eventDescription("no.such_type")).toBeUndefined()
    expect(eventDescription("toString")).toBeUndefined()
  })
})
