import { describe, expect, it } from "vitest"
import { checkReply, ruleProblem, schemaProblem } from "./Declarative.js"
import { compilePattern, maxPatternLength, patternProblem } from "./Pattern.js"

describe("the linear-time pattern engine", () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["abc", "abc", true],
    ["abc", "abcd", false],
    ["a.c", "abc", true],
    ["a.c", "a\nc", false],
    ["[a-c]+", "abcabc", true],
    ["[^0-9]*", "abc", true],
    ["[^0-9]*", "ab1", false],
    ["\\d{3}-\\d{2}", "123-45", true],
    ["\\d{3}-\\d{2}", "12-345", false],
    ["x{2,}", "x", false],
    ["x{2,}", "xxxx", true],
    ["x{1,3}", "xxxx", false],
    ["x{0,2}y", "y", true],
    ["(ab|cd)*e", "abcdabe", true],
    ["(?:ab|cd)+", "", false],
    ["colou?r", "color", true],
    ["^\\s*SELECT\\s+\\*\\s+FROM\\s+\\w+;?\\s*$", "SELECT * FROM users;", true],
    ["\\.", ".", true],
    ["\\.", "a", false],
    ["[\\w.-]+@[\\w-]+\\.[a-z]{2,}", "me.you@mail-box.org", true],
    ["a{2}", "aa", true],
    ["a{", "a{", true],
    ["Ж+", "ЖЖЖ", true]
  ]
  it.each(cases)("%s against %j → %s", (pattern, input, expected) => {
    expect(compilePattern(pattern).matches(input)).toBe(expected)
  })

  it("matches case-insensitively when asked, ranges included", () => {
    expect(compilePattern("[a-z]+", { caseInsensitive: true }).matches("HeLLo")).toBe(true)
    expect(compilePattern("привет", { caseInsensitive: true }).matches("ПРИВЕТ")).toBe(true)
    expect(compilePattern("[a-z]+").matches("HeLLo")).toBe(false)
  })

  it("refuses what needs backtracking and what is too large, naming why", () => {
    expect(patternProblem("(a)\\1")).toMatch(/backreferences/)
    expect(patternProblem("a(?=b)")).toMatch(/lookaround/)
    expect(patternProblem("\\bword")).toMatch(/word boundaries/)
    expect(patternProblem("(a")).toMatch(/unclosed group/)
    expect(patternProblem("*a")).toMatch(/nothing to repeat/)
    expect(patternProblem("((a{1000}){1000})")).toMatch(/too large/)
    expect(patternProblem("a".repeat(maxPatternLength))).toBeUndefined()
    expect(patternProblem("a".repeat(maxPatternLength + 1))).toMatch(/at most 500/)
  })

  it("runs the classic catastrophic patterns in linear time", () => {
    const evil = compilePattern("(a+)+b")
    const nested = compilePattern("(a|a)*(a|aa)*c")
    const input = "a".repeat(50_000)
    const started = performance.now()
    expect(evil.matches(input)).toBe(false)
    expect(nested.matches(input)).toBe(false)
    expect(compilePattern("(x+x+)+y").matches("x".repeat(20_000))).toBe(false)
    // A backtracking engine needs longer than the universe's age here; this takes milliseconds.
    expect(performance.now() - started).toBeLessThan(3000)
  })
})

describe("declarative checkers", () => {
  it("exact: trims and folds case by default; caseSensitive and trim: false are strict", () => {
    expect(checkReply({ kind: "exact", answers: ["Москва"] }, "  москва ")).toEqual({ fraction: 1, verdict: "accepted" })
    expect(checkReply({ kind: "exact", answers: ["Москва"], caseSensitive: true }, "москва").verdict).toBe("wrong")
    expect(checkReply({ kind: "exact", answers: ["a"], trim: false }, " a").verdict).toBe("wrong")
    expect(checkReply({ kind: "exact", answers: ["a"] }, 1).verdict).toBe("invalid_reply")
  })

  it("pattern: whole-reply match with the linear engine", () => {
    const rule = { kind: "pattern" as const, pattern: "SELECT\\s+\\*\\s+FROM\\s+\\w+;?", caseInsensitive: true }
    expect(checkReply(rule, "select * from t;").verdict).toBe("accepted")
    expect(checkReply(rule, "select * from t; drop table x").verdict).toBe("wrong")
    expect(ruleProblem({ kind: "pattern", pattern: "(a)\\1" }, "grading.check")).toMatch(/^grading\.check\.pattern: backreferences/)
  })

  it("numeric: absolute and relative tolerance, decimal comma, binary slack", () => {
    expect(checkReply({ kind: "numeric", value: 3.14, tolerance: 0.01 }, "3,145").verdict).toBe("accepted")
    expect(checkReply({ kind: "numeric", value: 3.14, tolerance: 0.01 }, 3.2).verdict).toBe("wrong")
    expect(checkReply({ kind: "numeric", value: 200, tolerance: 0.05, relative: true }, 209).verdict).toBe("accepted")
    expect(checkReply({ kind: "numeric", value: 0.3 }, 0.1 + 0.2).verdict).toBe("accepted")
    expect(checkReply({ kind: "numeric", value: 1 }, "один").verdict).toBe("invalid_reply")
    expect(checkReply({ kind: "numeric", value: 1 }, "1e400").verdict).toBe("invalid_reply")
  })

  it("choice: all or nothing, or partial credit", () => {
    const rule = { kind: "choice" as const, correct: ["a", "c"] }
    expect(checkReply(rule, ["c", "a"]).verdict).toBe("accepted")
    expect(checkReply(rule, ["a"]).verdict).toBe("wrong")
    expect(checkReply({ ...rule, partial: true }, ["a"])).toEqual({ fraction: 0.5, verdict: "partial" })
    expect(checkReply({ ...rule, partial: true }, ["a", "b"]).verdict).toBe("wrong")
    expect(checkReply({ kind: "choice", correct: ["b"] }, "b").verdict).toBe("accepted")
    expect(checkReply(rule, { a: true }).verdict).toBe("invalid_reply")
  })

  it("json_schema: the subset validates, unknown keywords are refused on save", () => {
    const schema = {
      type: "object",
      required: ["name", "tags"],
      additionalProperties: false,
      properties: { name: { type: "string", minLength: 2, pattern: "[A-Z].*" }, tags: { type: "array", items: { enum: ["x", "y"] }, maxItems: 2 } }
    }
    expect(schemaProblem(schema)).toBeUndefined()
    expect(checkReply({ kind: "json_schema", schema }, { name: "Ann", tags: ["x"] }).verdict).toBe("accepted")
    expect(checkReply({ kind: "json_schema", schema }, { name: "ann", tags: [] })).toEqual({ fraction: 0, verdict: "wrong", feedback: "reply.name: does not match the expected form" })
    expect(checkReply({ kind: "json_schema", schema }, { name: "Ann", tags: ["z"] }).feedback).toBe("reply.tags.0: not one of the allowed values")
    expect(checkReply({ kind: "json_schema", schema }, { name: "Ann", tags: [], extra: 1 }).feedback).toBe("reply.extra: not allowed")
    expect(schemaProblem({ type: "object", $ref: "#/x" })).toBe("schema.$ref: not a supported keyword")
    expect(schemaProblem({ properties: { a: { pattern: "(a)\\1" } } })).toMatch(/schema\.properties\.a\.pattern: backreferences/)
  })

  it("fields: per-field composite with partial credit naming the fields to revise", () => {
    const rule = { kind: "fields" as const, fields: { city: { kind: "exact" as const, answers: ["Rome"] }, year: { kind: "numeric" as const, value: 753 } } }
    expect(checkReply(rule, { city: "rome", year: "753" }).verdict).toBe("accepted")
    expect(checkReply(rule, { city: "Roma", year: 753 })).toEqual({ fraction: 0.5, verdict: "partial", feedback: "fields to revise: city" })
    expect(checkReply(rule, "Rome").verdict).toBe("invalid_reply")
  })

  it("a variant's clue supplies the expected values; a malformed clue never throws", () => {
    const rule = { kind: "numeric" as const, tolerance: 0.5 }
    expect(checkReply(rule, 42).verdict).toBe("invalid_reply")
    expect(checkReply(rule, 42, { value: 42.3 }).verdict).toBe("accepted")
    expect(checkReply(rule, 42, { value: 50 }).verdict).toBe("wrong")
    expect(checkReply({ kind: "exact" }, "x", { answers: [1, 2] }).verdict).toBe("invalid_reply")
    expect(checkReply({ kind: "pattern", pattern: "a+" }, "aaa", { pattern: "(a)\\1" }).verdict).toBe("accepted")
  })
})
