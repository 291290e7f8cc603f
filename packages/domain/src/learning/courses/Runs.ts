import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { appendEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { appendAudit } from "../Audit.js"
import { courseFor, requireCourseState } from "./Courses.js"
import { once } from "../Commands.js"
import { loadCourse, loadVersion } from "./CourseRepository.js"
import { GradeFrozen, PlanExpired, PlanStale } from "../LearningErrors.js"
import { type CourseNode, type EnrollmentPolicyInput, type ExtensionPolicy, Plan, Run, ScheduleApplied, type ScheduleChange } from "./Model.js"
import { authorizeCourse, type CourseOperation, decide, standingOn } from "../Permissions.js"
import { changedNodeKeys, stepDates } from "../enrollments/Dates.js"
import {
  decodeRuns,
  gradesFrozenAt,
  insertRun,
  listRunRows,
  loadRun,
  runColumns,
  type RunRow,
  runView,
  updateRun,
  writeExtensionPolicy,
  writePolicy
} from "./RunRepository.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { storedArray, storedObject } from "./StoredJson.js"
import { type GroupOverridePlan, planGroupChanges, requireRunGroups, writeGroupOverrides } from "../staff/GroupSchedule.js"
import { addDays, effectiveDates } from "../enrollments/Schedule.js"
import { cancelRunEnrollments, completeRunEnrollments, wakeNow } from "../enrollments/EnrollmentRepository.js"
import { insertPlan, markPlanApplied } from "../enrollments/PlanRepository.js"

/**
 * Runs: pinned to a published version; their state machine is the table
 * below, shared by the operations and the worker. Schedule changes are plans (plan-then-commit):
 * `schedule.preview` stores the computed change and the run's revision, `schedule.apply`
 * commits exactly it or answers 409 `plan_stale` / 410 `plan_expired`.
 */

type RunStatus = RunRow["status"]

/** The run's state machine as data: trigger → from-states and to-state (`worker.*`: the worker's transitions). */
export const runTransitions = {
  "learning.runs.update": { from: ["draft", "scheduled", "running"], to: undefined },
  "learning.runs.update.publish": { from: ["draft"], to: "scheduled" },
  "worker.start": { from: ["scheduled"], to: "running" },
  "learning.runs.finish": { from: ["running"], to: "finished" },
  "worker.finish": { from: ["running"], to: "finished" },
  "learning.runs.cancel": { from: ["draft", "scheduled", "running"], to: "cancelled" },
  "learning.runs.archive": { from: ["finished", "cancelled"], to: "archived" },
  "learning.schedule.preview": { from: ["draft", "scheduled", "running"], to: undefined },
  "learning.schedule.apply": { from: ["draft", "scheduled", "running"], to: undefined }
} as const satisfies Readonly<Record<string, { readonly from: ReadonlyArray<RunStatus>; readonly to: RunStatus | undefined }>>
export type RunTrigger = keyof typeof runTransitions

export const runAllows = (trigger: RunTrigger, status: RunStatus): boolean => (runTransitions[trigger].from as ReadonlyArray<string>).includes(status)

const requireRun = (trigger: RunTrigger, run: RunRow): Effect.Effect<void, InvalidState> =>
  runAllows(trigger, run.status) ? Effect.void : Effect.fail(new InvalidState({ message: `${trigger} is not allowed on a ${run.status} run` }))

const facts = (course: { uuid: string; status: "draft" | "published" | "archived"; visibility: "listed" | "unlisted" | "private"; latest_version: number }) =>
  ({ uuid: course.uuid, status: course.status, visibility: course.visibility, latestVersion: course.latest_version })

/** Loads a run with its course and authorizes the operation on it, scoped to the run. Non-staff never see a draft run. */
const runFor = (actor: Actor | undefined, operation: CourseOperation, uuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const run = yield* loadRun(uuid, options)
    const course = yield* loadCourse(run.course_uuid, { lock: false })
    const standing = yield* standingOn(actor, course.uuid)
    if (standing.assignments.length === 0 && run.status === "draft") return yield* new NotFound({ message: `No run ${uuid}` })
    const refusal = decide(operation, facts(course), standing, { runUuid: uuid })
    if (refusal !== undefined) return yield* refusal
    return { run, course, standing }
  })

/** Non-terminal enrollments that hold a seat. */
const seatStatuses = ["invited", "offered", "active", "paused", "withdrawal_requested"] as const

// ---- commands ---------------------------------------------------------------------------------

export interface RunCreateInput {
  readonly requestUuid: string
  readonly versionNumber: number
  readonly title: string
  readonly pacing: "cohort" | "self"
  readonly startsAt: Date
  readonly endsAt?: Date | undefined
  readonly admission: "open" | "approval" | "invite"
  readonly capacity?: number | undefined
  readonly waitlist: boolean
  readonly enrollmentWindow: { readonly opensAt?: Date | undefined; readonly closesAt?: Date | undefined }
  readonly pausePolicy: { readonly maxDays: number; readonly maxCount: number }
  readonly enrollmentPolicy?: EnrollmentPolicyInput | undefined
  readonly extensionPolicy?: ExtensionPolicy | undefined
}

/** 400 for an extension policy that approves at once more than it allows at all. */
const checkExtensionPolicy = (policy: ExtensionPolicy | undefined) =>
  policy !== undefined && policy.autoApproveDays > policy.maxDays
    ? new InvalidRequest({ message: "extensionPolicy.autoApproveDays: at most extensionPolicy.maxDays" })
    : undefined

const checkDates = (startsAt: Date, endsAt: Date | undefined, window: RunCreateInput["enrollmentWindow"]) => {
  if (endsAt !== undefined && endsAt.getTime() <= startsAt.getTime()) return new InvalidRequest({ message: "endsAt: must be after startsAt" })
  if (window.opensAt !== undefined && window.closesAt !== undefined && window.closesAt.getTime() <= window.opensAt.getTime()) {
    return new InvalidRequest({ message: "enrollmentWindow.closesAt: must be after enrollmentWindow.opensAt" })
  }
  return undefined
}

export const createRun = (actor: Actor, courseUuid: string, input: RunCreateInput) =>
  Effect.gen(function*() {
    const problem = checkDates(input.startsAt, input.endsAt, input.enrollmentWindow) ?? checkExtensionPolicy(input.extensionPolicy)
    if (problem !== undefined) return yield* problem
    return yield* once(actor, "learning.runs.create", input, Run, Effect.gen(function*() {
      const course = yield* courseFor(actor, "learning.runs.create", courseUuid, { lock: true })
      if (course.latest_version === 0) return yield* new InvalidState({ message: "The course is not published; publish a version first" })
      yield* requireCourseState("learning.runs.create", course)
      if ((yield* loadVersion(courseUuid, input.versionNumber)) === undefined) {
        return yield* new InvalidRequest({ message: `versionNumber: the course has no version ${input.versionNumber} (latest ${course.latest_version})` })
      }
      const uuid = crypto.randomUUID()
      yield* insertRun({
        uuid,
        courseUuid,
        versionNumber: input.versionNumber,
        title: input.title,
        pacing: input.pacing,
        startsAt: input.startsAt,
        endsAt: input.endsAt ?? null,
        admission: input.admission,
        capacity: input.capacity ?? null,
        waitlist: input.waitlist,
        opensAt: input.enrollmentWindow.opensAt ?? null,
        closesAt: input.enrollmentWindow.closesAt ?? null,
        pausePolicy: input.pausePolicy
      })
      yield* writePolicy(uuid, input.enrollmentPolicy)
      if (input.extensionPolicy !== undefined) yield* writeExtensionPolicy(uuid, input.extensionPolicy)
      return runView(yield* loadRun(uuid, { lock: false }))
    }))
  })

export interface RunUpdateInput {
  readonly requestUuid: string
  readonly expectedRevision: number
  readonly title?: string | undefined
  readonly capacity?: number | undefined
  readonly admission?: "open" | "approval" | "invite" | undefined
  readonly enrollmentWindow?: RunCreateInput["enrollmentWindow"] | undefined
  readonly pausePolicy?: RunCreateInput["pausePolicy"] | undefined
  readonly enrollmentPolicy?: EnrollmentPolicyInput | undefined
  readonly extensionPolicy?: ExtensionPolicy | undefined
  readonly publish?: boolean | undefined
}

/** Settings, and `publish: true` (draft → scheduled); dates change only through a schedule plan. */
export const updateRunSettings = (actor: Actor, uuid: string, input: RunUpdateInput) =>
  once(actor, "learning.runs.update", input, Run, Effect.gen(function*() {
    const { course, run } = yield* runFor(actor, "learning.runs.update", uuid, { lock: true })
    yield* requireRun("learning.runs.update", run)
    if (input.publish === true) yield* requireRun("learning.runs.update.publish", run)
    if (input.publish === true && course.status !== "published") {
      return yield* new InvalidState({ message: `A run of a ${course.status} course cannot be scheduled` })
    }
    yield* requireRevision("run", run.revision, input.expectedRevision)
    const problem = (input.enrollmentWindow !== undefined ? checkDates(run.starts_at, undefined, input.enrollmentWindow) : undefined) ??
      checkExtensionPolicy(input.extensionPolicy)
    if (problem !== undefined) return yield* problem
    const values: Record<string, string | number | boolean | Date | null> = {}
    if (input.title !== undefined) values["title"] = input.title
    if (input.capacity !== undefined) values["capacity"] = input.capacity
    if (input.admission !== undefined) values["admission"] = input.admission
    if (input.enrollmentWindow !== undefined) {
      values["enrollment_opens_at"] = input.enrollmentWindow.opensAt ?? null
      values["enrollment_closes_at"] = input.enrollmentWindow.closesAt ?? null
    }
    if (input.publish === true) values["status"] = "scheduled"
    const json = {
      ...(input.pausePolicy !== undefined ? { pause_policy: input.pausePolicy } : {}),
      ...(input.extensionPolicy !== undefined ? { extension_policy: input.extensionPolicy } : {})
    }
    yield* writePolicy(uuid, input.enrollmentPolicy)
    return runView(yield* updateRun(uuid, values, json))
  }))

/**
 * Finishes a running run (the operation, or the worker at its end): active and paused enrollments
 * complete, each with its event; the freeze clock starts. Audited.
 */
const finish = (run: RunRow, actorProfileUuid: string | null, requestUuid: string | undefined) =>
  Effect.gen(function*() {
    const finished = yield* updateRun(run.uuid, { status: "finished", finished_at: new Date() })
    const completed = yield* completeRunEnrollments(run.uuid)
    for (const enrollment of completed) {
      yield* appendEvent({
        type: "learning.enrollment.completed",
        aggregate: { kind: "learning_enrollment", uuid: enrollment.uuid, revision: enrollment.revision },
        data: { objectUuid: enrollment.uuid, status: "completed" },
        context: { audience: [enrollment.profile_uuid], courseUuid: run.course_uuid, runUuid: run.uuid, enrollmentUuid: enrollment.uuid }
      })
    }
    yield* appendAudit({
      courseUuid: run.course_uuid,
      actorProfileUuid,
      action: "run.finish",
      subjectKind: "run",
      subjectUuid: run.uuid,
      before: { status: run.status },
      after: { status: "finished", completedEnrollments: completed.length },
      requestUuid
    })
    return finished
  })

export const finishRun = (actor: Actor, uuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number }) =>
  once(actor, "learning.runs.finish", input, Run, Effect.gen(function*() {
    const { run } = yield* runFor(actor, "learning.runs.finish", uuid, { lock: true })
    yield* requireRun("learning.runs.finish", run)
    yield* requireRevision("run", run.revision, input.expectedRevision)
    return runView(yield* finish(run, actor.profileUuid, input.requestUuid))
  }))

export const cancelRun = (actor: Actor, uuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number; readonly reason: string }) =>
  once(actor, "learning.runs.cancel", input, Run, Effect.gen(function*() {
    const { run } = yield* runFor(actor, "learning.runs.cancel", uuid, { lock: true })
    yield* requireRun("learning.runs.cancel", run)
    yield* requireRevision("run", run.revision, input.expectedRevision)
    const cancelled = yield* updateRun(uuid, { status: "cancelled", cancelled_at: new Date() })
    const enrollments = yield* cancelRunEnrollments(uuid)
    yield* appendEvent({
      type: "learning.run.cancelled",
      aggregate: { kind: "learning_run", uuid, revision: cancelled.revision },
      data: { objectUuid: uuid, status: "cancelled" },
      context: { profileUuid: actor.profileUuid, audience: enrollments.map((e) => e.profile_uuid), courseUuid: run.course_uuid, runUuid: uuid }
    })
    yield* appendAudit({
      courseUuid: run.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: "run.cancel",
      subjectKind: "run",
      subjectUuid: uuid,
      before: { status: run.status },
      after: { status: "cancelled", cancelledEnrollments: enrollments.length },
      reason: input.reason,
      requestUuid: input.requestUuid
    })
    return runView(cancelled)
  }))

export const archiveRun = (actor: Actor, uuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number }) =>
  once(actor, "learning.runs.archive", input, Run, Effect.gen(function*() {
    const { run } = yield* runFor(actor, "learning.runs.archive", uuid, { lock: true })
    yield* requireRun("learning.runs.archive", run)
    yield* requireRevision("run", run.revision, input.expectedRevision)
    return runView(yield* updateRun(uuid, { status: "archived" }))
  }))

// ---- reads ------------------------------------------------------------------------------------

/** Staff see every run; others the scheduled and running ones and those they are enrolled in. */
export const listRuns = (
  actor: Actor | undefined,
  courseUuid: string,
  query: { readonly status?: RunStatus | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* loadCourse(courseUuid, { lock: false })
    const standing = yield* authorizeCourse(actor, "learning.runs.list", facts(course))
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const staff = standing.assignments.length > 0
    const visible = staff ? sql`true` : actor === undefined ? sql`r.status IN ('scheduled', 'running')` : sql`(r.status IN ('scheduled', 'running') OR EXISTS (
      SELECT 1 FROM learning_enrollments e WHERE e.run_uuid = r.uuid AND e.profile_uuid = ${actor.profileUuid}))`
    const rows = yield* listRunRows(courseUuid, {
      visible,
      ...(query.status !== undefined ? { statuses: [query.status] } : {}),
      ...(position._tag === "Some" ? { after: position.value } : {}),
      limit: limit + 1
    })
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), runView)
  })

/** What enrolling would do for the caller now; writes nothing. */
export const admissionPreview = (actor: Actor | undefined, uuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { course, run } = yield* runFor(actor, "learning.admissions.preview", uuid, { lock: false })
    const now = Date.now()
    const reasons: Array<string> = []
    if (actor === undefined) reasons.push("sign_in_required")
    if (course.status !== "published") reasons.push("course_archived")
    if (run.status !== "scheduled" && run.status !== "running") reasons.push("run_not_open")
    if (run.enrollment_opens_at !== null && now < run.enrollment_opens_at.getTime()) reasons.push("enrollment_not_open")
    if (run.enrollment_closes_at !== null && now >= run.enrollment_closes_at.getTime()) reasons.push("enrollment_closed")
    if (actor !== undefined) {
      const open = yield* sql`SELECT 1 FROM learning_enrollments WHERE course_uuid = ${course.uuid} AND profile_uuid = ${actor.profileUuid}
        AND status IN ('invited', 'requested', 'waitlisted', 'offered', 'active', 'paused', 'withdrawal_requested')`
      if (open.length > 0) reasons.push("already_enrolled")
    }
    if (run.admission === "invite") reasons.push("invitation_required")
    const [counts] = yield* Effect.flatMap(
      sql`SELECT
        count(*) FILTER (WHERE status IN ${sql.in(seatStatuses)})::int AS taken,
        count(*) FILTER (WHERE status = 'waitlisted')::int AS waiting
      FROM learning_enrollments WHERE run_uuid = ${uuid}`,
      decodeSeatCounts
    )
    const seatsLeft = run.capacity === null ? undefined : Math.max(0, run.capacity - (counts?.taken ?? 0))
    if (seatsLeft === 0 && !run.waitlist) reasons.push("capacity_full")
    return {
      mode: run.admission,
      eligible: reasons.length === 0,
      reasons,
      ...(seatsLeft !== undefined ? { seatsLeft } : {}),
      ...(seatsLeft === 0 && run.waitlist ? { waitlistPosition: (counts?.waiting ?? 0) + 1 } : {})
    }
  })

// ---- schedule plans ---------------------------------------------------------------------------

const planHours = 24
type Field = "unlockAt" | "dueAt" | "lockAt"
const fields: ReadonlyArray<Field> = ["unlockAt", "dueAt", "lockAt"]
type Dates = Partial<Record<Field, Date>>

const shift = (date: Date | undefined, days: number) => (date === undefined ? undefined : addDays(date, days))
const same = (a: Date | undefined, b: Date | undefined) => (a?.getTime() ?? null) === (b?.getTime() ?? null)

interface ScheduleInput {
  readonly requestUuid: string
  readonly changes: ReadonlyArray<ScheduleChange>
  readonly startsAt?: Date | undefined
  readonly endsAt?: Date | undefined
}

/** 400 for a change that asks for nothing, mixes a shift with dates, or names a node the run does not have. */
const changeProblem = (change: ScheduleChange, i: number, keys: ReadonlySet<string>): string | undefined => {
  const absolute = fields.some((field) => change[field] !== undefined)
  if (change.shiftDays === undefined && !absolute) return `changes.${i}: give shiftDays or unlockAt/dueAt/lockAt`
  if (change.shiftDays !== undefined && absolute) return `changes.${i}.shiftDays: either shiftDays or dates, not both`
  if (absolute && change.nodeKey === undefined) return `changes.${i}.nodeKey: dates need the node they are for`
  if (change.nodeKey !== undefined && !keys.has(change.nodeKey)) return `changes.${i}.nodeKey: no node "${change.nodeKey}" in the run's version`
  return undefined
}

/** Computes the run's dates after the changes: the plan's items and blocking problems. */
export const computeSchedule = (run: RunRow, nodes: ReadonlyArray<CourseNode>, input: ScheduleInput) => {
  let startsAt = input.startsAt ?? run.starts_at
  let endsAt: Date | undefined = input.endsAt ?? run.ends_at ?? undefined
  const schedule = new Map<string, Dates>()
  for (const [key, value] of Object.entries(run.schedule)) {
    schedule.set(key, Object.fromEntries(Object.entries(value).map(([field, at]) => [field, new Date(at as string)])) as Dates)
  }
  const byKey = new Map(nodes.map((node) => [node.nodeKey, node]))
  for (const change of input.changes) {
    if (change.nodeKey === undefined) {
      const days = change.shiftDays ?? 0
      if (input.startsAt === undefined) startsAt = shift(startsAt, days)!
      if (input.endsAt === undefined) endsAt = shift(endsAt, days)
      for (const [key, dates] of schedule) schedule.set(key, Object.fromEntries(Object.entries(dates).map(([field, at]) => [field, shift(at, days)])) as Dates)
      continue
    }
    const node = byKey.get(change.nodeKey)!
    const current = effectiveDates(node, run.schedule[change.nodeKey], startsAt)
    const next: Dates = { ...current, ...schedule.get(change.nodeKey) }
    for (const field of fields) {
      const value = change.shiftDays !== undefined ? shift(next[field], change.shiftDays) : change[field] ?? next[field]
      if (value !== undefined) next[field] = value
    }
    schedule.set(change.nodeKey, next)
  }
  const items: Array<{ nodeKey?: string; field: "startsAt" | "endsAt" | Field; before?: Date; after?: Date }> = []
  if (!same(run.starts_at, startsAt)) items.push({ field: "startsAt", before: run.starts_at, after: startsAt })
  if (!same(run.ends_at ?? undefined, endsAt)) items.push({ field: "endsAt", ...(run.ends_at !== null ? { before: run.ends_at } : {}), ...(endsAt !== undefined ? { after: endsAt } : {}) })
  const blocking: Array<{ code: string; message: string; nodeKey?: string }> = []
  if (!runAllows("learning.schedule.apply", run.status)) blocking.push({ code: "run_closed", message: `The run is ${run.status}` })
  if (endsAt !== undefined && endsAt.getTime() <= startsAt.getTime()) blocking.push({ code: "ends_before_start", message: "endsAt would not be after startsAt" })
  for (const node of nodes.filter((node) => node.kind === "step")) {
    const before = effectiveDates(node, run.schedule[node.nodeKey], run.starts_at)
    const explicit = schedule.get(node.nodeKey)
    const after = { ...effectiveDates(node, undefined, startsAt), ...explicit }
    for (const field of fields) {
      if (!same(before[field], after[field])) {
        items.push({ nodeKey: node.nodeKey, field, ...(before[field] !== undefined ? { before: before[field] } : {}), ...(after[field] !== undefined ? { after: after[field] } : {}) })
      }
    }
    if (after.unlockAt !== undefined && after.dueAt !== undefined && after.dueAt.getTime() < after.unlockAt.getTime()) {
      blocking.push({ code: "due_before_unlock", nodeKey: node.nodeKey, message: `"${node.title}" would fall due before it unlocks` })
    }
    if (after.dueAt !== undefined && after.lockAt !== undefined && after.lockAt.getTime() < after.dueAt.getTime()) {
      blocking.push({ code: "lock_before_due", nodeKey: node.nodeKey, message: `"${node.title}" would lock before it falls due` })
    }
  }
  const result = {
    startsAt: startsAt.toISOString(),
    endsAt: endsAt?.toISOString() ?? null,
    schedule: Object.fromEntries([...schedule].map(([key, dates]) => [key, Object.fromEntries(Object.entries(dates).map(([field, at]) => [field, at.toISOString()]))]))
  }
  return { items, blocking, result }
}

/** A stored schedule plan; its JSON was computed here (`computeSchedule`, `planGroupChanges`) and is read back as written. */
const StoredPlanRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  created_by: Schema.String,
  base_revisions: storedObject<{ readonly run: number }>("StoredPlanBase"),
  result: storedObject<{
    readonly startsAt: string
    readonly endsAt: string | null
    readonly schedule: RunRow["schedule"]
    readonly groups?: ReadonlyArray<GroupOverridePlan>
  }>("StoredScheduleResult"),
  /** `before`/`after`: ISO strings as read back, Dates as just planned (`insertPlan` hands back what it wrote). */
  items: storedArray<{ groupUuid?: string; nodeKey?: string; field: "startsAt" | "endsAt" | Field; before?: string | Date; after?: string | Date }>("StoredPlanItems"),
  blocking: storedArray<{ code: string; message: string; nodeKey?: string }>("StoredPlanBlocking"),
  status: Schema.Literal("ready", "applied", "stale", "expired"),
  expires_at: Timestamp,
  created_at: Timestamp
})
type PlanRow = typeof StoredPlanRow.Type & { readonly affected: number }
const planColumns = selectList(StoredPlanRow)
const decodePlans = rowsDecoder(StoredPlanRow)

const Count = Schema.Struct({ n: Schema.Number })
const decodeCount = rowsDecoder(Count)
const SeatCounts = Schema.Struct({ taken: Schema.Number, waiting: Schema.Number })
const decodeSeatCounts = rowsDecoder(SeatCounts)
const LearnerRow = Schema.Struct({ uuid: Schema.String, profile_uuid: Schema.String, revision: Schema.Number })
const decodeLearners = rowsDecoder(LearnerRow)
const Moment = Schema.Struct({ at: Schema.NullOr(Timestamp) })
const decodeMoment = rowsDecoder(Moment)

const planView = (row: PlanRow) => ({
  uuid: row.uuid,
  kind: "schedule" as const,
  status: row.status === "ready" && row.expires_at.getTime() <= Date.now() ? "expired" as const : row.status,
  courseUuid: row.course_uuid,
  runUuid: row.run_uuid,
  baseRevisions: row.base_revisions,
  items: row.items.map((item) => ({
    ...(item.groupUuid !== undefined ? { groupUuid: item.groupUuid } : {}),
    ...(item.nodeKey !== undefined ? { nodeKey: item.nodeKey } : {}),
    field: item.field,
    ...(item.before !== undefined ? { before: new Date(item.before) } : {}),
    ...(item.after !== undefined ? { after: new Date(item.after) } : {})
  })),
  blocking: row.blocking,
  affectedEnrollments: row.affected,
  expiresAt: row.expires_at,
  createdAt: row.created_at
})

const affectedCount = (runUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(sql`SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = ${runUuid} AND status IN ('active', 'paused')`, decodeCount),
      (rows) => rows[0]?.n ?? 0
    ))

/** Stores a schedule plan: the computed dates, the diff, blocking problems, the run's revision. No business state changes. */
export const previewSchedule = (actor: Actor, runUuid: string, input: ScheduleInput) =>
  once(actor, "learning.schedule.preview", input, Plan, Effect.gen(function*() {
    const { run } = yield* runFor(actor, "learning.schedule.preview", runUuid, { lock: false })
    const version = (yield* loadVersion(run.course_uuid, run.version_number))!
    const keys = new Set(version.nodes.map((node) => node.nodeKey))
    for (const [i, change] of input.changes.entries()) {
      const problem = changeProblem(change, i, keys)
      if (problem !== undefined) return yield* new InvalidRequest({ message: problem })
    }
    yield* requireRunGroups(runUuid, input.changes)
    // Run-wide changes move the run's schedule; a change naming a group plans that group's overrides over it (GroupSchedule.ts).
    const planned = computeSchedule(run, version.nodes, { ...input, changes: input.changes.filter((change) => change.groupUuid === undefined) })
    const group = yield* planGroupChanges(run, version.nodes, { startsAt: new Date(planned.result.startsAt), schedule: planned.result.schedule }, input.changes)
    const { blocking } = planned
    const items = [...planned.items, ...group.items]
    const result = { ...planned.result, groups: group.overrides }
    const uuid = crypto.randomUUID()
    const row = yield* insertPlan({
      uuid,
      kind: "schedule",
      courseUuid: run.course_uuid,
      runUuid,
      createdBy: actor.profileUuid,
      baseRevisions: { run: run.revision },
      input,
      result,
      items,
      blocking,
      hours: planHours
    })
    return planView({ ...row, affected: yield* affectedCount(runUuid) })
  }))

/** Commits a stored schedule plan exactly: 410 when expired, 409 `plan_stale` when the run changed since. */
export const applySchedule = (actor: Actor, planUuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.schedule.apply", input, ScheduleApplied, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [plan] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(planColumns)} FROM learning_plans WHERE uuid = ${planUuid} AND kind = 'schedule' FOR UPDATE`,
      decodePlans
    )
    if (plan === undefined) return yield* new NotFound({ message: `No schedule plan ${planUuid}` })
    const { run } = yield* runFor(actor, "learning.schedule.apply", plan.run_uuid, { lock: true })
    if (plan.status === "applied") return yield* new InvalidState({ message: "The plan was applied already" })
    if (plan.expires_at.getTime() <= Date.now()) return yield* new PlanExpired({ message: "The plan is older than 24 hours; preview again" })
    if (run.revision !== plan.base_revisions.run) {
      return yield* new PlanStale({ message: `The run changed since the preview (revision ${run.revision}, planned at ${plan.base_revisions.run}); preview again` })
    }
    if (plan.blocking.length > 0) return yield* new InvalidState({ message: `The plan has blocking problems, first: ${plan.blocking[0]!.message}` })
    const frozen = gradesFrozenAt(run)
    if (frozen !== undefined && frozen.getTime() <= Date.now()) return yield* new GradeFrozen({ message: "The run's grades are frozen; dates cannot change" })
    // Computed dates before and after: only learners whose effective dates changed hear of it.
    const enrollments = plan.items.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT uuid, profile_uuid, revision FROM learning_enrollments WHERE run_uuid = ${run.uuid} AND status IN ('active', 'paused')`,
      decodeLearners
    )
    const before = yield* Effect.forEach(enrollments, (enrollment) => stepDates(enrollment.uuid))
    const updated = yield* updateRun(run.uuid, { starts_at: new Date(plan.result.startsAt), ends_at: plan.result.endsAt === null ? null : new Date(plan.result.endsAt) }, {
      schedule: plan.result.schedule
    })
    yield* writeGroupOverrides(run.uuid, plan.result.groups ?? [], actor.profileUuid, `plan ${planUuid}`)
    yield* markPlanApplied(planUuid)
    let changedEnrollments = 0
    for (const [i, enrollment] of enrollments.entries()) {
      const changed = changedNodeKeys(before[i]!, yield* stepDates(enrollment.uuid))
      if (changed.length === 0) continue
      changedEnrollments++
      // The clock looks again: unlocks and reminders follow the new dates.
      yield* wakeNow(enrollment.uuid)
      yield* appendEvent({
        type: "learning.deadline.changed",
        aggregate: { kind: "learning_enrollment", uuid: enrollment.uuid, revision: enrollment.revision },
        data: { objectUuid: enrollment.uuid, status: "changed", nodeKeys: changed },
        context: { audience: [enrollment.profile_uuid], courseUuid: run.course_uuid, runUuid: run.uuid, enrollmentUuid: enrollment.uuid, planUuid }
      })
    }
    yield* appendAudit({
      courseUuid: run.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: "schedule.apply",
      subjectKind: "run",
      subjectUuid: run.uuid,
      before: { startsAt: run.starts_at, endsAt: run.ends_at, schedule: run.schedule },
      after: plan.result,
      reason: `plan ${planUuid}`,
      requestUuid: input.requestUuid
    })
    return { run: runView(updated), changedEnrollments }
  }))

// ---- the worker's transitions -----------------------------------------------------------------

/** Days after `endsAt` a cohort run still running is finished by the worker. */
export const finishAfterDays = 7

/**
 * One pass of the run clock: scheduled runs whose start has come begin running; running runs 7
 * days past their end finish. Rows are claimed with `FOR UPDATE SKIP LOCKED` in batches, so
 * several workers share the work; returns how many runs moved.
 */
export const advanceRuns = (now: Date, batch = 100): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const starting = yield* Effect.flatMap(
        sql`SELECT ${sql.literal(runColumns)} FROM learning_runs r
        WHERE r.status = 'scheduled' AND r.starts_at <= ${now} ORDER BY r.starts_at LIMIT ${batch} FOR UPDATE OF r SKIP LOCKED`,
        decodeRuns
      )
      for (const run of starting) yield* updateRun(run.uuid, { status: "running" }).pipe(Effect.orDie)
      const ending = yield* Effect.flatMap(
        sql`SELECT ${sql.literal(runColumns)} FROM learning_runs r
        WHERE r.status = 'running' AND r.ends_at IS NOT NULL AND r.ends_at + make_interval(days => ${finishAfterDays}) <= ${now}
        ORDER BY r.ends_at LIMIT ${batch} FOR UPDATE OF r SKIP LOCKED`,
        decodeRuns
      )
      for (const run of ending) yield* finish(run, null, undefined).pipe(Effect.catchTag("NotFound", Effect.die))
      return starting.length + ending.length
    }))
  })

/**
 * The earliest moment `advanceRuns` has work: a scheduled run's start or a running run's finish
 * (`learning_runs_due`, `learning_runs_finish`); the worker sleeps until then. `undefined`: none.
 */
export const nextRunMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* Effect.flatMap(
    sql`SELECT least(
      (SELECT min(starts_at) FROM learning_runs WHERE status = 'scheduled'),
      (SELECT min(ends_at) + make_interval(days => ${finishAfterDays}) FROM learning_runs WHERE status = 'running' AND ends_at IS NOT NULL)) AS at`,
    decodeMoment
  )
  return row?.at ?? undefined
})

