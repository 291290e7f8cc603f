import { Schema } from "effect"
import { AnyJson, maxChars, strict } from "../../kernel/Common.js"
import { compilePattern, maxPatternLength, type Pattern, patternProblem } from "./Pattern.js"

/**
 * Declarative checkers: pure functions of (rule, reply, clue) evaluated inline in
 * the submit transaction; nothing runs code. A step's rule is part of its node (`grading.check`),
 * so the version a submission pins also pins the rule that graded it. Kinds: `exact`, `pattern`
 * (the linear-time engine of Pattern.ts), `numeric` (tolerance), `choice` (partial credit),
 * `json_schema` (a bounded subset of JSON Schema) and `fields` (per-field composite).
 *
 * A variant's clue (server-only) supplies the expected values of its learner's dataset: when the
 * clue is an object, its `answers`, `pattern`, `value`, `tolerance`, `correct` and `fields`
 * replace the rule's (Stepik's `check(reply, clue)`).
 */

const answer = Schema.String.pipe(maxChars(1000))

export const ExactRule = Schema.Struct({
  kind: Schema.Literal("exact"),
  /** Accepted replies; one of them must equal the reply (after trimming unless `trim: false`). */
  answers: Schema.optional(Schema.Array(answer).pipe(Schema.minItems(1), Schema.maxItems(20))),
  caseSensitive: Schema.optional(Schema.Boolean),
  trim: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningExactRule", ...strict })

export const PatternRule = Schema.Struct({
  kind: Schema.Literal("pattern"),
  /** Must match the whole (trimmed) reply; the linear-time subset of regular expressions. */
  pattern: Schema.optional(Schema.String.pipe(maxChars(maxPatternLength))),
  caseInsensitive: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningPatternRule", ...strict })

export const NumericRule = Schema.Struct({
  kind: Schema.Literal("numeric"),
  value: Schema.optional(Schema.Number.pipe(Schema.finite())),
  /** Absolute, or a fraction of `value` when `relative`; 0 by default. */
  tolerance: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.nonNegative())),
  relative: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningNumericRule", ...strict })

export const ChoiceRule = Schema.Struct({
  kind: Schema.Literal("choice"),
  /** The option ids to choose (the reply: one id, or an array of ids). */
  correct: Schema.optional(Schema.Array(Schema.String.pipe(maxChars(100))).pipe(Schema.minItems(1), Schema.maxItems(50))),
  /** Partial credit: (right chosen − wrong chosen) / right, at least 0. Otherwise all or nothing. */
  partial: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningChoiceRule", ...strict })

export const JsonSchemaRule = Schema.Struct({
  kind: Schema.Literal("json_schema"),
  /** The subset of JSON Schema of `schemaProblem`: type, enum, const, properties, required, additionalProperties, items, bounds, pattern. */
  schema: AnyJson
}).annotations({ identifier: "LearningJsonSchemaRule", ...strict })

export const FieldRule = Schema.Union(ExactRule, PatternRule, NumericRule, ChoiceRule, JsonSchemaRule)
export type FieldRule = typeof FieldRule.Type

export const FieldsRule = Schema.Struct({
  kind: Schema.Literal("fields"),
  /** The reply is an object; each field is graded by its rule; the score is the mean. */
  fields: Schema.Record({ key: Schema.String.pipe(maxChars(64)), value: FieldRule })
}).annotations({ identifier: "LearningFieldsRule", ...strict })

export const DeclarativeRule = Schema.Union(ExactRule, PatternRule, NumericRule, ChoiceRule, JsonSchemaRule, FieldsRule)
  .annotations({ identifier: "LearningDeclarativeRule" })
export type DeclarativeRule = typeof DeclarativeRule.Type

export const Verdict = Schema.Literal("accepted", "wrong", "partial", "compile_error", "runtime_error", "time_limit", "invalid_reply")
export type Verdict = typeof Verdict.Type

/** What a check gives: the fraction of the points (0..1), a verdict and a short hint (never the answer). */
export interface CheckResult {
  readonly fraction: number
  readonly verdict: Verdict
  readonly feedback?: string
}

const maxFields = 50

// ---- JSON Schema, the bounded subset ----------------------------------------------------------------

const schemaKeywords = new Set([
  "type", "enum", "const", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
  "minLength", "maxLength", "minimum", "maximum", "pattern", "title", "description"
])
const jsonTypes = new Set(["object", "array", "string", "number", "integer", "boolean", "null"])
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Why a schema is outside the subset (depth ≤ 10, known keywords only, patterns of the linear engine), or undefined. */
export const schemaProblem = (schema: unknown, path = "schema", depth = 0): string | undefined => {
  if (depth > 10) return `${path}: nested deeper than 10`
  if (!isObject(schema)) return `${path}: a schema is an object`
  for (const [key, value] of Object.entries(schema)) {
    if (!schemaKeywords.has(key)) return `${path}.${key}: not a supported keyword`
    if (key === "type") {
      const types = Array.isArray(value) ? value : [value]
      if (types.length === 0 || types.some((t) => typeof t !== "string" || !jsonTypes.has(t))) return `${path}.type: unknown type`
    }
    if (key === "properties") {
      if (!isObject(value)) return `${path}.properties: an object`
      for (const [name, sub] of Object.entries(value)) {
        const problem = schemaProblem(sub, `${path}.properties.${name}`, depth + 1)
        if (problem !== undefined) return problem
      }
    }
    if (key === "items" || (key === "additionalProperties" && typeof value !== "boolean")) {
      const problem = schemaProblem(value, `${path}.${key}`, depth + 1)
      if (problem !== undefined) return problem
    }
    if (key === "required" && (!Array.isArray(value) || value.some((name) => typeof name !== "string"))) return `${path}.required: an array of names`
    if (key === "enum" && !Array.isArray(value)) return `${path}.enum: an array`
    if (["minItems", "maxItems", "minLength", "maxLength"].includes(key) && (typeof value !== "number" || !Number.isInteger(value) || value < 0)) {
      return `${path}.${key}: a non-negative integer`
    }
    if ((key === "minimum" || key === "maximum") && (typeof value !== "number" || !Number.isFinite(value))) return `${path}.${key}: a number`
    if (key === "pattern") {
      if (typeof value !== "string") return `${path}.pattern: a string`
      const problem = patternProblem(value)
      if (problem !== undefined) return `${path}.pattern: ${problem}`
    }
  }
  return undefined
}

const typeOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value

const equalJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

const patternCache = new Map<string, Pattern>()
const cachedPattern = (source: string, caseInsensitive: boolean): Pattern => {
  const key = `${caseInsensitive ? "i" : "-"}${source}`
  let pattern = patternCache.get(key)
  if (pattern === undefined) {
    pattern = compilePattern(source, { caseInsensitive })
    if (patternCache.size > 1000) patternCache.clear()
    patternCache.set(key, pattern)
  }
  return pattern
}

/** The first place `value` breaks `schema` (a checked schema), or undefined when it conforms. */
export const schemaViolation = (schema: Record<string, unknown>, value: unknown, path = "reply"): string | undefined => {
  const type = schema["type"]
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type]
    const actual = typeOf(value)
    if (!types.some((t) => t === actual || (t === "number" && actual === "integer"))) return `${path}: expected ${types.join(" or ")}`
  }
  if (Array.isArray(schema["enum"]) && !schema["enum"].some((option) => equalJson(option, value))) return `${path}: not one of the allowed values`
  if ("const" in schema && !equalJson(schema["const"], value)) return `${path}: not the expected value`
  if (typeof value === "string") {
    const length = [...value].length
    if (typeof schema["minLength"] === "number" && length < schema["minLength"]) return `${path}: too short`
    if (typeof schema["maxLength"] === "number" && length > schema["maxLength"]) return `${path}: too long`
    if (typeof schema["pattern"] === "string" && !cachedPattern(schema["pattern"], false).matches(value)) return `${path}: does not match the expected form`
  }
  if (typeof value === "number") {
    if (typeof schema["minimum"] === "number" && value < schema["minimum"]) return `${path}: below the minimum`
    if (typeof schema["maximum"] === "number" && value > schema["maximum"]) return `${path}: above the maximum`
  }
  if (Array.isArray(value)) {
    if (typeof schema["minItems"] === "number" && value.length < schema["minItems"]) return `${path}: too few items`
    if (typeof schema["maxItems"] === "number" && value.length > schema["maxItems"]) return `${path}: too many items`
    if (isObject(schema["items"])) {
      for (const [i, item] of value.entries()) {
        const problem = schemaViolation(schema["items"], item, `${path}.${i}`)
        if (problem !== undefined) return problem
      }
    }
  }
  if (isObject(value)) {
    const properties = isObject(schema["properties"]) ? schema["properties"] : {}
    if (Array.isArray(schema["required"])) {
      for (const name of schema["required"] as ReadonlyArray<string>) if (!(name in value)) return `${path}.${name}: missing`
    }
    for (const [name, item] of Object.entries(value)) {
      const sub = properties[name]
      if (isObject(sub)) {
        const problem = schemaViolation(sub, item, `${path}.${name}`)
        if (problem !== undefined) return problem
      } else if (schema["additionalProperties"] === false) return `${path}.${name}: not allowed`
      else if (isObject(schema["additionalProperties"])) {
        const problem = schemaViolation(schema["additionalProperties"], item, `${path}.${name}`)
        if (problem !== undefined) return problem
      }
    }
  }
  return undefined
}

// ---- rules ------------------------------------------------------------------------------------------

/**
 * Why a rule cannot be used (checked when the course tree is saved, so an unsafe pattern never
 * reaches a learner), or undefined. `path` names the field in the 400.
 */
export const ruleProblem = (rule: DeclarativeRule, path: string): string | undefined => {
  switch (rule.kind) {
    case "pattern":
      return rule.pattern === undefined ? undefined : (() => {
        const problem = patternProblem(rule.pattern, rule.caseInsensitive)
        return problem === undefined ? undefined : `${path}.pattern: ${problem}`
      })()
    case "json_schema":
      return schemaProblem(rule.schema, `${path}.schema`)
    case "fields": {
      const entries = Object.entries(rule.fields)
      if (entries.length === 0 || entries.length > maxFields) return `${path}.fields: 1 to ${maxFields} fields`
      for (const [name, field] of entries) {
        const problem = ruleProblem(field, `${path}.fields.${name}`)
        if (problem !== undefined) return problem
      }
      return undefined
    }
    default:
      return undefined
  }
}

const overridable = ["answers", "pattern", "value", "tolerance", "correct", "fields", "schema"] as const

/** The rule with the clue's expected values in place of the rule's (a clue that is not an object changes nothing). */
export const withClue = <R extends DeclarativeRule | FieldRule>(rule: R, clue: unknown): R => {
  if (!isObject(clue)) return rule
  const merged: Record<string, unknown> = { ...rule }
  for (const key of overridable) {
    if (!(key in clue)) continue
    // A clue comes from a pool or a generator: an unusable pattern or schema in it is ignored, never run.
    if (key === "pattern" && (typeof clue[key] !== "string" || patternProblem(clue[key]) !== undefined)) continue
    if (key === "schema" && schemaProblem(clue[key]) !== undefined) continue
    merged[key] = clue[key]
  }
  return merged as R
}

const wrong = (feedback?: string): CheckResult => ({ fraction: 0, verdict: "wrong", ...(feedback !== undefined ? { feedback } : {}) })
const invalid = (feedback: string): CheckResult => ({ fraction: 0, verdict: "invalid_reply", feedback })
const right: CheckResult = { fraction: 1, verdict: "accepted" }
const unconfigured = (what: string): CheckResult => invalid(`the step's checker has no ${what}; ask the course staff`)

const fold = (text: string, caseSensitive: boolean) => (caseSensitive ? text : text.toLocaleLowerCase())

const checkOne = (rule: FieldRule, reply: unknown): CheckResult => {
  switch (rule.kind) {
    case "exact": {
      if (typeof reply !== "string") return invalid("the reply is text")
      if (rule.answers === undefined) return unconfigured("answers")
      const trim = rule.trim !== false
      const caseSensitive = rule.caseSensitive === true
      const given = fold(trim ? reply.trim() : reply, caseSensitive)
      return rule.answers.some((a) => fold(trim ? a.trim() : a, caseSensitive) === given) ? right : wrong()
    }
    case "pattern": {
      if (typeof reply !== "string") return invalid("the reply is text")
      if (rule.pattern === undefined) return unconfigured("pattern")
      return cachedPattern(rule.pattern, rule.caseInsensitive === true).matches(reply.trim()) ? right : wrong()
    }
    case "numeric": {
      const text = typeof reply === "string" ? reply.trim().replace(",", ".") : undefined
      const number = typeof reply === "number" ? reply : text !== undefined && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : Number.NaN
      if (!Number.isFinite(number)) return invalid("the reply is a number")
      if (rule.value === undefined) return unconfigured("value")
      const tolerance = (rule.tolerance ?? 0) * (rule.relative === true ? Math.abs(rule.value) : 1)
      // A hair of slack for the binary representation of decimals (0.1 + 0.2).
      return Math.abs(number - rule.value) <= tolerance + 1e-9 * Math.max(1, Math.abs(rule.value)) ? right : wrong()
    }
    case "choice": {
      const chosen = typeof reply === "string" ? [reply] : Array.isArray(reply) && reply.every((id) => typeof id === "string") ? reply as Array<string> : undefined
      if (chosen === undefined || chosen.length > 50) return invalid("the reply is an option id or an array of option ids")
      if (rule.correct === undefined) return unconfigured("correct options")
      const correct = new Set(rule.correct)
      const picked = new Set(chosen)
      const hits = [...picked].filter((id) => correct.has(id)).length
      const misses = picked.size - hits
      if (hits === correct.size && misses === 0) return right
      if (rule.partial !== true) return wrong()
      const fraction = Math.max(0, (hits - misses) / correct.size)
      return fraction > 0 ? { fraction, verdict: "partial" } : wrong()
    }
    case "json_schema": {
      if (!isObject(rule.schema)) return unconfigured("schema")
      const problem = schemaViolation(rule.schema, reply)
      return problem === undefined ? right : wrong(problem)
    }
  }
}

/** Grades a reply: pure, total (every reply gets a result, never an exception), the answer never echoed. */
export const checkReply = (rule: DeclarativeRule, reply: unknown, clue?: unknown): CheckResult => {
  try {
    return checkWith(rule, reply, clue)
  } catch {
    // Only a malformed clue (values of the wrong type) can get here: the rule itself was checked on save.
    return invalid("the step's variant could not be checked; ask the course staff")
  }
}

const checkWith = (rule: DeclarativeRule, reply: unknown, clue: unknown): CheckResult => {
  const effective = withClue(rule, clue)
  if (effective.kind !== "fields") return checkOne(effective, reply)
  if (!isObject(reply)) return invalid("the reply is an object of fields")
  const fieldClue = isObject(clue) && isObject(clue["fields"]) ? clue["fields"] : {}
  const entries = Object.entries(effective.fields)
  const results = entries.map(([name, field]) => [name, checkOne(withClue(field, fieldClue[name]), reply[name])] as const)
  const fraction = results.reduce((sum, [, result]) => sum + result.fraction, 0) / Math.max(1, entries.length)
  const failing = results.filter(([, result]) => result.fraction < 1).map(([name]) => name)
  if (fraction === 1) return right
  const feedback = `fields to revise: ${failing.join(", ")}`
  return fraction > 0 ? { fraction, verdict: "partial", feedback } : { fraction: 0, verdict: "wrong", feedback }
}
