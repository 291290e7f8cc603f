import { catalog } from "@birzha/domain"
import { describe, expect, it } from "vitest"
import { toolOf } from "./McpTools.js"

describe("relation operations as MCP tools", () => {
  it("come in the toolsets responses, offers, deals, job_contacts and threads, with destructive hints on terminate, decline and withdraw", () => {
    const groups = ["responses", "offers", "deals", "job_contacts", "threads"]
    const entries = catalog.filter((entry) => groups.includes(entry.group))
    expect(new Set(entries.map((entry) => entry.group))).toEqual(new Set(groups))
    const destructive = entries.filter((entry) => toolOf(entry).annotations?.destructiveHint === true).map((entry) => entry.id).sort()
    expect(destructive).toEqual(["deals.terminate", "offers.decline", "offers.withdraw", "responses.withdraw"])
    const readOnly = entries.filter((entry) => toolOf(entry).annotations?.readOnlyHint === true).map((entry) => entry.id)
    expect(readOnly.every((id) => /\.(list|get|messages)$/.test(id))).toBe(true)
  })

  it("take only the fields of the spec's shared set their operation uses, never the whole set", () => {
    const create = toolOf(catalog.find((entry) => entry.id === "responses.create")!)
    // requestUuid is fixed by the server for an approval tool, so it is not asked for.
    expect(Object.keys(create.inputSchema.properties ?? {}).sort()).toEqual(["body", "budget", "deadline", "publicationUuid", "references"])
    expect([...(create.inputSchema.required ?? [])].sort()).toEqual(["body", "publicationUuid"])
    const list = toolOf(catalog.find((entry) => entry.id === "deals.list")!)
    expect(Object.keys(list.inputSchema.properties ?? {}).sort()).toEqual(["cursor", "limit", "publicationUuid", "status"])
  })
})
