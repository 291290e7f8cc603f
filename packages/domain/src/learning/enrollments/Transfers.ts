import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { appendEvent } from "../../store/Outbox.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import { loadVersion } from "../courses/CourseRepository.js"
import { changedNodeKeys, stepDates } from "./Dates.js"
import { EnrollmentRow, enrollmentColumns, EnrollmentStatus, moveToRun, seatStatuses } from "./EnrollmentRepository.js"
import { insertPlan, markPlanApplied, PlanStatus } from "./PlanRepository.js"
import { leaveRunGroups } from "../staff/Groups.js"
import { TransferApplied, TransferPlan } from "./EnrollmentModel.js"
import { CapacityFull, PlanExpired, PlanStale } from "../LearningErrors.js"
import { loadRun, type RunRow } from "../courses/RunRepository.js"

/**
 * Transfers: a plan
 * moving enrollments between runs of one course, then its commit. Progress is kept by nodeKey
 * (step states belong to the enrollment, which keeps its uuid); submissions keep their pins. The
 * plan stores both runs' and every enrollment's revision; the commit re-checks them (409
 * `plan_stale`), its age (410 `plan_expired`) and the target's seats (409 `capacity_full`), and
 * moves exactly the planned enrollments.
 */

const planHours = 24
const movable = ["active", "paused"] as const

const TransferItem = Schema.Struct({
  enrollmentUuid: Schema.String,
  profileUuid: Schema.String,
  status: EnrollmentStatus,
  mappedSteps: Schema.Array(Schema.String),
  unmappedSteps: Schema.Array(Schema.String)
})
const Skipped = Schema.Struct({ enrollmentUuid: Schema.String, reason: Schema.String })
const Problem = Schema.Struct({ code: Schema.String, message: Schema.String })

interface Planned {
  readonly items: ReadonlyArray<typeof TransferItem.Type>
  readonly skipped: ReadonlyArray<typeof Skipped.Type>
  readonly blocking: ReadonlyArray<typeof Problem.Type>
  readonly enrollments: Readonly<Record<string, number>>
}

/** A transfer plan as stored (`PlanRepository.ts`), its jsonb in the shapes this module writes. */
const TransferPlanRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  base_revisions: Schema.Struct({
    fromRun: Schema.Number,
    toRun: Schema.Number,
    enrollments: Schema.Record({ key: Schema.String, value: Schema.Number })
  }),
  input: Schema.Struct({ fromRunUuid: Schema.String, toRunUuid: Schema.String }),
  result: Schema.Struct({ skipped: Schema.Array(Skipped) }),
  items: Schema.Array(TransferItem),
  blocking: Schema.Array(Problem),
  status: PlanStatus,
  expires_at: Timestamp,
  created_at: Timestamp
})
type TransferPlanRow = typeof TransferPlanRow.Type
const planColumns = selectList(TransferPlanRow)
const decodePlans = rowsDecoder(TransferPlanRow)
const decodeEnrollments = rowsDecoder(EnrollmentRow)
const NodeKeyRow = Schema.Struct({ node_key: Schema.String })
const decodeNodeKeys = rowsDecoder(NodeKeyRow)
const Count = Schema.Struct({ n: Schema.Number })
const decodeCount = rowsDecoder(Count)
const Current = Schema.Struct({ uuid: Schema.String, revision: Schema.Number, status: Schema.String, run_uuid: Schema.String })
const decodeCurrent = rowsDecoder(Current)

const planView = (row: TransferPlanRow) => ({
  uuid: row.uuid,
  kind: "transfer" as const,
  status: row.status === "ready" && row.expires_at.getTime() <= Date.now() ? "expired" as const : row.status,
  courseUuid: row.course_uuid,
  fromRunUuid: row.input.fromRunUuid,
  toRunUuid: row.input.toRunUuid,
  baseRevisions: row.base_revisions,
  items: row.items,
  skipped: row.result.skipped,
  blocking: row.blocking,
  expiresAt: row.expires_at,
  createdAt: row.created_at
})

const runsOf = (courseUuid: string, fromRunUuid: string, toRunUuid: string, lock: boolean) =>
  Effect.gen(function*() {
    if (fromRunUuid === toRunUuid) return yield* new InvalidRequest({ message: "toRunUuid: must differ from fromRunUuid" })
    const from = yield* loadRun(fromRunUuid, { lock })
    const to = yield* loadRun(toRunUuid, { lock })
    if (from.course_uuid !== courseUuid) return yield* new NotFound({ message: `fromRunUuid: no run ${fromRunUuid} in this course` })
    if (to.course_uuid !== courseUuid) return yield* new NotFound({ message: `toRunUuid: no run ${toRunUuid} in this course` })
    return { from, to }
  })

const plan = (from: RunRow, to: RunRow, enrollmentUuids: ReadonlyArray<string> | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(enrollmentColumns)} FROM learning_enrollments e WHERE e.run_uuid = ${from.uuid}
        ${enrollmentUuids !== undefined ? sql`AND e.uuid IN ${sql.in(enrollmentUuids)}` : sql`AND e.status IN ${sql.in(movable)}`}
        ORDER BY e.created_at, e.uuid`,
      decodeEnrollments
    )
    const found = new Set(rows.map((row) => row.uuid))
    const skipped: Array<{ enrollmentUuid: string; reason: string }> = (enrollmentUuids ?? [])
      .filter((uuid) => !found.has(uuid))
      .map((uuid) => ({ enrollmentUuid: uuid, reason: "not_in_run" }))
    const keys = new Set(((yield* loadVersion(to.course_uuid, to.version_number))?.nodes ?? []).map((node) => node.nodeKey))
    const items: Array<Planned["items"][number]> = []
    const enrollments: Record<string, number> = {}
    for (const row of rows) {
      if (!(movable as ReadonlyArray<string>).includes(row.status)) {
        skipped.push({ enrollmentUuid: row.uuid, reason: `status_${row.status}` })
        continue
      }
      const progress = (yield* Effect.flatMap(
        sql`SELECT node_key FROM learning_step_states WHERE enrollment_uuid = ${row.uuid} ORDER BY node_key`,
        decodeNodeKeys
      )).map((state) => state.node_key)
      items.push({
        enrollmentUuid: row.uuid,
        profileUuid: row.profile_uuid,
        status: row.status,
        mappedSteps: progress.filter((key) => keys.has(key)),
        unmappedSteps: progress.filter((key) => !keys.has(key))
      })
      enrollments[row.uuid] = row.revision
    }
    const blocking: Array<{ code: string; message: string }> = []
    if (to.status !== "scheduled" && to.status !== "running") blocking.push({ code: "target_closed", message: `The target run is ${to.status}` })
    if (to.capacity !== null) {
      const [taken] = yield* Effect.flatMap(
        sql`SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = ${to.uuid} AND status IN ${sql.in(seatStatuses)}`,
        decodeCount
      )
      if ((taken?.n ?? 0) + items.length > to.capacity) {
        blocking.push({ code: "capacity_full", message: `The target run has ${Math.max(0, to.capacity - (taken?.n ?? 0))} free seat(s) for ${items.length}` })
      }
    }
    return { items, skipped, blocking, enrollments }
  })

export const previewTransfer = (
  actor: Actor,
  courseUuid: string,
  input: { readonly requestUuid: string; readonly fromRunUuid: string; readonly toRunUuid: string; readonly enrollmentUuids?: ReadonlyArray<string> | undefined }
) =>
  once(actor, "learning.transfers.preview", input, TransferPlan, Effect.gen(function*() {
    const course = yield* courseFor(actor, "learning.transfers.preview", courseUuid, { lock: false })
    const { from, to } = yield* runsOf(course.uuid, input.fromRunUuid, input.toRunUuid, false)
    // Both runs must be in the caller's scope.
    yield* courseFor(actor, "learning.transfers.preview", courseUuid, { lock: false, runUuid: from.uuid })
    yield* courseFor(actor, "learning.transfers.preview", courseUuid, { lock: false, runUuid: to.uuid })
    const planned = yield* plan(from, to, input.enrollmentUuids)
    const row = yield* insertPlan({
      uuid: crypto.randomUUID(),
      kind: "transfer",
      courseUuid,
      runUuid: from.uuid,
      createdBy: actor.profileUuid,
      baseRevisions: { fromRun: from.revision, toRun: to.revision, enrollments: planned.enrollments },
      input: { fromRunUuid: from.uuid, toRunUuid: to.uuid },
      result: { skipped: planned.skipped },
      items: planned.items,
      blocking: planned.blocking,
      hours: planHours
    })
    return planView(row)
  }))

export const applyTransfer = (actor: Actor, courseUuid: string, planUuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.transfers.apply", input, TransferApplied, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.transfers.apply", courseUuid, { lock: false })
    const [plan] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(planColumns)} FROM learning_plans
        WHERE uuid = ${planUuid} AND kind = 'transfer' AND course_uuid = ${courseUuid} FOR UPDATE`,
      decodePlans
    )
    if (plan === undefined) return yield* new NotFound({ message: `No transfer plan ${planUuid}` })
    const { from, to } = yield* runsOf(courseUuid, plan.input.fromRunUuid, plan.input.toRunUuid, true)
    yield* courseFor(actor, "learning.transfers.apply", courseUuid, { lock: false, runUuid: from.uuid })
    yield* courseFor(actor, "learning.transfers.apply", courseUuid, { lock: false, runUuid: to.uuid })
    if (plan.status === "applied") return yield* new InvalidState({ message: "The plan was applied already" })
    if (plan.expires_at.getTime() <= Date.now()) return yield* new PlanExpired({ message: "The plan is older than 24 hours; preview again" })
    const uuids = plan.items.map((item) => item.enrollmentUuid)
    const current = uuids.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT uuid, revision, status, run_uuid FROM learning_enrollments WHERE uuid IN ${sql.in(uuids)} ORDER BY uuid FOR UPDATE`,
      decodeCurrent
    )
    const stale = from.revision !== plan.base_revisions.fromRun || to.revision !== plan.base_revisions.toRun ||
      current.length !== uuids.length || current.some((row) => plan.base_revisions.enrollments[row.uuid] !== row.revision || row.run_uuid !== from.uuid)
    if (stale) return yield* new PlanStale({ message: "The runs or enrollments changed since the preview; preview again" })
    const capacity = plan.blocking.find((problem) => problem.code === "capacity_full")
    if (to.capacity !== null) {
      const [taken] = yield* Effect.flatMap(
        sql`SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = ${to.uuid} AND status IN ${sql.in(seatStatuses)}`,
        decodeCount
      )
      if ((taken?.n ?? 0) + uuids.length > to.capacity) return yield* new CapacityFull({ message: capacity?.message ?? "The target run has not enough seats" })
    }
    if (plan.blocking.length > 0) return yield* new InvalidState({ message: `The plan has blocking problems, first: ${plan.blocking[0]!.message}` })
    for (const item of plan.items) {
      const before = yield* stepDates(item.enrollmentUuid)
      // Groups belong to a run: the enrollment leaves those of the old run (their dates with them).
      yield* leaveRunGroups(item.enrollmentUuid)
      const row = yield* moveToRun(item.enrollmentUuid, to.uuid, from.uuid)
      const after = yield* stepDates(item.enrollmentUuid)
      const event = (type: "learning.enrollment.transferred" | "learning.deadline.changed", status: string, extra: Record<string, unknown>) =>
        appendEvent({
          type,
          aggregate: { kind: "learning_enrollment", uuid: row.uuid, revision: row.revision },
          data: { objectUuid: row.uuid, status, ...extra },
          context: { profileUuid: actor.profileUuid, audience: [row.profile_uuid], courseUuid, runUuid: to.uuid, enrollmentUuid: row.uuid, planUuid }
        })
      yield* event("learning.enrollment.transferred", row.status, { fromRunUuid: from.uuid, toRunUuid: to.uuid })
      const changed = changedNodeKeys(before, after)
      if (changed.length > 0) yield* event("learning.deadline.changed", "changed", { nodeKeys: changed })
      yield* appendAudit({
        courseUuid,
        actorProfileUuid: actor.profileUuid,
        action: "enrollment.transfer",
        subjectKind: "enrollment",
        subjectUuid: row.uuid,
        enrollmentUuid: row.uuid,
        before: { runUuid: from.uuid },
        after: { runUuid: to.uuid },
        reason: `plan ${planUuid}`,
        requestUuid: input.requestUuid
      })
    }
    yield* markPlanApplied(planUuid)
    return { transferred: plan.items.length, skipped: plan.result.skipped }
  }))
