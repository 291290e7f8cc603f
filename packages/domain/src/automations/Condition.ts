import { type Condition, type ConditionField, automationLimits, type RuleBody } from "./Rule.js"

/**
 * The condition grammar beyond its schema and the evaluator: pure functions,
 * property-tested in Condition.test.ts. A node is a group (`all` and/or `any`) or a leaf
 * (`field`, `op`, `value`); the root is at depth 1 and depth stays at most 6.
 */

/** A violation of the rule, at the path (dotted, as schema violations are named) where it is. */
export interface RuleProblem {
  readonly path: string
  readonly message: string
}

const numberField = (field: ConditionField) => field === "aggregate.revision"

const isGroup = (node: Condition) => node.all !== undefined || node.any !== undefined
const isLeafish = (node: Condition) => node.field !== undefined || node.op !== undefined || node.value !== undefined

/** The first problem of a condition tree, if any. */
export const conditionProblem = (node: Condition, path: string, depth = 1): RuleProblem | undefined => {
  if (depth > automationLimits.conditionDepth) {
    return { path, message: `conditions nest at most ${automationLimits.conditionDepth} levels deep` }
  }
  if (isGroup(node)) {
    if (isLeafish(node)) return { path, message: "a condition is either a group (all, any) or a leaf (field, op, value), not both" }
    for (const key of ["all", "any"] as const) {
      const items = node[key]
      if (items === undefined) continue
      for (let i = 0; i < items.length; i++) {
        const problem = conditionProblem(items[i]!, `${path}.${key}.${i}`, depth + 1)
        if (problem !== undefined) return problem
      }
    }
    return undefined
  }
  if (node.field === undefined) return { path: `${path}.field`, message: "a leaf needs field (or the node needs all or any)" }
  if (node.op === undefined) return { path: `${path}.op`, message: "a leaf needs op" }
  const value = node.value
  const at = `${path}.value`
  const numeric = numberField(node.field)
  switch (node.op) {
    case "exists":
      return value === undefined || typeof value === "boolean" ? undefined : { path: at, message: "exists takes no value or a boolean" }
    case "eq":
      if (value === undefined) return { path: at, message: "eq needs a value" }
      if (numeric) return typeof value === "number" ? undefined : { path: at, message: "eq on aggregate.revision needs a number" }
      return typeof value === "string" ? undefined : { path: at, message: `eq on ${node.field} needs a string` }
    case "in": {
      if (!Array.isArray(value)) return { path: at, message: "in needs an array of 1 to 30 values" }
      const want = numeric ? "number" : "string"
      return value.every((item) => typeof item === want)
        ? undefined
        : { path: at, message: `in on ${node.field} needs ${want}s only` }
    }
    case "contains":
      if (numeric) return { path: `${path}.op`, message: "contains does not apply to aggregate.revision" }
      return typeof value === "string" && value.length > 0 ? undefined : { path: at, message: "contains needs a non-empty string" }
    case "gte":
    case "lte":
      if (!numeric) return { path: `${path}.op`, message: `${node.op} applies only to aggregate.revision` }
      return typeof value === "number" ? undefined : { path: at, message: `${node.op} needs a number` }
  }
}

/**
 * The first problem of a decoded rule the schema cannot see (paths relative to the rule body,
 * `prefix` before them): the condition grammar, and under `command.execute` the arguments the
 * server binds, nulls in `data`, and `publicationUuid` with `expectedRevision` together.
 */
export const ruleProblem = (rule: RuleBody, prefix = ""): RuleProblem | undefined => {
  const filter = rule.trigger.filter
  if (filter !== undefined) {
    const problem = conditionProblem(filter, `${prefix}trigger.filter`)
    if (problem !== undefined) return problem
  }
  const action = rule.action
  if (action.type === "command.execute") {
    const args = action.arguments
    const data = args.data as Readonly<Record<string, unknown>>
    for (const [key, value] of Object.entries(data)) {
      if (value === null) return { path: `${prefix}action.arguments.data.${key}`, message: "null values are not allowed in data" }
    }
    if ((args.publicationUuid === undefined) !== (args.expectedRevision === undefined)) {
      return {
        path: `${prefix}action.arguments.${args.publicationUuid === undefined ? "publicationUuid" : "expectedRevision"}`,
        message: "publicationUuid and expectedRevision are given together (both to update an existing draft)"
      }
    }
  }
  return undefined
}

/** The event as the evaluator reads it: the envelope's fields, any of them possibly missing. */
export interface EventFacts {
  readonly type?: unknown
  readonly aggregate?: { readonly kind?: unknown; readonly uuid?: unknown; readonly revision?: unknown } | undefined
  readonly data?: Readonly<Record<string, unknown>> | undefined
}

/** A field's value in the event; `undefined` when missing (null counts as missing). */
export const fieldValue = (event: EventFacts, field: ConditionField): unknown => {
  let value: unknown
  switch (field) {
    case "type":
      value = event.type
      break
    case "aggregate.kind":
      value = event.aggregate?.kind
      break
    case "aggregate.uuid":
      value = event.aggregate?.uuid
      break
    case "aggregate.revision":
      value = event.aggregate?.revision
      break
    case "data.status":
      value = event.data?.["status"]
      break
    case "data.objectUuid":
      value = event.data?.["objectUuid"]
      break
  }
  return value === null ? undefined : value
}

/** The search normalisation: lower case, ё folded to е. */
export const normalize = (text: string) => text.toLowerCase().replaceAll("ё", "е")

const leafHolds = (node: Condition, actual: unknown): boolean => {
  const value = node.value
  switch (node.op) {
    case "exists":
      return value === false ? actual === undefined : actual !== undefined
    case "eq":
      return actual !== undefined && actual === value
    case "in":
      return actual !== undefined && Array.isArray(value) && value.some((item) => item === actual)
    case "contains":
      return typeof actual === "string" && typeof value === "string" && normalize(actual).includes(normalize(value))
    case "gte":
      return typeof actual === "number" && typeof value === "number" && actual >= value
    case "lte":
      return typeof actual === "number" && typeof value === "number" && actual <= value
    default:
      return false
  }
}

export interface TraceNode {
  readonly path: string
  readonly field?: string
  readonly op?: string
  readonly actual?: unknown
  readonly result: boolean
}

/**
 * Whether the condition holds for the event. A group holds when every child of `all` and some
 * child of `any` hold (both when both are present). Every node is evaluated (no short cut) when a
 * `trace` is given, so a dry run shows each one.
 */
export const evaluate = (node: Condition, event: EventFacts, trace?: Array<TraceNode>, path = "trigger.filter"): boolean => {
  if (isGroup(node)) {
    let result = true
    if (node.all !== undefined) {
      const results = node.all.map((child, i) => trace === undefined && !result ? false : evaluate(child, event, trace, `${path}.all.${i}`))
      result = results.every(Boolean)
    }
    if (node.any !== undefined) {
      const results = trace === undefined && !result
        ? [false]
        : node.any.map((child, i) => evaluate(child, event, trace, `${path}.any.${i}`))
      result = result && results.some(Boolean)
    }
    trace?.push({ path, result })
    return result
  }
  const field = node.field
  if (field === undefined) return false
  const actual = fieldValue(event, field)
  const result = leafHolds(node, actual)
  trace?.push({ path, field, op: node.op ?? "", ...(actual === undefined ? {} : { actual }), result })
  return result
}

/** Whether the rule matches the event: its type, then its filter (none: every event of the type). */
export const ruleMatches = (rule: Pick<RuleBody, "trigger">, event: EventFacts): boolean =>
  event.type === rule.trigger.eventType && (rule.trigger.filter === undefined || evaluate(rule.trigger.filter, event))
