import { createHash, randomBytes } from "node:crypto"
import { canonicalJson } from "../../store/Idempotency.js"
import { type CheckerStatus, unpreflightedCheckerStatuses } from "../grading/GradingModel.js"
import { type CourseNode, maxNodes, type ValidationIssue } from "./Model.js"
import { stepGradingProblem } from "../steps/StepGrading.js"

/**
 * A course's node tree as pure functions: the structural rules a draft must always satisfy (400
 * when broken: duplicate keys, unknown parents, steps holding nodes, cycles), the validation issues
 * publishing looks at (no side effects), the difference between two trees, their content hash,
 * subtrees and fresh keys for copies from the library.
 */

/** The first structural problem of a tree, as `nodes.<i>.<field>: message`, or undefined. */
export const treeProblem = (nodes: ReadonlyArray<CourseNode>): string | undefined => {
  const byKey = new Map<string, CourseNode>()
  for (const [i, node] of nodes.entries()) {
    if (byKey.has(node.nodeKey)) return `nodes.${i}.nodeKey: duplicate nodeKey "${node.nodeKey}"`
    byKey.set(node.nodeKey, node)
  }
  for (const [i, node] of nodes.entries()) {
    if (node.kind === "step" && node.stepType === undefined) return `nodes.${i}.stepType: a step needs a stepType`
    if (node.kind === "module") {
      for (const field of ["stepType", "grading", "body"] as const) {
        if (node[field] !== undefined) return `nodes.${i}.${field}: a module has no ${field}; only steps do`
      }
    }
    if (node.grading?.passThreshold !== undefined && node.grading.passThreshold > node.grading.maxPoints) {
      return `nodes.${i}.grading.passThreshold: at most grading.maxPoints (${node.grading.maxPoints})`
    }
    const stepProblem = stepGradingProblem(node, `nodes.${i}`)
    if (stepProblem !== undefined) return stepProblem
    if (node.parentKey === undefined) continue
    const parent = byKey.get(node.parentKey)
    if (parent === undefined) return `nodes.${i}.parentKey: no node "${node.parentKey}" in the tree`
    if (parent.kind !== "module") return `nodes.${i}.parentKey: "${node.parentKey}" is a step; only modules hold nodes`
    // Walk up: reaching the node again is a cycle (a tree has at most `nodes.length` ancestors).
    let at: CourseNode | undefined = parent
    for (let steps = 0; at !== undefined; steps++) {
      if (at.nodeKey === node.nodeKey || steps > nodes.length) return `nodes.${i}.parentKey: "${node.parentKey}" makes a cycle`
      at = at.parentKey === undefined ? undefined : byKey.get(at.parentKey)
    }
  }
  return undefined
}

const gradedTypes = new Set(["quiz", "assignment", "code"])

/** Validation of a draft (Canvas MigrationIssue style): errors block publishing, warnings do not. */
export const validationIssues = (
  course: {
    readonly kind: "single" | "bundle"
    readonly nodes: ReadonlyArray<CourseNode>
    readonly requiredNodeKeys: ReadonlyArray<string>
    readonly members: ReadonlyArray<{ readonly courseUuid: string; readonly published: boolean }>
    /** The course's own checkers by uuid (lower case) with their status: a step may name no other, and publishes only with a preflighted one. */
    readonly checkers?: ReadonlyMap<string, CheckerStatus>
  }
): ReadonlyArray<ValidationIssue> => {
  const issues: Array<ValidationIssue> = []
  const structural = treeProblem(course.nodes)
  if (structural !== undefined) issues.push({ severity: "error", code: "invalid_tree", message: structural })
  if (course.kind === "bundle") {
    if (course.members.length === 0) issues.push({ severity: "error", code: "no_members", message: "A bundle needs at least one member course" })
    for (const member of course.members) {
      if (!member.published) {
        issues.push({ severity: "error", code: "member_unpublished", message: `Member course ${member.courseUuid} is not published` })
      }
    }
  } else if (!course.nodes.some((node) => node.kind === "step")) {
    issues.push({ severity: "error", code: "no_steps", message: "The course has no step; add at least one" })
  }
  const parents = new Set(course.nodes.map((node) => node.parentKey).filter((key) => key !== undefined))
  for (const node of course.nodes) {
    if (node.kind === "module" && !parents.has(node.nodeKey)) {
      issues.push({ severity: "warning", nodeKey: node.nodeKey, code: "empty_module", message: `Module "${node.title}" holds nothing` })
    }
    if (node.kind === "step" && gradedTypes.has(node.stepType ?? "") && node.grading === undefined) {
      issues.push({ severity: "error", nodeKey: node.nodeKey, code: "missing_grading", message: `Step "${node.title}" (${node.stepType}) needs grading` })
    }
    const checker = node.kind === "step" ? node.grading?.checkerUuid : undefined
    const checkerStatus = checker === undefined ? undefined : course.checkers?.get(checker.toLowerCase())
    if (checker !== undefined && course.checkers !== undefined && checkerStatus === undefined) {
      issues.push({ severity: "error", nodeKey: node.nodeKey, code: "unknown_checker", message: `Step "${node.title}" names checker ${checker}, which is not one of this course's` })
    }
    if (checkerStatus !== undefined && unpreflightedCheckerStatuses.includes(checkerStatus)) {
      issues.push({
        severity: "error",
        nodeKey: node.nodeKey,
        code: "checker_not_ready",
        message: `Step "${node.title}" names checker ${checker}, which is ${checkerStatus}; it must pass its preflight before the course publishes`
      })
    }
    if (node.kind === "step" && node.stepType === "text" && (node.body ?? "").trim() === "") {
      issues.push({ severity: "warning", nodeKey: node.nodeKey, code: "empty_body", message: `Text step "${node.title}" has no text` })
    }
    if (node.unlockOffsetDays !== undefined && node.dueOffsetDays !== undefined && node.dueOffsetDays < node.unlockOffsetDays) {
      issues.push({ severity: "error", nodeKey: node.nodeKey, code: "due_before_unlock", message: `Step "${node.title}" falls due before it unlocks` })
    }
  }
  const keys = new Set(course.nodes.map((node) => node.nodeKey))
  for (const key of course.requiredNodeKeys) {
    if (!keys.has(key)) issues.push({ severity: "error", nodeKey: key, code: "unknown_required_node", message: `Completion requires "${key}", which is not in the tree` })
  }
  return issues
}

/** nodeKeys added, removed and changed from `before` to `after`. */
export const treeDiff = (before: ReadonlyArray<CourseNode>, after: ReadonlyArray<CourseNode>) => {
  const old = new Map(before.map((node) => [node.nodeKey, canonicalJson(node)]))
  const now = new Set(after.map((node) => node.nodeKey))
  return {
    added: after.filter((node) => !old.has(node.nodeKey)).map((node) => node.nodeKey),
    removed: before.filter((node) => !now.has(node.nodeKey)).map((node) => node.nodeKey),
    changed: after.filter((node) => old.has(node.nodeKey) && old.get(node.nodeKey) !== canonicalJson(node)).map((node) => node.nodeKey)
  }
}

/** The content hash of a version: what a learner's content is (title, summary, tree, members). */
export const contentHash = (content: unknown): string => createHash("sha256").update(canonicalJson(content)).digest("hex")

/** What learners and the public see of a tree: keys, structure, titles and step types. */
export const outlineOf = (nodes: ReadonlyArray<CourseNode>) =>
  nodes.map((node) => ({
    nodeKey: node.nodeKey,
    ...(node.parentKey !== undefined ? { parentKey: node.parentKey } : {}),
    kind: node.kind,
    title: node.title,
    ...(node.stepType !== undefined ? { stepType: node.stepType } : {})
  }))

/** A node and everything under it, in tree order; its root loses `parentKey`. */
export const subtree = (nodes: ReadonlyArray<CourseNode>, rootKey: string): ReadonlyArray<CourseNode> => {
  const inside = new Set([rootKey])
  // Parents come before children in a valid flat list only by convention; loop until stable.
  for (let grown = true; grown;) {
    grown = false
    for (const node of nodes) {
      if (node.parentKey !== undefined && inside.has(node.parentKey) && !inside.has(node.nodeKey)) {
        inside.add(node.nodeKey)
        grown = true
      }
    }
  }
  return nodes.filter((node) => inside.has(node.nodeKey)).map((node) => {
    if (node.nodeKey !== rootKey) return node
    const { parentKey: _, ...root } = node
    return root
  })
}

/**
 * A copy of `nodes` with fresh keys not in `taken` (the original key with a random suffix, so
 * authors still recognise it), parent links remapped, and the root placed under `parentKey`.
 */
export const withFreshKeys = (
  nodes: ReadonlyArray<CourseNode>,
  taken: ReadonlySet<string>,
  parentKey: string | undefined
): ReadonlyArray<CourseNode> => {
  const fresh = new Map<string, string>()
  const used = new Set(taken)
  for (const node of nodes) {
    let key: string
    do key = `${node.nodeKey.slice(0, 56)}-${randomBytes(3).toString("hex")}`
    while (used.has(key))
    used.add(key)
    fresh.set(node.nodeKey, key)
  }
  return nodes.map((node) => {
    const { parentKey: oldParent, ...rest } = node
    const parent = oldParent !== undefined && fresh.has(oldParent) ? fresh.get(oldParent) : parentKey
    return { ...rest, nodeKey: fresh.get(node.nodeKey)!, ...(parent !== undefined ? { parentKey: parent } : {}) }
  })
}

export { maxNodes }
