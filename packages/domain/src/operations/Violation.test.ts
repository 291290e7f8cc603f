import { Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { firstViolation } from "./Violation.js"

const Body = Schema.Struct({
  title: Schema.String.pipe(Schema.minLength(3), Schema.maxLength(160)),
  kind: Schema.Literal("task", "service"),
  uuid: Schema.optional(Schema.UUID),
  limit: Schema.optional(Schema.Int),
  files: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String.pipe(Schema.nonEmptyString()) }))),
  note: Schema.optional(Schema.String.pipe(Schema.filter((text) => !text.includes("<"), { description: "no markup" })))
}).annotations({ parseOptions: { onExcessProperty: "error" } })

/** The first violation of a body, beside the path `ArrayFormatter` names first (the message's first issue). */
const violation = (input: unknown) => {
  const decoded = Schema.decodeUnknownEither(Body)(input)
  if (Either.isRight(decoded)) throw new Error("decoded")
  const first = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]!
  const found = firstViolation(decoded.left.issue)
  expect(found.path).toEqual(first.path)
  return { field: found.path.join("."), rule: found.rule }
}

const valid = { title: "Лендинг", kind: "task" }

describe("the first violation of an input: its field and the rule it breaks", () => {
  it("a string too long names the field and its maxLength", () => {
    expect(violation({ ...valid, title: "x".repeat(161) })).toEqual({ field: "title", rule: "maxLength 160" })
  })

  it("a string too short names its minLength", () => {
    expect(violation({ ...valid, title: "ab" })).toEqual({ field: "title", rule: "minLength 3" })
  })

  it("a missing member is required", () => {
    expect(violation({ kind: "task" })).toEqual({ field: "title", rule: "required" })
  })

  it("a member the schema does not declare is not allowed", () => {
    expect(violation({ ...valid, colour: "red" })).toEqual({ field: "colour", rule: "not allowed" })
  })

  it("a value outside a set of literals names the set", () => {
    expect(violation({ ...valid, kind: "article" })).toEqual({ field: "kind", rule: "one of task, service" })
  })

  it("a malformed uuid names the format", () => {
    expect(violation({ ...valid, uuid: "not-a-uuid" })).toEqual({ field: "uuid", rule: "format uuid" })
  })

  it("a fraction where an integer belongs names the integer type", () => {
    expect(violation({ ...valid, limit: 1.5 })).toEqual({ field: "limit", rule: "type integer" })
  })

  it("a value of the wrong type names the type", () => {
    expect(violation({ ...valid, title: 42 })).toEqual({ field: "title", rule: "type string" })
  })

  it("a nested member is named by its dotted path", () => {
    expect(violation({ ...valid, files: [{ name: "a" }, { name: "" }] })).toEqual({ field: "files.1.name", rule: "minLength 1" })
  })

  it("a range names its bounds, never its default", () => {
    const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)).annotations({
      jsonSchema: { type: "integer", minimum: 1, maximum: 100, default: 20 }
    })
    const decoded = Schema.decodeUnknownEither(Schema.Struct({ limit: Limit }))({ limit: "0" })
    if (Either.isRight(decoded)) throw new Error("decoded")
    expect(firstViolation(decoded.left.issue)).toEqual({ path: ["limit"], rule: "type integer, minimum 1, maximum 100" })
  })

  it("a check of the project's own is named by its description", () => {
    expect(violation({ ...valid, note: "<b>" })).toEqual({ field: "note", rule: "no markup" })
  })
})
