
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import type { Actor } from "../../kernel/Authentication.js"
import { appendEvent } from "../../store/Outbox.js"
import { rowsDecoder, Timestamp } from "../../store/Rows.js"
import { versionNodes } from "../courses/CourseRepository.js"
import { type EnrollmentContext, enrollmentFor } from "./EnrollmentAccess.js"
import { markCriteriaMet } from "./EnrollmentRepository.js"
import type { CourseNode } from "../courses/Model.js"
import { insertModuleCompleted } from "../steps/StepStateRepository.js"

/**
 * Completion. The criteria are the course's completion
 * policy: `requiredNodeKeys` (steps, or modules standing for all their steps; none listed: every
 * step of the pinned version) must be completed. A module is completed when every step under it
 * is. Each first time is an event: `learning.module.completed` (once per module, remembered by a
 * `completed` row of the module's key in `learning_step_states`), `learning.course.completed`
 * (once, `criteria_met_at`), and on runs with `completeOnCriteria` the enrollment itself completes
 * (`learning.enrollment.completed`). `minScorePercent` is the grading side's:
 * it is reported, not enforced here.
 */

/** The steps under a node (itself when it is a step), in tree order. */
export const stepsUnder = (nodes: ReadonlyArray<CourseNode>, key: string): ReadonlyArray<string> => {
  const children = new Map<string, Array<CourseNode>>()
  for (const node of nodes) {
    if (node.parentKey === undefined) continue
    const list = children.get(node.parentKey) ?? []
    list.push(node)
    children.set(node.parentKey, list)
  }
  const out: Array<string> = []
  const walk = (nodeKey: string, depth: number) => {
    const node = nodes.find((n) => n.nodeKey === nodeKey)
    if (node === undefined || depth > nodes.length) return
    if (node.kind === "step") out.push(nodeKey)
    for (const child of children.get(nodeKey) ?? []) walk(child.nodeKey, depth + 1)
  }
  walk(key, 0)
  return out
}

/** The steps the criteria require. */
export const requiredSteps = (nodes: ReadonlyArray<CourseNode>, policy: { readonly requiredNodeKeys?: ReadonlyArray<string> }): ReadonlyArray<string> => {
  const listed = policy.requiredNodeKeys ?? []
  if (listed.length === 0) return nodes.filter((node) => node.kind === "step").map((node) => node.nodeKey)
  return [...new Set(listed.flatMap((key) => stepsUnder(nodes, key)))]
}

const Facts = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  run_uuid: Schema.String,
  course_uuid: Schema.String,
  status: Schema.String,
  revision: Schema.Number,
  criteria_met_at: Schema.NullOr(Timestamp),
  complete_on_criteria: Schema.Boolean,
  completion_policy: Schema.Struct({
    requiredNodeKeys: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
    minScorePercent: Schema.optionalWith(Schema.Number, { exact: true })
  }),
  version_number: Schema.Number,
  content_hash: Schema.String,
  published_at: Timestamp
})
const decodeFacts = rowsDecoder(Facts)

/** The enrollment's completion facts, locked, with its pinned tree (read through the version cache, not parsed again). */
const loadFacts = (enrollmentUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT e.uuid, e.profile_uuid, e.run_uuid, e.course_uuid, e.status, e.revision, e.criteria_met_at, r.complete_on_criteria,
          c.completion_policy, r.version_number, v.content_hash, v.published_at
        FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid JOIN learning_courses c ON c.uuid = e.course_uuid
          JOIN learning_course_versions v ON v.course_uuid = r.course_uuid AND v.number = r.version_number
        WHERE e.uuid = ${enrollmentUuid} FOR NO KEY UPDATE OF e`,
      decodeFacts
    )
    if (row === undefined) return undefined
    return { ...row, nodes: yield* versionNodes(row) }
  })

const StepStatus = Schema.Struct({ node_key: Schema.String, status: Schema.String })
const decodeStatuses = rowsDecoder(StepStatus)

/**
 * Runs after a step state changed to completed, in the same transaction: emits the module,
 * course and enrollment completion events that became true for the first time. The enrollment's
 * lock is already held (`recordStepProgresses` takes it before the step states).
 */
export const afterStepChange = (enrollmentUuid: string, at: Date): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const facts = yield* loadFacts(enrollmentUuid)
    if (facts === undefined) return
    const states = yield* Effect.flatMap(
      sql`SELECT node_key, status FROM learning_step_states WHERE enrollment_uuid = ${enrollmentUuid}`,
      decodeStatuses
    )
    const done = new Set(states.filter((row) => row.status === "completed").map((row) => row.node_key))
    const context = { audience: [facts.profile_uuid], courseUuid: facts.course_uuid, runUuid: facts.run_uuid, enrollmentUuid }
    const aggregate = { kind: "learning_enrollment", uuid: enrollmentUuid, revision: facts.revision }
    for (const module of facts.nodes.filter((node) => node.kind === "module")) {
      if (done.has(module.nodeKey)) continue
      const steps = stepsUnder(facts.nodes, module.nodeKey)
      if (steps.length === 0 || !steps.every((key) => done.has(key))) continue
      yield* insertModuleCompleted(enrollmentUuid, module.nodeKey, at)
      yield* appendEvent({
        type: "learning.module.completed",
        aggregate,
        data: { objectUuid: enrollmentUuid, status: "completed", nodeKey: module.nodeKey },
        context: { ...context, nodeKey: module.nodeKey }
      })
    }
    if (facts.criteria_met_at !== null) return
    const required = requiredSteps(facts.nodes, facts.completion_policy)
    if (required.length === 0 || !required.every((key) => done.has(key))) return
    const completes = facts.complete_on_criteria && (facts.status === "active" || facts.status === "paused")
    const after = { ...aggregate, revision: yield* markCriteriaMet(enrollmentUuid, at, completes) }
    yield* appendEvent({ type: "learning.course.completed", aggregate: after, data: { objectUuid: enrollmentUuid, status: "completed" }, context })
    if (completes) {
      yield* appendEvent({ type: "learning.enrollment.completed", aggregate: after, data: { objectUuid: enrollmentUuid, status: "completed" }, context })
    }
  })

const StepState = Schema.Struct({
  node_key: Schema.String,
  status: Schema.Literal("locked", "available", "in_progress", "completed", "failed"),
  completed_at: Schema.NullOr(Timestamp)
})
const decodeStates = rowsDecoder(StepState)

/** `completion.get`: progress against the criteria and the completion record. */
export const getCompletion = (actor: Actor, enrollmentUuid: string) =>
  Effect.flatMap(enrollmentFor(actor, enrollmentUuid, { lock: false }), completionOf)

/** The completion of an enrollment already read (its course and pinned tree): `completion.get`, the enrollment export. */
export const completionOf = (
  { course, enrollment, nodes }: Pick<EnrollmentContext, "course" | "enrollment" | "nodes">
) =>
  Effect.gen(function*() {
    const enrollmentUuid = enrollment.uuid
    const sql = yield* SqlClient.SqlClient
    const states = new Map(
      (yield* Effect.flatMap(
        sql`SELECT node_key, status, completed_at FROM learning_step_states WHERE enrollment_uuid = ${enrollmentUuid}`,
        decodeStates
      )).map((row) => [row.node_key, row])
    )
    const policy = course.completion_policy
    const required = new Set(requiredSteps(nodes, policy))
    const steps = nodes.filter((node) => node.kind === "step").map((node) => {
      const row = states.get(node.nodeKey)
      return {
        nodeKey: node.nodeKey,
        required: required.has(node.nodeKey),
        status: row?.status ?? "locked",
        ...(row?.completed_at != null ? { completedAt: row.completed_at } : {})
      }
    })
    const done = steps.filter((step) => step.required && step.status === "completed").length
    const modules = nodes.filter((node) => node.kind === "module").map((node) => {
      const row = states.get(node.nodeKey)
      return { nodeKey: node.nodeKey, completed: row?.status === "completed", ...(row?.completed_at != null ? { completedAt: row.completed_at } : {}) }
    })
    return {
      enrollmentUuid,
      status: enrollment.status,
      criteria: {
        requiredNodeKeys: policy.requiredNodeKeys ?? [],
        ...(policy.minScorePercent !== undefined ? { minScorePercent: policy.minScorePercent } : {})
      },
      requiredSteps: required.size,
      completedRequiredSteps: done,
      percent: required.size === 0 ? 0 : Math.floor((done * 100) / required.size),
      criteriaMet: enrollment.criteria_met_at !== null,
      ...(enrollment.criteria_met_at !== null ? { criteriaMetAt: enrollment.criteria_met_at } : {}),
      ...(enrollment.completed_at !== null ? { completedAt: enrollment.completed_at } : {}),
      steps,
      modules
    }
  })
