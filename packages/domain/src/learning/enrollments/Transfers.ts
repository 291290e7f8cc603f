import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { appendEvent } from "../../store/Outbox.js"
import { appendAudit } from "../Audit.js"
import { courseFor } from "../courses/Courses.js"
import { once } from "../Commands.js"
import { loadVersion } from "../courses/CourseRepository.js"
import { changedNodeKeys, stepDates } from "./Dates.js"
import { type EnrollmentRow, enrollmentColumns, seatStatuses } from "./EnrollmentRepository.js"
import { leaveRunGroups } from "../staff/Groups.js"
import { TransferApplied, TransferPlan } from "./EnrollmentModel.js"
import { CapacityFull, PlanExpired, PlanStale } from "../LearningErrors.js"
import { loadRun, type RunRow } from "../courses/RunRepository.js"

/**
 * Transfers (LEARNING §2.2 "active/paused → same status in another run", §5.1, §5.6): a plan
 * moving enrollments between runs of one course, then its commit. Progress is kept by nodeKey
 * (step states belong to the enrollment, which keeps its uuid); submissions keep their pins. The
 * plan stores both runs' and every enrollment's revision; the commit re-checks them (409
 * `plan_stale`), its age (410 `plan_expired`) and the target's seats (409 `capacity_full`), and
 * moves exactly the planned enrollments.
 */

const planHours = 24
const movable = ["active", "paused"] as const

interface Planned {
  readonly items: ReadonlyArray<{ enrollmentUuid: string; profileUuid: string; status: EnrollmentRow["status"]; mappedSteps: Array<string>; unmappedSteps: Array<string> }>
  readonly skipped: ReadonlyArray<{ enrollmentUuid: string; reason: string }>
  readonly blocking: ReadonlyArray<{ code: string; message: string }>
  readonly enrollments: Readonly<Record<string, number>>
}

interface TransferPlanRow {
  readonly uuid: string
  readonly course_uuid: string
  readonly run_uuid: string
  readonly base_revisions: { readonly fromRun: number; readonly toRun: number; readonly enrollments: Readonly<Record<string, number>> }
  readonly input: { readonly fromRunUuid: string; readonly toRunUuid: string }
  readonly result: { readonly skipped: Planned["skipped"] }
  readonly items: Planned["items"]
  readonly blocking: Planned["blocking"]
  readonly status: "ready" | "applied" | "stale" | "expired"
  readonly expires_at: Date
  readonly created_at: Date
}

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
    const rows = yield* sql<EnrollmentRow>`SELECT ${sql.literal(enrollmentColumns)} FROM learning_enrollments e WHERE e.run_uuid = ${from.uuid}
      ${enrollmentUuids !== undefined ? sql`AND e.uuid IN ${sql.in(enrollmentUuids)}` : sql`AND e.status IN ${sql.in(movable)}`}
      ORDER BY e.created_at, e.uuid`
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
      const progress = (yield* sql<{ node_key: string }>`SELECT node_key FROM learning_step_states WHERE enrollment_uuid = ${row.uuid} ORDER BY node_key`)
        .map((state) => state.node_key)
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
      const [taken] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = ${to.uuid} AND status IN ${sql.in(seatStatuses)}`
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
    const sql = yield* SqlClient.SqlClient
    const course = yield* courseFor(actor, "learning.transfers.preview", courseUuid, { lock: false })
    const { from, to } = yield* runsOf(course.uuid, input.fromRunUuid, input.toRunUuid, false)
    // Both runs must be in the caller's scope.
    yield* courseFor(actor, "learning.transfers.preview", courseUuid, { lock: false, runUuid: from.uuid })
    yield* courseFor(actor, "learning.transfers.preview", courseUuid, { lock: false, runUuid: to.uuid })
    const planned = yield* plan(from, to, input.enrollmentUuids)
    const [row] = yield* sql<TransferPlanRow>`INSERT INTO learning_plans
        (uuid, kind, course_uuid, run_uuid, created_by, base_revisions, input, result, items, blocking, expires_at)
      VALUES (${crypto.randomUUID()}, 'transfer', ${courseUuid}, ${from.uuid}, ${actor.profileUuid},
        ${JSON.stringify({ fromRun: from.revision, toRun: to.revision, enrollments: planned.enrollments })}::jsonb,
        ${JSON.stringify({ fromRunUuid: from.uuid, toRunUuid: to.uuid })}::jsonb, ${JSON.stringify({ skipped: planned.skipped })}::jsonb,
        ${JSON.stringify(planned.items)}::jsonb, ${JSON.stringify(planned.blocking)}::jsonb, now() + make_interval(hours => ${planHours}))
      RETURNING uuid, course_uuid, run_uuid, base_revisions, input, result, items, blocking, status, expires_at, created_at`
    return planView(row!)
  }))

export const applyTransfer = (actor: Actor, courseUuid: string, planUuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.transfers.apply", input, TransferApplied, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* courseFor(actor, "learning.transfers.apply", courseUuid, { lock: false })
    const [plan] = yield* sql<TransferPlanRow>`SELECT uuid, course_uuid, run_uuid, base_revisions, input, result, items, blocking, status, expires_at,
        created_at FROM learning_plans WHERE uuid = ${planUuid} AND kind = 'transfer' AND course_uuid = ${courseUuid} FOR UPDATE`
    if (plan === undefined) return yield* new NotFound({ message: `No transfer plan ${planUuid}` })
    const { from, to } = yield* runsOf(courseUuid, plan.input.fromRunUuid, plan.input.toRunUuid, true)
    yield* courseFor(actor, "learning.transfers.apply", courseUuid, { lock: false, runUuid: from.uuid })
    yield* courseFor(actor, "learning.transfers.apply", courseUuid, { lock: false, runUuid: to.uuid })
    if (plan.status === "applied") return yield* new InvalidState({ message: "The plan was applied already" })
    if (plan.expires_at.getTime() <= Date.now()) return yield* new PlanExpired({ message: "The plan is older than 24 hours; preview again" })
    const uuids = plan.items.map((item) => item.enrollmentUuid)
    const current = uuids.length === 0 ? [] : yield* sql<{ uuid: string; revision: number; status: string; run_uuid: string }>`
      SELECT uuid, revision, status, run_uuid FROM learning_enrollments WHERE uuid IN ${sql.in(uuids)} ORDER BY uuid FOR UPDATE`
    const stale = from.revision !== plan.base_revisions.fromRun || to.revision !== plan.base_revisions.toRun ||
      current.length !== uuids.length || current.some((row) => plan.base_revisions.enrollments[row.uuid] !== row.revision || row.run_uuid !== from.uuid)
    if (stale) return yield* new PlanStale({ message: "The runs or enrollments changed since the preview; preview again" })
    const capacity = plan.blocking.find((problem) => problem.code === "capacity_full")
    if (to.capacity !== null) {
      const [taken] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = ${to.uuid} AND status IN ${sql.in(seatStatuses)}`
      if ((taken?.n ?? 0) + uuids.length > to.capacity) return yield* new CapacityFull({ message: capacity?.message ?? "The target run has not enough seats" })
    }
    if (plan.blocking.length > 0) return yield* new InvalidState({ message: `The plan has blocking problems, first: ${plan.blocking[0]!.message}` })
    for (const item of plan.items) {
      const before = yield* stepDates(item.enrollmentUuid)
      // Groups belong to a run: the enrollment leaves those of the old run (their dates with them).
      yield* leaveRunGroups(item.enrollmentUuid)
      const [row] = yield* sql<{ uuid: string; profile_uuid: string; status: string; revision: number }>`UPDATE learning_enrollments
        SET run_uuid = ${to.uuid}, transferred_from = ${from.uuid}, wake_at = now(), revision = revision + 1, updated_at = now()
        WHERE uuid = ${item.enrollmentUuid} RETURNING uuid, profile_uuid, status, revision`
      const after = yield* stepDates(item.enrollmentUuid)
      const event = (type: "learning.enrollment.transferred" | "learning.deadline.changed", status: string, extra: Record<string, unknown>) =>
        appendEvent({
          type,
          aggregate: { kind: "learning_enrollment", uuid: row!.uuid, revision: row!.revision },
          data: { objectUuid: row!.uuid, status, ...extra },
          context: { profileUuid: actor.profileUuid, audience: [row!.profile_uuid], courseUuid, runUuid: to.uuid, enrollmentUuid: row!.uuid, planUuid }
        })
      yield* event("learning.enrollment.transferred", row!.status, { fromRunUuid: from.uuid, toRunUuid: to.uuid })
      const changed = changedNodeKeys(before, after)
      if (changed.length > 0) yield* event("learning.deadline.changed", "changed", { nodeKeys: changed })
      yield* appendAudit({
        courseUuid,
        actorProfileUuid: actor.profileUuid,
        action: "enrollment.transfer",
        subjectKind: "enrollment",
        subjectUuid: row!.uuid,
        enrollmentUuid: row!.uuid,
        before: { runUuid: from.uuid },
        after: { runUuid: to.uuid },
        reason: `plan ${planUuid}`,
        requestUuid: input.requestUuid
      })
    }
    yield* sql`UPDATE learning_plans SET status = 'applied', applied_at = now() WHERE uuid = ${planUuid}`
    return { transferred: plan.items.length, skipped: plan.result.skipped }
  }))
