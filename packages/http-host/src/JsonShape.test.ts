import { describe, expect, it } from "vitest"
import { makeRandom, type Random } from "./fuzzInputs.js"
import { jsonShapeProblem, type JsonShapeLimits, JsonShapeScanner } from "./JsonShape.js"

const limits: JsonShapeLimits = { maxDepth: 8, maxMembers: 5, maxItems: 6, maxValues: 60, maxStringBytes: 12 }
const bytes = (text: string) => Buffer.from(text, "utf8")
const problem = (text: string, given: JsonShapeLimits = limits) => jsonShapeProblem(bytes(text), given)

/** The same counts from the parsed value: what the scanner must agree with. */
const reference = (value: unknown, given: JsonShapeLimits): string | undefined => {
  let values = 0
  let found: string | undefined
  const walk = (node: unknown, depth: number): void => {
    if (found !== undefined) return
    values++
    if (typeof node === "string") {
      if (Buffer.byteLength(JSON.stringify(node)) - 2 > given.maxStringBytes) found = "string"
      return
    }
    if (typeof node !== "object" || node === null) return
    if (depth + 1 > given.maxDepth) found = "depth"
    else if (Array.isArray(node)) {
      if (node.length > given.maxItems) found = "items"
      for (const item of node) walk(item, depth + 1)
    } else {
      const keys = Object.keys(node)
      if (keys.length > given.maxMembers) found = "members"
      for (const key of keys) {
        // A member counts once for its name and once for its value.
        values++
        if (Buffer.byteLength(JSON.stringify(key)) - 2 > given.maxStringBytes) found = "string"
        walk((node as Record<string, unknown>)[key], depth + 1)
      }
    }
  }
  walk(value, 0)
  return found ?? (values > given.maxValues ? "values" : undefined)
}

/** An integer from `low` to `high`, both included. */
const between = (random: Random, low: number, high: number) => low + random.int(high - low + 1)

const randomJson = (random: Random, depth: number): unknown => {
  const pick = between(random, 0, depth > 9 ? 3 : 6)
  switch (pick) {
    case 0:
      return between(random, -1000, 1000) / 7
    case 1:
      return [true, false, null][between(random, 0, 2)]
    case 2:
    case 3: {
      const alphabet = ["a", "\"", "\\", "\n", "я", "😀", "/", "\u0001", " "]
      return Array.from({ length: between(random, 0, 9) }, () => alphabet[between(random, 0, alphabet.length - 1)]).join("")
    }
    case 4:
    case 5:
      return Array.from({ length: between(random, 0, 8) }, () => randomJson(random, depth + 1))
    default:
      return Object.fromEntries(Array.from({ length: between(random, 0, 7) }, (_, i) => [`${"k\"\\".slice(0, between(random, 0, 3))}${i}`, randomJson(random, depth + 1)]))
  }
}

/** Feeds `text` in pieces cut at random places (inside strings, escapes and multi-byte characters). */
const fedInPieces = (data: Buffer, random: Random, given: JsonShapeLimits) => {
  const scanner = new JsonShapeScanner(given)
  let at = 0
  let found: string | undefined
  while (at < data.length && found === undefined) {
    const next = Math.min(data.length, at + between(random, 1, 5))
    found = scanner.feed(data.subarray(at, next))
    at = next
  }
  return found
}

describe("counting a JSON body's shape before parsing it", () => {
  it("refuses exactly past each limit: members, items, depth, values, string bytes", () => {
    expect(problem(`{"a":1,"b":2,"c":3,"d":4,"e":5}`)).toBeUndefined()
    expect(problem(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}`)).toContain("more than 5 members")
    expect(problem(`[1,2,3,4,5,6]`)).toBeUndefined()
    expect(problem(`[1, 2 ,3,4,5,6, 7]`)).toContain("more than 6 items")
    expect(problem(`[[],{},"",0,true,null]`)).toBeUndefined()
    expect(problem(`${"[".repeat(8)}${"]".repeat(8)}`)).toBeUndefined()
    expect(problem(`${"[".repeat(9)}${"]".repeat(9)}`)).toContain("deeper than 8 levels")
    expect(problem(`{"a":${"{\"b\":".repeat(7)}1${"}".repeat(8)}`)).toBeUndefined()
    expect(problem(`{"a":${"{\"b\":".repeat(8)}1${"}".repeat(9)}`)).toContain("deeper than 8 levels")
    expect(problem(`"${"x".repeat(12)}"`)).toBeUndefined()
    expect(problem(`"${"x".repeat(13)}"`)).toContain("longer than 12 bytes")
    expect(problem(`{"${"k".repeat(13)}":1}`)).toContain("longer than 12 bytes")
    // Escapes count as sent: `\"` is two bytes, and a quote after an escaped backslash ends the string.
    expect(problem(`"\\"\\"\\"\\"\\"\\""`)).toBeUndefined()
    expect(problem(`["\\\\",1,2,3,4,5]`)).toBeUndefined()
    expect(problem(`["\\\\",1,2,3,4,5,6]`)).toContain("more than 6 items")
    // Commas and brackets inside strings are text.
    expect(problem(`["[,,,,,,,]"]`)).toBeUndefined()
    const many = `[${Array.from({ length: 6 }, () => "[1,2,3,4,5,6]").join(",")}]`
    expect(problem(many, { ...limits, maxValues: 43 })).toBeUndefined()
    expect(problem(many, { ...limits, maxValues: 42 })).toContain("more than 42 values")
  })

  it("agrees with the parsed value's counts for random bodies, whatever the chunk boundaries", () => {
    const random = makeRandom(20261129)
    let refused = 0
    for (let i = 0; i < 2_000; i++) {
      const value = randomJson(random, 0)
      const pretty = between(random, 0, 1) === 0
      const data = bytes(JSON.stringify(value, null, pretty ? 2 : undefined))
      const expected = reference(value, limits)
      const whole = jsonShapeProblem(data, limits)
      expect(whole === undefined, `${data.toString()}: ${expected} / ${whole}`).toBe(expected === undefined)
      expect(fedInPieces(data, random, limits) === undefined, data.toString()).toBe(expected === undefined)
      if (expected !== undefined) refused++
    }
    // Both outcomes occur often enough for the comparison to mean something.
    expect(refused).toBeGreaterThan(200)
    expect(refused).toBeLessThan(1_800)
  })

  it("refuses the hostile shapes after the first bytes past the limit, not at the end", () => {
    const ceilings: JsonShapeLimits = { maxDepth: 64, maxMembers: 1_000, maxItems: 10_000, maxValues: 100_000, maxStringBytes: 1024 * 1024 }
    const keys = `{${Array.from({ length: 500_000 }, (_, i) => `"k${i}":${i}`).join(",")}}`
    const items = `[${"0,".repeat(999_999)}0]`
    const nested = `${"[".repeat(100_000)}${"]".repeat(100_000)}`
    const text = `"${"a".repeat(9 * 1024 * 1024)}"`
    for (const [body, expected] of [[keys, "members"], [items, "items"], [nested, "deeper"], [text, "longer"]] as const) {
      const scanner = new JsonShapeScanner(ceilings)
      const data = bytes(body)
      let fed = 0
      let found: string | undefined
      for (; fed < data.length && found === undefined; fed += 64 * 1024) found = scanner.feed(data.subarray(fed, fed + 64 * 1024))
      expect(found).toContain(expected)
      // Refused in the 64 KiB chunk that passes the limit: the rest of the body is never looked at.
      expect(fed, expected).toBeLessThan(data.length)
      expect(scanner.feed(bytes("1"))).toBe(found)
    }
  })
})
