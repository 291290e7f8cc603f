import { catalog, type CatalogEntry } from "@birzha/domain"
import { Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { bodyLimitsOf, minBodyBytes, structuralCeilings } from "./BodyLimits.js"
import { inputsOf } from "./fuzzInputs.js"
import { jsonShapeProblem } from "./JsonShape.js"

const ceiling = 10 * 1024 * 1024
const withBody = catalog.filter((entry) => Option.isSome(entry.schemas.payload))
const limitsOf = (entry: CatalogEntry) => bodyLimitsOf(Option.getOrThrow(entry.schemas.payload), ceiling)
const byId = (id: string) => limitsOf(catalog.find((entry) => entry.id === id)!)

/** Every character as `\uXXXX`, pretty-printed: the longest way a client may write a value. */
const escapedJson = (value: unknown, indent = ""): string => {
  const inner = `${indent}  `
  if (typeof value === "string") {
    return `"${Array.from({ length: value.length }, (_, i) => `\\u${value.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")}"`
  }
  if (Array.isArray(value)) return `[\n${value.map((item) => inner + escapedJson(item, inner)).join(",\n")}\n${indent}]`
  if (typeof value === "object" && value !== null) {
    const members = Object.entries(value).filter(([, item]) => item !== undefined)
    return `{\n${members.map(([key, item]) => `${inner}${escapedJson(key)}: ${escapedJson(item, inner)}`).join(",\n")}\n${indent}}`
  }
  return JSON.stringify(value)
}

describe("each operation's body limits, derived from its declared schema", () => {
  it("gives most operations kilobytes and only those with files as data or free-form JSON megabytes", () => {
    const sizes = withBody.map((entry) => limitsOf(entry).maxBytes)
    expect(sizes.every((size) => size >= minBodyBytes && size <= ceiling)).toBe(true)
    expect(sizes.filter((size) => size === minBodyBytes).length).toBeGreaterThan(withBody.length / 2)
    expect(byId("auth.email.start").maxBytes).toBe(minBodyBytes)
    expect(byId("comments.create").maxBytes).toBeLessThan(1024 * 1024)
    // A task carries up to five files of 1 MiB as base64 data URLs.
    expect(byId("tasks.save").maxBytes).toBe(ceiling)
    // Free-form JSON (automation arguments) has no bound of its own; the host's limit is its bound.
    expect(byId("automations.create")).toMatchObject({ maxBytes: ceiling, ...structuralCeilings })
    // A learner's reply is free-form JSON the schema bounds (MaxJsonBytes, 64 KiB as JSON).
    expect(byId("learning.submissions.create").maxBytes).toBeLessThan(1024 * 1024)
  })

  it("derives the structural limits from maxItems and maxLength, never below the floors", () => {
    const task = byId("tasks.save")
    // TaskFile.url: a 1 MiB file as a base64 data URL, each character possibly escaped.
    expect(task.maxStringBytes).toBeGreaterThan(((1024 * 1024) / 3) * 4)
    expect(task.maxStringBytes).toBeLessThan(9 * 1024 * 1024)
    expect(task.maxItems).toBe(64)
    expect(byId("learning.courses.update").maxItems).toBe(structuralCeilings.maxItems)
    expect(byId("learning.groups.members").maxItems).toBe(500)
    // The longest comment (5000 characters), every character escaped, still fits.
    const comment = Buffer.from(escapedJson({ requestUuid: "00000000-0000-4000-8000-000000000000", body: "я".repeat(5000) }))
    expect(jsonShapeProblem(comment, byId("comments.create"))).toBeUndefined()
    expect(comment.length).toBeLessThanOrEqual(byId("comments.create").maxBytes)
    const ceiled = withBody.map(limitsOf)
    for (const limits of ceiled) {
      expect(limits.maxMembers).toBeLessThanOrEqual(structuralCeilings.maxMembers)
      expect(limits.maxItems).toBeLessThanOrEqual(structuralCeilings.maxItems)
      expect(limits.maxDepth).toBe(structuralCeilings.maxDepth)
    }
  })

  it("admits every valid input of every operation, written compactly, pretty-printed, or with every character escaped", () => {
    let checked = 0
    for (const entry of withBody) {
      const limits = limitsOf(entry)
      const valid = Schema.is(Schema.encodedSchema(Schema.make(Option.getOrThrow(entry.schemas.payload))))
      for (const payload of inputsOf(entry, 7, 12).payloads) {
        if (!valid(payload)) continue
        for (const text of [JSON.stringify(payload), JSON.stringify(payload, null, 4), escapedJson(payload)]) {
          const bytes = Buffer.from(text)
          expect(bytes.length, entry.id).toBeLessThanOrEqual(limits.maxBytes)
          expect(jsonShapeProblem(bytes, limits), `${entry.id}: ${text.slice(0, 200)}`).toBeUndefined()
        }
        checked++
      }
    }
    expect(checked).toBeGreaterThan(withBody.length)
  })
})
