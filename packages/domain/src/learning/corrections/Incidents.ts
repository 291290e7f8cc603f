import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import { once } from "../Commands.js"
import {
  AffectedLearner,
  CompensationItem,
  CompensationPlan,
  type CompensationPlanT,
  Incident,
  IncidentKind,
  IncidentStatus,
  type IncidentT,
  PlanProblem
} from "./CorrectionsModel.js"
import { stepDates } from "../enrollments/Dates.js"
import { insertPlan, markPlanApplied } from "../enrollments/PlanRepository.js"
import { pinnedNodes } from "../enrollments/EnrollmentAccess.js"
import { insertOverride, staffOnRecord, withDeadlineChange } from "./Extensions.js"
import { appendScoreLayer } from "../grading/Layers.js"
import { insertGradeJob } from "../grading/GradingJobRepository.js"
import { PlanExpired, PlanStale } from "../LearningErrors.js"
import type { CourseNode } from "../courses/Model.js"
import { gradesFrozenAt, loadRun, type RunRow } from "../courses/RunRepository.js"
import { recordStepProgress } from "../steps/StepStates.js"
import { loadSubmission } from "../steps/SubmissionViews.js"
import { requeueSubmission } from "../steps/SubmissionRepository.js"
import { submissionAllows } from "../steps/SubmissionMachine.js"

/**
 * Incidents: an outage or content error of a
 * run over a window. The affected learners are computed when it is recorded (and again at each
 * preview): active or paused enrollments with a submission in the window on the incident's steps
 * (or graded by its checker), or with one of those steps falling due inside the window.
 * Compensation is plan-then-commit: the preview stores extensions, attempt refunds, excused
 * steps and requeued failed checks with the base revisions it read; the apply re-checks them
 * (409 `plan_stale`, 410 `plan_expired`), applies exactly the items, and resolves the incident.
 */

const dayMs = 86_400_000
const planHours = 24

interface Affected {
  readonly enrollmentUuid: string
  readonly profileUuid: string
  readonly nodeKeys: Array<string>
  readonly submissionUuids: Array<string>
}

const IncidentRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  kind: IncidentKind,
  window_from: Timestamp,
  window_to: Timestamp,
  node_keys: Schema.Array(Schema.String),
  checker_uuid: Schema.NullOr(Schema.String),
  description: Schema.String,
  affected: Schema.Array(AffectedLearner),
  plan_uuid: Schema.NullOr(Schema.String),
  status: IncidentStatus,
  created_by: Schema.String,
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp,
  resolved_at: Schema.NullOr(Timestamp)
})
type IncidentRow = typeof IncidentRow.Type

const columns = selectList(IncidentRow, "i")
const decodeIncidents = rowsDecoder(IncidentRow)
const decodePositionedIncidents = rowsDecoder(Schema.Struct({ ...IncidentRow.fields, position: Schema.String }))

/** A row's uuid and revision: the base a plan is checked against. */
const Revisioned = Schema.Struct({ uuid: Schema.String, revision: Schema.Number })
const decodeRevisioned = rowsDecoder(Revisioned)

const Bases = Schema.Struct({
  incident: Schema.Number,
  enrollments: Schema.mutable(Schema.Record({ key: Schema.String, value: Schema.Number })),
  submissions: Schema.mutable(Schema.Record({ key: Schema.String, value: Schema.Number }))
})
type Bases = typeof Bases.Type

/** A compensation plan's row (`learning_plans` of kind `compensation`); items keep their dates as ISO text. */
const PlanRow = Schema.Struct({
  uuid: Schema.String,
  run_uuid: Schema.String,
  base_revisions: Bases,
  input: Schema.Struct({ incidentUuid: Schema.String }),
  items: Schema.Array(Schema.Struct({ ...CompensationItem.fields, dueBefore: Schema.optional(Schema.String), dueAfter: Schema.optional(Schema.String) })),
  blocking: Schema.Array(PlanProblem),
  status: Schema.Literal("ready", "applied", "stale", "expired"),
  expires_at: Timestamp,
  created_at: Timestamp
})
type PlanRow = typeof PlanRow.Type

const planView = (row: PlanRow): CompensationPlanT => ({
  uuid: row.uuid,
  kind: "compensation",
  status: row.status === "ready" && row.expires_at.getTime() <= Date.now() ? "expired" : row.status,
  incidentUuid: row.input.incidentUuid,
  runUuid: row.run_uuid,
  baseRevisions: row.base_revisions as unknown as Record<string, unknown>,
  items: row.items.map(({ dueAfter, dueBefore, ...item }) => ({
    ...item,
    ...(dueBefore !== undefined ? { dueBefore: new Date(dueBefore) } : {}),
    ...(dueAfter !== undefined ? { dueAfter: new Date(dueAfter) } : {})
  })),
  blocking: row.blocking,
  expiresAt: row.expires_at,
  createdAt: row.created_at
})

const planColumns = selectList(PlanRow)
const decodePlans = rowsDecoder(PlanRow)

const loadPlan = (uuid: string, lock: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT ${sql.literal(planColumns)} FROM learning_plans WHERE uuid = ${uuid} AND kind = 'compensation'
        ${lock ? sql.literal("FOR UPDATE") : sql``}`,
        decodePlans
      ),
      (rows) => rows[0]
    ))

const incidentView = (row: IncidentRow, plan: PlanRow | undefined): IncidentT => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  runUuid: row.run_uuid,
  kind: row.kind,
  window: { from: row.window_from, to: row.window_to },
  nodeKeys: row.node_keys,
  ...(row.checker_uuid !== null ? { checkerUuid: row.checker_uuid } : {}),
  description: row.description,
  affected: row.affected,
  status: row.status,
  ...(row.plan_uuid !== null ? { planUuid: row.plan_uuid } : {}),
  ...(plan !== undefined ? { plan: planView(plan) } : {}),
  createdBy: row.created_by,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  ...(row.resolved_at !== null ? { resolvedAt: row.resolved_at } : {})
})

const withPlan = (row: IncidentRow) =>
  Effect.map(row.plan_uuid === null ? Effect.succeed(undefined) : loadPlan(row.plan_uuid, false), (plan) => incidentView(row, plan))

/** The steps an incident concerns: those named, else those its checker grades, else every step. */
const incidentSteps = (nodes: ReadonlyArray<CourseNode>, nodeKeys: ReadonlyArray<string>, checkerUuid: string | null) =>
  nodes.filter((node) =>
    node.kind === "step" &&
    (nodeKeys.length > 0 ? nodeKeys.includes(node.nodeKey) : checkerUuid === null || node.grading?.checkerUuid === checkerUuid)
  ).map((node) => node.nodeKey)

const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decodeLearners = rowsDecoder(Schema.Struct({ uuid: Schema.String, profile_uuid: Schema.String }))
const decodeWindowSubmissions = rowsDecoder(Schema.Struct({ uuid: Schema.String, enrollment_uuid: Schema.String, node_key: Schema.String }))

/** Computes the affected learners of an incident (reads only). */
const computeAffected = (
  run: RunRow,
  window: { readonly from: Date; readonly to: Date },
  nodeKeys: ReadonlyArray<string>,
  checkerUuid: string | null
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const nodes = yield* pinnedNodes(run.uuid)
    const steps = incidentSteps(nodes, nodeKeys, checkerUuid)
    const byEnrollment = new Map<string, Affected>()
    const enrollments = yield* Effect.flatMap(
      sql`SELECT uuid, profile_uuid FROM learning_enrollments
      WHERE run_uuid = ${run.uuid} AND status IN ('active', 'paused') ORDER BY created_at, uuid`,
      decodeLearners
    )
    const profiles = new Map(enrollments.map((row) => [row.uuid, row.profile_uuid]))
    const touch = (enrollmentUuid: string, nodeKey: string, submissionUuid?: string) => {
      const entry = byEnrollment.get(enrollmentUuid) ?? { enrollmentUuid, profileUuid: profiles.get(enrollmentUuid)!, nodeKeys: [], submissionUuids: [] }
      if (!entry.nodeKeys.includes(nodeKey)) entry.nodeKeys.push(nodeKey)
      if (submissionUuid !== undefined && !entry.submissionUuids.includes(submissionUuid)) entry.submissionUuids.push(submissionUuid)
      byEnrollment.set(enrollmentUuid, entry)
    }
    if (steps.length > 0 && enrollments.length > 0) {
      const submissions = yield* Effect.flatMap(
        sql`SELECT uuid, enrollment_uuid, node_key
        FROM learning_submissions WHERE run_uuid = ${run.uuid} AND node_key IN ${sql.in(steps)} AND status <> 'cancelled'
          AND submitted_at >= ${window.from} AND submitted_at < ${window.to}
          ${checkerUuid !== null ? sql`AND checker_uuid = ${checkerUuid}` : sql``}
        ORDER BY submitted_at, uuid`,
        decodeWindowSubmissions
      )
      for (const row of submissions) if (profiles.has(row.enrollment_uuid)) touch(row.enrollment_uuid, row.node_key, row.uuid)
      for (const enrollment of enrollments) {
        const dates = yield* stepDates(enrollment.uuid)
        for (const key of steps) {
          const due = dates.get(key)?.dueAt
          if (due !== undefined && due.getTime() >= window.from.getTime() && due.getTime() < window.to.getTime()) touch(enrollment.uuid, key)
        }
      }
    }
    return [...byEnrollment.values()]
  })

const incidentFor = (actor: Actor, operation: "learning.incidents.get" | "learning.incidents.preview" | "learning.incidents.apply", uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM learning_incidents i WHERE i.uuid = ${uuid}
      ${lock ? sql.literal("FOR UPDATE") : sql``}`,
      decodeIncidents
    )
    if (row === undefined) return yield* new NotFound({ message: `No incident ${uuid}` })
    yield* staffOnRecord(actor, operation, row, `No incident ${uuid}`)
    return row
  })

const runOf = (actor: Actor, operation: "learning.incidents.create" | "learning.incidents.list", runUuid: string) =>
  Effect.gen(function*() {
    const run = yield* loadRun(runUuid, { lock: false })
    yield* staffOnRecord(actor, operation, { course_uuid: run.course_uuid, run_uuid: runUuid }, `No run ${runUuid}`)
    return run
  })

export interface IncidentCreateInput {
  readonly requestUuid: string
  readonly kind: IncidentRow["kind"]
  readonly window: { readonly from: Date; readonly to: Date }
  readonly nodeKeys?: ReadonlyArray<string> | undefined
  readonly checkerUuid?: string | undefined
  readonly description: string
}

export const createIncident = (actor: Actor, runUuid: string, input: IncidentCreateInput) =>
  once(actor, "learning.incidents.create", input, Incident, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (input.window.to.getTime() <= input.window.from.getTime()) return yield* new InvalidRequest({ message: "window.to: must be after window.from" })
    const run = yield* runOf(actor, "learning.incidents.create", runUuid)
    const nodes = yield* pinnedNodes(runUuid)
    const nodeKeys = [...new Set(input.nodeKeys ?? [])]
    for (const key of nodeKeys) {
      if (!nodes.some((node) => node.nodeKey === key && node.kind === "step")) return yield* new InvalidRequest({ message: `nodeKeys: no step "${key}" in the run's version` })
    }
    if (input.checkerUuid !== undefined) {
      const [checker] = yield* sql`SELECT 1 FROM learning_checkers WHERE uuid = ${input.checkerUuid} AND course_uuid = ${run.course_uuid}`
      if (checker === undefined) return yield* new InvalidRequest({ message: `checkerUuid: no checker ${input.checkerUuid} in this course` })
    }
    const affected = yield* computeAffected(run, input.window, nodeKeys, input.checkerUuid ?? null)
    const [row] = yield* Effect.flatMap(
      sql`INSERT INTO learning_incidents AS i (uuid, course_uuid, run_uuid, kind, window_from, window_to, node_keys,
        checker_uuid, description, affected, created_by)
      VALUES (${crypto.randomUUID()}, ${run.course_uuid}, ${runUuid}, ${input.kind}, ${input.window.from}, ${input.window.to},
        ${JSON.stringify(nodeKeys)}::jsonb, ${input.checkerUuid ?? null}, ${input.description}, ${JSON.stringify(affected)}::jsonb, ${actor.profileUuid})
      RETURNING ${sql.literal(columns)}`,
      decodeIncidents
    )
    yield* appendAudit({
      courseUuid: run.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: "incident.create",
      subjectKind: "incident",
      subjectUuid: row!.uuid,
      before: null,
      after: { kind: input.kind, window: input.window, nodeKeys, affected: affected.length },
      reason: input.description,
      requestUuid: input.requestUuid
    })
    return incidentView(row!, undefined)
  }))

export const listIncidents = (
  actor: Actor,
  runUuid: string,
  query: { readonly status?: IncidentRow["status"] | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* runOf(actor, "learning.incidents.list", runUuid)
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)}, i.created_at::text AS position
      FROM learning_incidents i WHERE i.run_uuid = ${runUuid}
        ${query.status !== undefined ? sql`AND i.status = ${query.status}` : sql``}
        ${position._tag === "Some" ? sql`AND (i.created_at, i.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY i.created_at DESC, i.uuid DESC LIMIT ${limit + 1}`,
      decodePositionedIncidents
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => incidentView(row, undefined))
  })

export const getIncident = (actor: Actor, uuid: string) => Effect.flatMap(incidentFor(actor, "learning.incidents.get", uuid, false), withPlan)

export interface CompensationInput {
  readonly requestUuid: string
  readonly extendDays?: number | undefined
  readonly refundAttempts?: number | undefined
  readonly excuseNodeKeys?: ReadonlyArray<string> | undefined
  readonly requeue?: boolean | undefined
}

const decodeFailedChecks = rowsDecoder(
  Schema.Struct({ uuid: Schema.String, enrollment_uuid: Schema.String, node_key: Schema.String, revision: Schema.Number })
)

/** Stores a compensation plan (the plan row and the incident's pointer to its latest plan; no business state). */
export const previewCompensation = (actor: Actor, incidentUuid: string, input: CompensationInput) =>
  once(actor, "learning.incidents.preview", input, CompensationPlan, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const incident = yield* incidentFor(actor, "learning.incidents.preview", incidentUuid, true)
    if (incident.status !== "open") return yield* new InvalidState({ message: "The incident is resolved" })
    const run = yield* loadRun(incident.run_uuid, { lock: false })
    const nodes = yield* pinnedNodes(run.uuid)
    const excuse = [...new Set(input.excuseNodeKeys ?? [])]
    for (const key of excuse) {
      if (!nodes.some((node) => node.nodeKey === key && node.kind === "step")) return yield* new InvalidRequest({ message: `excuseNodeKeys: no step "${key}" in the run's version` })
    }
    if (input.extendDays === undefined && input.refundAttempts === undefined && excuse.length === 0 && input.requeue !== true) {
      return yield* new InvalidRequest({ message: "Give extendDays, refundAttempts, excuseNodeKeys or requeue" })
    }
    const affected = yield* computeAffected(run, { from: incident.window_from, to: incident.window_to }, incident.node_keys, incident.checker_uuid)
    const items: Array<PlanRow["items"][number]> = []
    const bases: Bases = { incident: incident.revision, enrollments: {}, submissions: {} }
    const revisions = affected.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT uuid, revision FROM learning_enrollments
      WHERE uuid IN ${sql.in(affected.map((a) => a.enrollmentUuid))}`,
      decodeRevisioned
    )
    for (const row of revisions) bases.enrollments[row.uuid] = row.revision
    for (const entry of affected) {
      const dates = yield* stepDates(entry.enrollmentUuid)
      for (const nodeKey of entry.nodeKeys) {
        const due = dates.get(nodeKey)?.dueAt
        if (input.extendDays !== undefined && due !== undefined) {
          items.push({ kind: "extension", enrollmentUuid: entry.enrollmentUuid, nodeKey, dueBefore: due.toISOString(),
            dueAfter: new Date(due.getTime() + input.extendDays * dayMs).toISOString() })
        }
        const node = nodes.find((candidate) => candidate.nodeKey === nodeKey)
        if (input.refundAttempts !== undefined && node?.grading?.attempts !== undefined) {
          items.push({ kind: "refund", enrollmentUuid: entry.enrollmentUuid, nodeKey, attempts: input.refundAttempts })
        }
      }
      for (const nodeKey of excuse) items.push({ kind: "excuse", enrollmentUuid: entry.enrollmentUuid, nodeKey })
    }
    if (input.requeue === true) {
      const failed = affected.flatMap((a) => a.submissionUuids)
      const rows = failed.length === 0 ? [] : yield* Effect.flatMap(
        sql`
        SELECT uuid, enrollment_uuid, node_key, revision FROM learning_submissions WHERE uuid IN ${sql.in(failed)} AND status = 'check_failed'
        ORDER BY submitted_at, uuid`,
        decodeFailedChecks
      )
      for (const row of rows) {
        items.push({ kind: "requeue", enrollmentUuid: row.enrollment_uuid, nodeKey: row.node_key, submissionUuid: row.uuid })
        bases.submissions[row.uuid] = row.revision
      }
    }
    const blocking: Array<CompensationPlanT["blocking"][number]> = []
    const frozen = gradesFrozenAt(run)
    if (frozen !== undefined && frozen.getTime() <= Date.now()) blocking.push({ code: "grade_frozen", message: "The run's grades are frozen" })
    const uuid = crypto.randomUUID()
    const plan = yield* insertPlan({
      uuid,
      kind: "compensation",
      courseUuid: incident.course_uuid,
      runUuid: incident.run_uuid,
      createdBy: actor.profileUuid,
      baseRevisions: bases,
      input: { ...input, incidentUuid },
      result: { affected: affected.length },
      items,
      blocking,
      hours: planHours
    })
    // The incident points at its latest plan (its own record; not business state of any learner).
    yield* sql`UPDATE learning_incidents SET plan_uuid = ${uuid} WHERE uuid = ${incidentUuid}`
    return planView(plan)
  }))

const DeadlineTargetRow = Schema.Struct({ uuid: Schema.String, profile_uuid: Schema.String, course_uuid: Schema.String, run_uuid: Schema.String })
const deadlineTargetColumns = selectList(DeadlineTargetRow)
const decodeDeadlineTargets = rowsDecoder(DeadlineTargetRow)

/** Commits the compensation plan exactly: every base re-checked first, then each item; the incident is resolved. */
export const applyCompensation = (actor: Actor, incidentUuid: string, input: { readonly requestUuid: string; readonly planUuid: string }) =>
  once(actor, "learning.incidents.apply", input, Incident, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const incident = yield* incidentFor(actor, "learning.incidents.apply", incidentUuid, true)
    const plan = yield* loadPlan(input.planUuid, true)
    if (plan === undefined || plan.input.incidentUuid !== incidentUuid) return yield* new NotFound({ message: `planUuid: no compensation plan ${input.planUuid} of this incident` })
    if (incident.status !== "open") return yield* new InvalidState({ message: "The incident is resolved" })
    if (plan.status !== "ready") return yield* new InvalidState({ message: `The plan is ${plan.status}` })
    if (plan.expires_at.getTime() <= Date.now()) return yield* new PlanExpired({ message: "The plan is older than 24 hours; preview again" })
    if (plan.blocking.length > 0) return yield* new InvalidState({ message: `The plan has blocking problems, first: ${plan.blocking[0]!.message}` })
    const bases = plan.base_revisions
    if (incident.revision !== bases.incident) return yield* new PlanStale({ message: "The incident changed since the preview; preview again" })
    const enrollmentUuids = Object.keys(bases.enrollments)
    if (enrollmentUuids.length > 0) {
      const rows = yield* Effect.flatMap(
        sql`SELECT uuid, revision FROM learning_enrollments
        WHERE uuid IN ${sql.in(enrollmentUuids)} ORDER BY uuid FOR UPDATE`,
        decodeRevisioned
      )
      const moved = rows.find((row) => row.revision !== bases.enrollments[row.uuid])
      if (moved !== undefined || rows.length !== enrollmentUuids.length) {
        return yield* new PlanStale({ message: `Enrollment ${moved?.uuid ?? ""} changed since the preview; preview again` })
      }
    }
    const submissionUuids = Object.keys(bases.submissions)
    if (submissionUuids.length > 0) {
      const rows = yield* Effect.flatMap(
        sql`SELECT uuid, revision FROM learning_submissions
        WHERE uuid IN ${sql.in(submissionUuids)} ORDER BY uuid FOR UPDATE`,
        decodeRevisioned
      )
      const moved = rows.find((row) => row.revision !== bases.submissions[row.uuid])
      if (moved !== undefined) return yield* new PlanStale({ message: `Submission ${moved.uuid} changed since the preview; preview again` })
    }
    const run = yield* loadRun(incident.run_uuid, { lock: false })
    const frozen = gradesFrozenAt(run)
    if (frozen !== undefined && frozen.getTime() <= Date.now()) return yield* new PlanStale({ message: "The run's grades froze since the preview" })
    const nodes = yield* pinnedNodes(run.uuid)
    const byEnrollment = new Map<string, Array<PlanRow["items"][number]>>()
    for (const item of plan.items) byEnrollment.set(item.enrollmentUuid, [...(byEnrollment.get(item.enrollmentUuid) ?? []), item])
    for (const [enrollmentUuid, items] of byEnrollment) {
      const [enrollment] = yield* Effect.flatMap(
        sql`
        SELECT ${sql.literal(deadlineTargetColumns)} FROM learning_enrollments WHERE uuid = ${enrollmentUuid}`,
        decodeDeadlineTargets
      )
      // Date items (extensions, refunds) in one before/after comparison per enrollment.
      yield* withDeadlineChange(enrollment!, actor.profileUuid, Effect.gen(function*() {
        const dates = yield* stepDates(enrollmentUuid)
        const keys = [...new Set(items.filter((item) => item.kind === "extension" || item.kind === "refund").map((item) => item.nodeKey))]
        for (const nodeKey of keys) {
          const extension = items.find((item) => item.kind === "extension" && item.nodeKey === nodeKey)
          const refund = items.find((item) => item.kind === "refund" && item.nodeKey === nodeKey)
          const due = extension?.dueAfter !== undefined ? new Date(extension.dueAfter) : undefined
          const lock = dates.get(nodeKey)?.lockAt
          yield* insertOverride(enrollment!, {
            nodeKey,
            dueAt: due,
            lockAt: due !== undefined && lock !== undefined && lock.getTime() < due.getTime() ? due : undefined,
            extraAttempts: refund?.attempts,
            origin: "incident",
            reason: `incident ${incidentUuid}`,
            by: actor.profileUuid
          })
        }
      }), { incidentUuid, planUuid: plan.uuid })
      for (const item of items) {
        if (item.kind === "excuse") {
          const node = nodes.find((candidate) => candidate.nodeKey === item.nodeKey)
          const [latest] = yield* Effect.flatMap(
            sql`SELECT s.uuid FROM learning_submissions s
            WHERE s.enrollment_uuid = ${enrollmentUuid} AND s.node_key = ${item.nodeKey} AND s.status NOT IN ('cancelled', 'submitted', 'checking', 'check_failed')
            ORDER BY s.submitted_at DESC, s.uuid DESC LIMIT 1 FOR UPDATE`,
            decodeUuids
          )
          if (latest !== undefined && node?.grading !== undefined) {
            yield* appendScoreLayer({
              submissionUuid: latest.uuid,
              kind: "incident",
              points: node.grading.maxPoints,
              verdict: "excused",
              sourceUuid: incidentUuid,
              byProfileUuid: actor.profileUuid,
              reason: `incident ${incidentUuid}: step excused`,
              requestUuid: input.requestUuid
            })
          }
          yield* recordStepProgress(enrollmentUuid, item.nodeKey, "completed")
        }
        if (item.kind === "requeue" && item.submissionUuid !== undefined) {
          const row = yield* loadSubmission(item.submissionUuid, { lock: true }).pipe(Effect.orDie)
          if (!submissionAllows("requeue", row.status)) continue
          yield* requeueSubmission(row.uuid)
          yield* insertGradeJob({
            courseUuid: row.course_uuid,
            enrollmentUuid: row.enrollment_uuid,
            nodeKey: row.node_key,
            submissionUuid: row.uuid,
            checkerUuid: row.checker_uuid,
            requesterProfileUuid: actor.profileUuid,
            input: { requeuedBy: incidentUuid }
          })
        }
      }
    }
    yield* markPlanApplied(plan.uuid)
    const [resolved] = yield* Effect.flatMap(
      sql`UPDATE learning_incidents i SET status = 'resolved', resolved_at = now(), plan_uuid = ${plan.uuid},
        revision = revision + 1, updated_at = now()
      WHERE i.uuid = ${incidentUuid} RETURNING ${sql.literal(columns)}`,
      decodeIncidents
    )
    yield* appendAudit({
      courseUuid: incident.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: "incident.apply",
      subjectKind: "incident",
      subjectUuid: incidentUuid,
      before: { status: incident.status },
      after: { status: "resolved", planUuid: plan.uuid, items: plan.items },
      reason: `plan ${plan.uuid}`,
      requestUuid: input.requestUuid
    })
    return incidentView(resolved!, { ...plan, status: "applied" })
  }))
