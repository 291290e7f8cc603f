import type { RuleCondition } from "../../model.js"

/**
 * The rule builder's condition tree and its translation to and from the API's condition
 * (Condition in packages/domain/src/automations/Rule.ts; its checks in Condition.ts). The builder
 * edits text; what it sends is checked here first, so a problem is named at its own condition.
 */

/** The spec's bounds (automationLimits in packages/domain/src/automations/Rule.ts). */
export const conditionLimits = { depth: 6, groupItems: 10, arrayValues: 30 } as const

export const fields = ["type", "aggregate.kind", "aggregate.uuid", "aggregate.revision", "data.status", "data.objectUuid"] as const
export type Field = (typeof fields)[number]
export const ops = ["exists", "eq", "in", "contains", "gte", "lte"] as const
export type Op = (typeof ops)[number]

/** The operators a field takes: `aggregate.revision` is the one number (gte, lte; no contains). */
export const opsOf = (field: Field): ReadonlyArray<Op> =>
  field === "aggregate.revision" ? ["exists", "eq", "in", "gte", "lte"] : ["exists", "eq", "in", "contains"]

export interface Leaf {
  readonly kind: "leaf"
  readonly id: number
  readonly field: Field
  readonly op: Op
  /** As typed: for `in`, values separated by commas; for `exists`, "yes" or "no". */
  readonly value: string
}

export interface Group {
  readonly kind: "group"
  readonly id: number
  readonly mode: "all" | "any"
  readonly children: ReadonlyArray<Node>
}

export type Node = Leaf | Group

let nextId = 1
/** A fresh node id (React keys and element ids). */
export const newId = () => nextId++
/** Numbers nodes from 1 again: the server's render and the browser's first one give the same ids. */
export const resetIds = () => {
  nextId = 1
}

export const newLeaf = (): Leaf => ({ kind: "leaf", id: newId(), field: "data.status", op: "eq", value: "" })
export const newGroup = (mode: "all" | "any" = "any"): Group => ({ kind: "group", id: newId(), mode, children: [newLeaf()] })

/** A problem of one node: its id and what is wrong (a message key of the page, `rules.problem.*`). */
export interface TreeProblem {
  readonly id: number
  readonly problem: "empty" | "value" | "number" | "list" | "tooMany"
}

const isNumber = (text: string) => text.trim() !== "" && Number.isFinite(Number(text))
const listOf = (text: string) => text.split(",").map((item) => item.trim()).filter((item) => item !== "")

/** The leaf's value as the API takes it, or a problem. */
const valueOf = (leaf: Leaf): { readonly value?: RuleCondition["value"]; readonly problem?: TreeProblem["problem"] } => {
  const numeric = leaf.field === "aggregate.revision"
  switch (leaf.op) {
    case "exists":
      return leaf.value === "no" ? { value: false } : {}
    case "eq":
    case "contains":
      if (leaf.value.trim() === "") return { problem: "value" }
      if (numeric) return isNumber(leaf.value) ? { value: Number(leaf.value) } : { problem: "number" }
      return { value: leaf.value.trim() }
    case "gte":
    case "lte":
      return isNumber(leaf.value) ? { value: Number(leaf.value) } : { problem: "number" }
    case "in": {
      const items = listOf(leaf.value)
      if (items.length === 0 || items.length > conditionLimits.arrayValues) return { problem: "list" }
      if (numeric) return items.every(isNumber) ? { value: items.map(Number) } : { problem: "number" }
      return { value: items }
    }
  }
}

/** The API's condition of a node, with the problems found on the way (none: it can be sent). */
export const toCondition = (node: Node, problems: Array<TreeProblem> = []): RuleCondition => {
  if (node.kind === "leaf") {
    const { problem, value } = valueOf(node)
    if (problem !== undefined) problems.push({ id: node.id, problem })
    return { field: node.field, op: node.op, ...(value === undefined ? {} : { value }) }
  }
  if (node.children.length === 0) problems.push({ id: node.id, problem: "empty" })
  if (node.children.length > conditionLimits.groupItems) problems.push({ id: node.id, problem: "tooMany" })
  return { [node.mode]: node.children.map((child) => toCondition(child, problems)) }
}

/**
 * The rule's filter: none when the root group is empty (every event of the type), else the root
 * as the API's condition.
 */
export const filterOf = (root: Group, problems: Array<TreeProblem> = []): RuleCondition | undefined =>
  root.children.length === 0 ? undefined : toCondition(root, problems)

const leafOf = (condition: RuleCondition): Leaf => {
  const field = (fields as ReadonlyArray<string>).includes(condition.field ?? "") ? condition.field as Field : "type"
  const op = (ops as ReadonlyArray<string>).includes(condition.op ?? "") ? condition.op as Op : "exists"
  const value = condition.value
  const text = op === "exists"
    ? (value === false ? "no" : "yes")
    : Array.isArray(value) ? value.join(", ") : value === undefined ? "" : String(value)
  return { kind: "leaf", id: newId(), field, op, value: text }
}

/**
 * The builder's tree of a condition. A node with both `all` and `any` (the API allows it: every
 * one of `all` and some of `any`) becomes an "all" group whose last child is the "any" group.
 */
export const treeOf = (condition: RuleCondition | undefined): Group => {
  if (condition === undefined) return { kind: "group", id: newId(), mode: "all", children: [] }
  if (condition.all === undefined && condition.any === undefined) return { kind: "group", id: newId(), mode: "all", children: [leafOf(condition)] }
  const child = (c: RuleCondition): Node => c.all === undefined && c.any === undefined ? leafOf(c) : treeOf(c)
  if (condition.all !== undefined && condition.any !== undefined) {
    return {
      kind: "group", id: newId(), mode: "all",
      children: [...condition.all.map(child), { kind: "group", id: newId(), mode: "any", children: condition.any.map(child) }]
    }
  }
  const mode = condition.all !== undefined ? "all" : "any"
  return { kind: "group", id: newId(), mode, children: (condition[mode] ?? []).map(child) }
}

/** The node with `id` changed by `change` (the rest kept as it is). */
export const updateNode = (node: Node, id: number, change: (node: Node) => Node | undefined): Node | undefined => {
  if (node.id === id) return change(node)
  if (node.kind === "leaf") return node
  const children = node.children.flatMap((child) => {
    const changed = updateNode(child, id, change)
    return changed === undefined ? [] : [changed]
  })
  return { ...node, children }
}

/**
 * The number a condition is called by on the page and in a dry run's verdicts: "1", "2.1", …
 * (its place among its group's items, then its parent's); the root is "".
 */
export const numberOfPath = (path: string): string | undefined => {
  const prefix = "trigger.filter"
  if (path !== prefix && !path.startsWith(`${prefix}.`)) return undefined
  const parts = path.slice(prefix.length).split(".").filter((part) => part !== "")
  const numbers: Array<number> = []
  for (let i = 0; i < parts.length; i += 2) {
    if (parts[i] !== "all" && parts[i] !== "any") return undefined
    const index = Number(parts[i + 1])
    if (!Number.isInteger(index)) return undefined
    numbers.push(index + 1)
  }
  return numbers.join(".")
}
