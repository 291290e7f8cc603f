import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { conditionProblem, evaluate, type EventFacts, type TraceNode } from "./Condition.js"
import type { Condition, ConditionField } from "./Rule.js"

/**
 * The evaluator against the spec's semantics, written out here on its own: a
 * group holds when every `all` child and some `any` child hold; a missing (or null) field makes
 * every op false except `exists`; `contains` ignores case and folds ё to е.
 */
const stringFields = ["type", "aggregate.kind", "aggregate.uuid", "data.status", "data.objectUuid"] as const

const read = (event: EventFacts, field: ConditionField): unknown => {
  const [head, tail] = field.split(".") as [string, string | undefined]
  const holder: unknown = tail === undefined ? event : (event as Record<string, unknown>)[head]
  if (typeof holder !== "object" || holder === null) return undefined
  const value = (holder as Record<string, unknown>)[tail ?? head]
  return value ?? undefined
}

const fold = (s: string) => s.toLocaleLowerCase("ru").split("ё").join("е")

const spec = (node: Condition, event: EventFacts): boolean => {
  if (node.all !== undefined || node.any !== undefined) {
    const all = node.all === undefined || node.all.every((child) => spec(child, event))
    const any = node.any === undefined || node.any.some((child) => spec(child, event))
    return all && any
  }
  const actual = read(event, node.field!)
  if (node.op === "exists") return node.value === false ? actual === undefined : actual !== undefined
  if (actual === undefined) return false
  switch (node.op) {
    case "eq":
      return actual === node.value
    case "in":
      return (node.value as ReadonlyArray<unknown>).includes(actual)
    case "contains":
      return typeof actual === "string" && fold(actual).includes(fold(node.value as string))
    case "gte":
      return typeof actual === "number" && actual >= (node.value as number)
    case "lte":
      return typeof actual === "number" && actual <= (node.value as number)
    default:
      return false
  }
}

const words = fc.constantFrom("draft", "Draft", "ЁЖИК", "ежик", "pending", "a", "", "task", "response.received")
const numbers = fc.integer({ min: -2, max: 5 })

/** A valid leaf: the value fits the field and op as the grammar requires. */
const leaf: fc.Arbitrary<Condition> = fc.oneof(
  fc.record({ field: fc.constantFrom(...stringFields, "aggregate.revision" as const), op: fc.constant("exists" as const), value: fc.option(fc.boolean(), { nil: undefined }) })
    .map(({ value, ...rest }) => (value === undefined ? rest : { ...rest, value })),
  fc.record({ field: fc.constantFrom(...stringFields), op: fc.constant("eq" as const), value: words }),
  fc.record({ field: fc.constant("aggregate.revision" as const), op: fc.constant("eq" as const), value: numbers }),
  fc.record({ field: fc.constantFrom(...stringFields), op: fc.constant("in" as const), value: fc.array(words, { minLength: 1, maxLength: 30 }) }),
  fc.record({ field: fc.constant("aggregate.revision" as const), op: fc.constant("in" as const), value: fc.array(numbers, { minLength: 1, maxLength: 30 }) }),
  fc.record({ field: fc.constantFrom(...stringFields), op: fc.constant("contains" as const), value: words.filter((w) => w.length > 0) }),
  fc.record({ field: fc.constant("aggregate.revision" as const), op: fc.constantFrom("gte" as const, "lte" as const), value: numbers })
)

const tree = (depth: number): fc.Arbitrary<Condition> =>
  depth <= 1
    ? leaf
    : fc.oneof(
      { weight: 3, arbitrary: leaf },
      {
        weight: 1,
        arbitrary: fc.record(
          { all: fc.array(tree(depth - 1), { minLength: 1, maxLength: 10, size: "xsmall" }), any: fc.array(tree(depth - 1), { minLength: 1, maxLength: 10, size: "xsmall" }) },
          { requiredKeys: [] }
        ).filter((group) => group.all !== undefined || group.any !== undefined)
      }
    )

const maybe = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined })

const event: fc.Arbitrary<EventFacts> = fc.record({
  type: maybe(fc.oneof(words, fc.constant(null))),
  aggregate: maybe(fc.record({ kind: maybe(words), uuid: maybe(words), revision: maybe(fc.oneof(numbers, fc.constant(null))) }, { requiredKeys: [] })),
  data: maybe(fc.record({ status: maybe(fc.oneof(words, fc.constant(null))), objectUuid: maybe(words) }, { requiredKeys: [] }))
}, { requiredKeys: [] }) as fc.Arbitrary<EventFacts>

const depthOf = (node: Condition): number =>
  1 + Math.max(0, ...[...(node.all ?? []), ...(node.any ?? [])].map(depthOf))

describe("the condition evaluator", () => {
  it("agrees with the spec's semantics for every op, missing and null fields and nesting, with and without a trace", () => {
    fc.assert(
      fc.property(tree(6), event, (condition, facts) => {
        const trace: Array<TraceNode> = []
        const expected = spec(condition, facts)
        expect(evaluate(condition, facts)).toBe(expected)
        expect(evaluate(condition, facts, trace)).toBe(expected)
        // The trace ends with the root, and has one entry per node.
        expect(trace[trace.length - 1]?.path).toBe("trigger.filter")
      }),
      { numRuns: 2000 }
    )
  })

  it("accepts every grammatical condition up to depth 6 and refuses depth 7", () => {
    fc.assert(
      fc.property(tree(6), (condition) => {
        expect(conditionProblem(condition, "trigger.filter")).toBeUndefined()
        expect(depthOf(condition)).toBeLessThanOrEqual(6)
      }),
      { numRuns: 500 }
    )
    let deep: Condition = { field: "type", op: "exists" }
    for (let depth = 1; depth < 7; depth++) deep = { any: [deep] }
    expect(conditionProblem(deep, "f")?.path).toBe("f.any.0.any.0.any.0.any.0.any.0.any.0")
  })

  it("examples: a missing field is false except exists; contains folds case and ё", () => {
    const none: EventFacts = {}
    for (const op of ["eq", "in", "contains", "gte", "lte"] as const) {
      const value = op === "in" ? ["x"] : op === "gte" || op === "lte" ? 0 : "x"
      expect(evaluate({ field: op === "gte" || op === "lte" ? "aggregate.revision" : "data.status", op, value }, none)).toBe(false)
    }
    expect(evaluate({ field: "data.status", op: "exists", value: false }, none)).toBe(true)
    expect(evaluate({ field: "data.status", op: "exists" }, { data: { status: null } })).toBe(false)
    expect(evaluate({ field: "data.status", op: "contains", value: "ЕЖ" }, { data: { status: "Ёжик" } })).toBe(true)
    expect(evaluate({ field: "data.status", op: "eq", value: "draft" }, { data: { status: "Draft" } })).toBe(false)
  })
})
