import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { appendAudit } from "../Audit.js"
import { once } from "../Commands.js"
import { loadCourse } from "../courses/CourseRepository.js"
import { changedNodeKeys, computeStepDates, type DateContext, loadDateContext, pausedDaysAt, type StepDates } from "./Dates.js"
import { enrollmentFor, loadRunPolicies, type RunPolicies } from "./EnrollmentAccess.js"
import { enrollmentTransitions, requireTransition, type TransitionName } from "./EnrollmentMachine.js"
import { Enrollment, type Enrollment as EnrollmentView, Invited } from "./EnrollmentModel.js"
import {
  type DecisionRecord,
  enrollmentColumns,
  enrollmentComputed,
  EnrollmentRow,
  type EnrollmentStatus,
  insertEnrollment as insertEnrollmentRow,
  loadEnrollment,
  openStatuses,
  seatStatuses,
  setWakeAt,
  updateEnrollment
} from "./EnrollmentRepository.js"
import { CapacityFull, ConflictOfInterest, NotEligible, WindowClosed } from "../LearningErrors.js"
import { authorizeCourse, type CourseOperation, decide, holdsAtom, requireCourseGroup, staffScope, standingOn } from "../Permissions.js"
import { loadRun, type RunRow } from "../courses/RunRepository.js"
import { addDays } from "./Schedule.js"
import { markStepAvailable } from "../steps/StepStateRepository.js"

/**
 * Enrollments: enroll, apply or join the waitlist by admission
 * mode, invitations, decisions, seat offers (the next waitlisted learner is offered a freed seat,
 * FIFO by arrival), start, pause and resume (dates shift by the paused days), withdrawal with grace
 * and restore, and the worker's transitions (offer expiry, pause end, grace end). Every transition
 * is a row of `enrollmentTransitions`; each writes its events (and, for roster changes, an audit
 * row) in its transaction. Enrolling locks the run row, so concurrent enrollments into one run
 * are taken one at a time: capacity is never exceeded and the waitlist keeps arrival order.
 */

const hourMs = 3_600_000

const Count = Schema.Struct({ n: Schema.Number })
const decodeCount = rowsDecoder(Count)
const Uuid = Schema.Struct({ uuid: Schema.String })
const decodeUuids = rowsDecoder(Uuid)
const decodeEnrollments = rowsDecoder(EnrollmentRow)

// ---- views ---------------------------------------------------------------------------------------

const restoreUntil = (row: EnrollmentRow, policies: Pick<RunPolicies, "restore_days">): Date | undefined => {
  const from = row.withdrawn_at ?? row.withdraw_requested_at
  return from === null ? undefined : addDays(from, policies.restore_days)
}

const opt = <K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } =>
  (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** The wire view; `extras` carries what needs another read (waitlist position, progress). */
export const enrollmentView = (
  row: EnrollmentRow,
  policies: Pick<RunPolicies, "restore_days">,
  extras: { readonly waitlistPosition?: number | undefined; readonly progress?: { completedSteps: number; totalSteps: number } | undefined } = {}
): EnrollmentView => {
  const withdrawing = row.withdraw_requested_at !== null || row.withdrawn_at !== null
  return {
    uuid: row.uuid,
    revision: row.revision,
    runUuid: row.run_uuid,
    courseUuid: row.course_uuid,
    profileUuid: row.profile_uuid,
    status: row.status,
    ...opt("startedAt", row.started_at),
    ...(row.status === "invited" || row.status === "offered" ? opt("offerExpiresAt", row.offer_expires_at) : {}),
    ...(row.status === "waitlisted" ? opt("waitlistPosition", extras.waitlistPosition) : {}),
    pause: {
      ...(row.status === "paused" ? { ...opt("pausedAt", row.paused_at), ...opt("until", row.pause_until) } : {}),
      totalDays: row.paused_days,
      count: row.pause_count
    },
    ...(withdrawing
      ? {
        withdrawal: {
          ...opt("requestedAt", row.withdraw_requested_at),
          ...opt("effectiveAt", row.withdraw_effective_at),
          ...opt("withdrawnAt", row.withdrawn_at),
          ...opt("reason", row.withdraw_reason),
          ...(row.status === "withdrawn" || row.status === "withdrawal_requested" ? opt("restoreUntil", restoreUntil(row, policies)) : {})
        }
      }
      : {}),
    ...opt("activatedAt", row.activated_at),
    ...opt("criteriaMetAt", row.criteria_met_at),
    ...opt("completedAt", row.completed_at),
    ...opt("transferredFromRunUuid", row.transferred_from),
    ...opt("progress", extras.progress),
    groups: row.groups.map((group) => ({ uuid: group.uuid, name: group.name, kind: group.kind })),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** 1-based position among the run's waitlisted enrollments (FIFO by arrival). */
const waitlistPosition = (row: EnrollmentRow) =>
  row.status !== "waitlisted" ? Effect.succeed(undefined) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT count(*)::int AS n FROM learning_enrollments
          WHERE run_uuid = ${row.run_uuid} AND status = 'waitlisted' AND queue_position <= ${row.queue_position}::bigint`,
        decodeCount
      ),
      (rows) => rows[0]?.n
    ))

const Progress = Schema.Struct({ done: Schema.Number, total: Schema.Number })
const decodeProgress = rowsDecoder(Progress)

const progressOf = (row: EnrollmentRow) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(sql`SELECT
          (SELECT count(*)::int FROM learning_step_states s WHERE s.enrollment_uuid = ${row.uuid} AND s.status = 'completed'
            AND s.node_key IN (SELECT n->>'nodeKey' FROM jsonb_array_elements(v.nodes) n WHERE n->>'kind' = 'step')) AS done,
          (SELECT count(*)::int FROM jsonb_array_elements(v.nodes) n WHERE n->>'kind' = 'step') AS total
        FROM learning_runs r JOIN learning_course_versions v ON v.course_uuid = r.course_uuid AND v.number = r.version_number
        WHERE r.uuid = ${row.run_uuid}`, decodeProgress),
      (rows) => ({ completedSteps: rows[0]?.done ?? 0, totalSteps: rows[0]?.total ?? 0 })
    ))

const fullView = (row: EnrollmentRow) =>
  Effect.gen(function*() {
    const policies = yield* loadRunPolicies(row.run_uuid)
    return enrollmentView(row, policies, { waitlistPosition: yield* waitlistPosition(row) })
  })

// ---- events ----------------------------------------------------------------------------------------

/** Emits a transition's events for the enrollment as it is now. */
const emitTransition = (
  name: TransitionName,
  row: EnrollmentRow,
  actorProfileUuid: string | null,
  extra: Readonly<Record<string, unknown>> = {},
  only?: ReadonlyArray<string>
) =>
  Effect.forEach(
    enrollmentTransitions[name].events.filter((event) => only === undefined || only.includes(event.type)),
    (event: { readonly type: EventType; readonly status?: string }) =>
      appendEvent({
        type: event.type,
        aggregate: { kind: "learning_enrollment", uuid: row.uuid, revision: row.revision },
        data: { objectUuid: row.uuid, status: event.status ?? row.status, ...extra },
        context: {
          ...(actorProfileUuid !== null ? { profileUuid: actorProfileUuid } : {}),
          audience: [row.profile_uuid],
          courseUuid: row.course_uuid,
          runUuid: row.run_uuid,
          enrollmentUuid: row.uuid
        }
      }),
    { discard: true }
  )
type EventType = Parameters<typeof appendEvent>[0]["type"]

const audit = (row: EnrollmentRow, actor: Actor | null, action: string, before: unknown, after: unknown, reason?: string, requestUuid?: string) =>
  appendAudit({
    courseUuid: row.course_uuid,
    actorProfileUuid: actor?.profileUuid ?? null,
    action,
    subjectKind: "enrollment",
    subjectUuid: row.uuid,
    enrollmentUuid: row.uuid,
    before,
    after,
    reason,
    requestUuid
  })

// ---- seats -----------------------------------------------------------------------------------------

const seatsTaken = (runUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = ${runUuid} AND status IN ${sql.in(seatStatuses)}`,
        decodeCount
      ),
      (rows) => rows[0]?.n ?? 0
    ))

const hasSeat = (run: RunRow, taken: number, wanted = 1) => run.capacity === null || taken + wanted <= run.capacity

/**
 * Offers freed seats of a run to the waitlist, oldest arrival first (`offer` in EnrollmentMachine.ts, waitlisted → offered):
 * each gets `seatOfferHours` to accept. Locks the run; waitlisted rows another transaction holds
 * are skipped (they are changing anyway), so this never waits on a learner's own command.
 */
export const offerFreedSeats = (runUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = yield* Effect.orDie(loadRun(runUuid, { lock: true }))
    if (run.capacity === null || (run.status !== "scheduled" && run.status !== "running")) return 0
    const free = run.capacity - (yield* seatsTaken(runUuid))
    if (free <= 0) return 0
    const policies = yield* loadRunPolicies(runUuid)
    const next = yield* Effect.flatMap(
      sql`SELECT uuid FROM learning_enrollments
        WHERE run_uuid = ${runUuid} AND status = 'waitlisted' ORDER BY queue_position LIMIT ${free} FOR UPDATE SKIP LOCKED`,
      decodeUuids
    )
    for (const { uuid } of next) {
      const offered = yield* updateEnrollment(uuid, { status: "offered", offer_expires_at: new Date(Date.now() + policies.seat_offer_hours * hourMs) })
      yield* emitTransition("offer", offered, null)
    }
    return next.length
  })

// ---- access to a run -------------------------------------------------------------------------------

const facts = (course: { uuid: string; status: "draft" | "published" | "archived"; visibility: "listed" | "unlisted" | "private"; latest_version: number }) =>
  ({ uuid: course.uuid, status: course.status, visibility: course.visibility, latestVersion: course.latest_version })

/** A run with its course, authorized for a course-level operation scoped to the run; draft runs are unknown to non-staff. */
export const runAccess = (actor: Actor, operation: CourseOperation, runUuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const run = yield* loadRun(runUuid, options)
    const course = yield* loadCourse(run.course_uuid, { lock: false })
    const standing = yield* standingOn(actor, course.uuid)
    if (standing.assignments.length === 0 && run.status === "draft") return yield* new NotFound({ message: `No run ${runUuid}` })
    const refusal = decide(operation, facts(course), standing, { runUuid })
    if (refusal !== undefined) return yield* refusal
    return { run, course, standing }
  })

/**
 * Serializes the "one open enrollment per profile and course" check with the insert it guards
 * across runs of the course (the run lock covers one run only): a transaction-scoped advisory
 * lock on (course, profile). Callers holding several take them in profile order.
 */
const lockProfileInCourse = (courseUuid: string, profileUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${`enrollment:${courseUuid}:${profileUuid}`}, 0))`)

const openEnrollmentIn = (courseUuid: string, profileUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT uuid FROM learning_enrollments WHERE course_uuid = ${courseUuid} AND profile_uuid = ${profileUuid}
          AND status IN ${sql.in(openStatuses)}`,
        decodeUuids
      ),
      (rows) => rows[0]?.uuid
    ))

const Profile = Schema.Struct({ profile_uuid: Schema.String })
const decodeProfiles = rowsDecoder(Profile)

interface NewEnrollment {
  readonly run: RunRow
  readonly profileUuid: string
  readonly status: EnrollmentStatus
  readonly activated?: boolean
  readonly offerExpiresAt?: Date
  readonly invitedBy?: string
  readonly message?: string | undefined
  readonly answers?: Readonly<Record<string, string>> | undefined
}

const insertEnrollment = (input: NewEnrollment) => {
  const now = new Date()
  return insertEnrollmentRow({
    run_uuid: input.run.uuid,
    course_uuid: input.run.course_uuid,
    profile_uuid: input.profileUuid,
    status: input.status,
    activated_at: input.activated === true ? now : null,
    offer_expires_at: input.offerExpiresAt ?? null,
    invited_by: input.invitedBy ?? null,
    invitation_message: input.message ?? null,
    application: input.answers !== undefined ? { answers: input.answers } : null
  })
}

// ---- commands on a run -----------------------------------------------------------------------------

/** Why the caller may not enroll now (not_eligible), or undefined. */
const enrollProblem = (course: { status: string }, run: RunRow, now: number): string | undefined => {
  if (course.status !== "published") return "The course is archived"
  if (run.status !== "scheduled" && run.status !== "running") return `The run is ${run.status}`
  if (run.enrollment_opens_at !== null && now < run.enrollment_opens_at.getTime()) return "Enrollment has not opened yet"
  if (run.enrollment_closes_at !== null && now >= run.enrollment_closes_at.getTime()) return "Enrollment has closed"
  if (run.admission === "invite") return "The run admits by invitation only"
  return undefined
}

export const enroll = (
  actor: Actor,
  runUuid: string,
  input: { readonly requestUuid: string; readonly application?: { readonly answers: Readonly<Record<string, string>> } | undefined }
) =>
  once(actor, "learning.enrollments.enroll", input, Enrollment, Effect.gen(function*() {
    const { course, run } = yield* runAccess(actor, "learning.enrollments.enroll", runUuid, { lock: true })
    const problem = enrollProblem(course, run, Date.now())
    if (problem !== undefined) return yield* new NotEligible({ message: problem })
    yield* lockProfileInCourse(course.uuid, actor.profileUuid)
    if ((yield* openEnrollmentIn(course.uuid, actor.profileUuid)) !== undefined) {
      return yield* new NotEligible({ message: "You already have an open enrollment in this course" })
    }
    const answers = input.application?.answers
    let name: TransitionName
    if (run.admission === "approval") name = "enroll_approval"
    else if (hasSeat(run, yield* seatsTaken(runUuid))) name = "enroll_open"
    else if (run.waitlist) name = "enroll_full"
    else return yield* new CapacityFull({ message: `The run's ${run.capacity} seats are taken and it keeps no waitlist` })
    const row = yield* insertEnrollment({
      run,
      profileUuid: actor.profileUuid,
      status: enrollmentTransitions[name].to,
      activated: name === "enroll_open",
      answers
    })
    yield* emitTransition(name, row, actor.profileUuid)
    return yield* fullView(row)
  }))

export const invite = (
  actor: Actor,
  runUuid: string,
  input: { readonly requestUuid: string; readonly profileUuids: ReadonlyArray<string>; readonly message?: string | undefined; readonly expiresInDays?: number | undefined }
) =>
  once(actor, "learning.enrollments.invite", input, Invited, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { course, run } = yield* runAccess(actor, "learning.enrollments.invite", runUuid, { lock: true })
    if (course.status !== "published" || (run.status !== "scheduled" && run.status !== "running")) {
      return yield* new InvalidState({ message: `Invitations need a scheduled or running run of a published course (the run is ${run.status})` })
    }
    const unique = new Set(input.profileUuids)
    if (unique.size !== input.profileUuids.length) return yield* new InvalidRequest({ message: "profileUuids: each profile at most once" })
    const known = new Set(
      (yield* Effect.flatMap(sql`SELECT uuid FROM profiles WHERE uuid IN ${sql.in([...unique])}`, decodeUuids)).map((row) => row.uuid)
    )
    const unknown = input.profileUuids.findIndex((uuid) => !known.has(uuid))
    if (unknown >= 0) return yield* new NotFound({ message: `profileUuids.${unknown}: no profile ${input.profileUuids[unknown]}` })
    for (const profileUuid of [...unique].sort()) yield* lockProfileInCourse(course.uuid, profileUuid)
    const taken = yield* Effect.flatMap(
      sql`SELECT profile_uuid FROM learning_enrollments
        WHERE course_uuid = ${course.uuid} AND profile_uuid IN ${sql.in([...unique])} AND status IN ${sql.in(openStatuses)}`,
      decodeProfiles
    )
    if (taken.length > 0) return yield* new NotEligible({ message: `Profile ${taken[0]!.profile_uuid} already has an open enrollment in this course` })
    if (!hasSeat(run, yield* seatsTaken(runUuid), unique.size)) {
      return yield* new CapacityFull({ message: `Inviting ${unique.size} would exceed the run's ${run.capacity} seats` })
    }
    const expires = addDays(new Date(), input.expiresInDays ?? 14)
    const rows: Array<EnrollmentRow> = []
    for (const profileUuid of input.profileUuids) {
      const row = yield* insertEnrollment({ run, profileUuid, status: "invited", offerExpiresAt: expires, invitedBy: actor.profileUuid, message: input.message })
      yield* emitTransition("invite", row, actor.profileUuid)
      yield* audit(row, actor, "enrollment.invite", null, { status: "invited", offerExpiresAt: expires }, undefined, input.requestUuid)
      rows.push(row)
    }
    const policies = yield* loadRunPolicies(runUuid)
    return { enrollments: rows.map((row) => enrollmentView(row, policies)) }
  }))

// ---- commands on one enrollment ----------------------------------------------------------------------

interface RevisionCommand {
  readonly requestUuid: string
  readonly expectedRevision: number
}

/**
 * The prologue of a command moving one enrollment along `name`: loads and locks it, authorizes
 * the running operation (`enrollmentFor`), refuses a transition the table does not allow from its status
 * (409 `invalid_state`) and a stale `expectedRevision` (409 `revision_conflict`).
 */
const transitionFor = (actor: Actor, enrollmentUuid: string, name: TransitionName, expectedRevision: number) =>
  Effect.gen(function*() {
    const context = yield* enrollmentFor(actor, enrollmentUuid, { lock: true })
    const refusal = requireTransition(name, context.enrollment)
    if (refusal !== undefined) return yield* refusal
    yield* requireRevision("enrollment", context.enrollment.revision, expectedRevision)
    return context
  })

/** The learner of an enrollment deciding on it: 403 conflict_of_interest when they are also its staff. */
const refuseOwnDecision = (actor: Actor, enrollmentUuid: string) =>
  Effect.gen(function*() {
    const row = yield* loadEnrollment(enrollmentUuid, { lock: false })
    if (row.profile_uuid !== actor.profileUuid) return
    const standing = yield* standingOn(actor, row.course_uuid)
    if (holdsAtom(standing.assignments, "roster_manage", { runUuid: row.run_uuid })) {
      return yield* new ConflictOfInterest({ message: "You may not decide on your own enrollment" })
    }
  })

export const decideEnrollment = (
  actor: Actor,
  enrollmentUuid: string,
  input: RevisionCommand & { readonly decision: "approve" | "reject" | "waitlist"; readonly reason?: string | undefined; readonly requireSeatConfirmation?: boolean | undefined }
) =>
  once(actor, "learning.enrollments.decide", input, Enrollment, Effect.gen(function*() {
    yield* refuseOwnDecision(actor, enrollmentUuid)
    const name: TransitionName = input.decision === "reject"
      ? "reject"
      : input.decision === "waitlist"
      ? "waitlist"
      : input.requireSeatConfirmation === true
      ? "approve_offer"
      : "approve"
    const { enrollment, policies, run } = yield* transitionFor(actor, enrollmentUuid, name, input.expectedRevision)
    const locked = yield* loadRun(run.uuid, { lock: true })
    if ((name === "approve" || name === "approve_offer") && !hasSeat(locked, yield* seatsTaken(run.uuid))) {
      return yield* new CapacityFull({ message: `The run's ${run.capacity} seats are taken` })
    }
    const to = enrollmentTransitions[name].to
    const now = new Date()
    const record: DecisionRecord = {
      decision: input.decision,
      by: actor.profileUuid,
      at: now.toISOString(),
      status: to,
      ...(input.reason !== undefined ? { reason: input.reason } : {})
    }
    const row = yield* updateEnrollment(enrollmentUuid, {
      status: to,
      ...(to === "active" ? { activated_at: now, wake_at: now } : {}),
      ...(to === "offered" ? { offer_expires_at: new Date(now.getTime() + policies.seat_offer_hours * hourMs) } : {})
    }, { decisions: [...enrollment.decisions, record] })
    yield* emitTransition(name, row, actor.profileUuid)
    yield* audit(row, actor, "enrollment.decide", { status: enrollment.status }, { status: to, decision: input.decision }, input.reason, input.requestUuid)
    return yield* fullView(row)
  }))

/** invited → active (accept_invitation) or offered → active (seats.accept); 409 once the offer expired. */
const acceptOffer = (actor: Actor, enrollmentUuid: string, input: RevisionCommand, name: "accept_invitation" | "accept_seat") => {
  const operation = name === "accept_invitation" ? "learning.enrollments.accept_invitation" as const : "learning.seats.accept" as const
  return once(actor, operation, input, Enrollment, Effect.gen(function*() {
    const { enrollment } = yield* transitionFor(actor, enrollmentUuid, name, input.expectedRevision)
    if (enrollment.offer_expires_at !== null && enrollment.offer_expires_at.getTime() <= Date.now()) {
      return yield* new InvalidState({ message: "The offer has expired" })
    }
    const now = new Date()
    const row = yield* updateEnrollment(enrollmentUuid, { status: "active", activated_at: now, wake_at: now, offer_expires_at: null })
    yield* emitTransition(name, row, actor.profileUuid)
    return yield* fullView(row)
  }))
}

export const acceptInvitation = (actor: Actor, uuid: string, input: RevisionCommand) => acceptOffer(actor, uuid, input, "accept_invitation")
export const acceptSeat = (actor: Actor, uuid: string, input: RevisionCommand) => acceptOffer(actor, uuid, input, "accept_seat")

export const declineSeat = (actor: Actor, enrollmentUuid: string, input: RevisionCommand) =>
  once(actor, "learning.seats.decline", input, Enrollment, Effect.gen(function*() {
    yield* transitionFor(actor, enrollmentUuid, "decline", input.expectedRevision)
    const row = yield* updateEnrollment(enrollmentUuid, { status: "declined", offer_expires_at: null })
    yield* emitTransition("decline", row, actor.profileUuid)
    yield* offerFreedSeats(row.run_uuid)
    return yield* fullView(row)
  }))

export const startEnrollment = (actor: Actor, enrollmentUuid: string, input: RevisionCommand) =>
  once(actor, "learning.enrollments.start", input, Enrollment, Effect.gen(function*() {
    const { enrollment, run, policies } = yield* transitionFor(actor, enrollmentUuid, "start", input.expectedRevision)
    if (enrollment.started_at !== null) return yield* new InvalidState({ message: "The enrollment was started already" })
    if (run.status !== "running" || run.starts_at.getTime() > Date.now()) {
      return yield* new NotEligible({ message: `The run has not started (${run.status}, starts ${run.starts_at.toISOString()})` })
    }
    const now = new Date()
    const row = yield* updateEnrollment(enrollmentUuid, { started_at: now, wake_at: now })
    yield* emitTransition("start", row, actor.profileUuid)
    yield* wakeEnrollment(row, policies, now)
    return yield* fullView(row)
  }))

// ---- pauses ----------------------------------------------------------------------------------------

const daysLeftOf = (enrollment: EnrollmentRow, run: RunRow) => Math.max(0, run.pause_policy.maxDays - enrollment.paused_days)

/** The pause a command or preview would make: days asked, allowed, or why not. */
const plannedPause = (enrollment: EnrollmentRow, run: RunRow, until: Date | undefined, now: Date) => {
  const daysLeft = daysLeftOf(enrollment, run)
  const days = until === undefined ? daysLeft : pausedDaysAt(now, until)
  let problem: string | undefined
  if (enrollment.status !== "active") problem = `A ${enrollment.status} enrollment cannot pause`
  else if (enrollment.pause_count >= run.pause_policy.maxCount) problem = `The run allows ${run.pause_policy.maxCount} pause(s); all are used`
  else if (daysLeft === 0) problem = "No pause days are left"
  else if (until !== undefined && until.getTime() <= now.getTime()) problem = "until: must be in the future"
  else if (days > daysLeft) problem = `until: at most ${daysLeft} day(s) of pause are left`
  return { daysLeft, days, problem, until: until ?? addDays(now, days) }
}

const dateContextOf = (enrollment: EnrollmentRow) =>
  Effect.map(loadDateContext(enrollment.uuid), (context) => context!)

export const pausePreview = (actor: Actor, enrollmentUuid: string, query: { readonly until?: Date | undefined }) =>
  Effect.gen(function*() {
    const { enrollment, run } = yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    const now = new Date()
    const plan = plannedPause(enrollment, run, query.until, now)
    const context = yield* dateContextOf(enrollment)
    const before = computeStepDates(context, now)
    const after = computeStepDates({ ...context, pauses: [...context.pauses, { from: now.toISOString(), days: plan.days }] }, now)
    const shifts = [...before].flatMap(([nodeKey, dates]) => {
      const due = dates.dueAt
      const dueAfter = after.get(nodeKey)?.dueAt
      return due !== undefined && dueAfter !== undefined && due.getTime() !== dueAfter.getTime() ? [{ nodeKey, due, dueAfter }] : []
    })
    return { allowed: plan.problem === undefined, daysLeft: plan.daysLeft, shifts }
  })

export const pauseEnrollment = (actor: Actor, enrollmentUuid: string, input: RevisionCommand & { readonly until?: Date | undefined; readonly reason?: string | undefined }) =>
  once(actor, "learning.enrollments.pause", input, Enrollment, Effect.gen(function*() {
    const { asLearner, enrollment, run } = yield* transitionFor(actor, enrollmentUuid, "pause", input.expectedRevision)
    const now = new Date()
    const plan = plannedPause(enrollment, run, input.until, now)
    if (plan.problem !== undefined) return yield* new WindowClosed({ message: plan.problem })
    const row = yield* updateEnrollment(enrollmentUuid, { status: "paused", paused_at: now, pause_until: plan.until, pause_count: enrollment.pause_count + 1 })
    yield* emitTransition("pause", row, actor.profileUuid, { until: plan.until.toISOString() })
    if (!asLearner) yield* audit(row, actor, "enrollment.pause", { status: "active" }, { status: "paused", until: plan.until }, input.reason, input.requestUuid)
    return yield* fullView(row)
  }))

/**
 * paused → active (the operation or the worker at `until`): the pause becomes a finished one of
 * its whole days, so every date still ahead when it began moves by them. `learning.deadline.changed`
 * when a computed date differs from what it was before the pause.
 */
const resume = (enrollment: EnrollmentRow, actor: Actor | null, name: "resume" | "resume_worker", now: Date) =>
  Effect.gen(function*() {
    const context = yield* dateContextOf(enrollment)
    const beforePause = computeStepDates({ ...context, pausedAt: null }, now)
    const days = pausedDaysAt(enrollment.paused_at ?? now, now)
    const pauses = [...enrollment.pauses, ...(days > 0 ? [{ from: (enrollment.paused_at ?? now).toISOString(), days }] : [])]
    const row = yield* updateEnrollment(enrollment.uuid, {
      status: "active",
      paused_at: null,
      pause_until: null,
      paused_days: enrollment.paused_days + days,
      wake_at: now
    }, { pauses })
    const after = computeStepDates({ ...context, pauses, pausedAt: null }, now)
    const changed = changedNodeKeys(beforePause, after)
    yield* emitTransition(name, row, actor?.profileUuid ?? null, { pausedDays: days }, ["learning.enrollment.resume"])
    if (changed.length > 0) yield* emitTransition(name, row, actor?.profileUuid ?? null, { nodeKeys: changed }, ["learning.deadline.changed"])
    return row
  })

export const resumeEnrollment = (actor: Actor, enrollmentUuid: string, input: RevisionCommand) =>
  once(actor, "learning.enrollments.resume", input, Enrollment, Effect.gen(function*() {
    const { asLearner, enrollment } = yield* transitionFor(actor, enrollmentUuid, "resume", input.expectedRevision)
    const row = yield* resume(enrollment, actor, "resume", new Date())
    if (!asLearner) yield* audit(row, actor, "enrollment.resume", { status: "paused" }, { status: "active" }, undefined, input.requestUuid)
    return yield* fullView(row)
  }))

// ---- withdrawal and restore ------------------------------------------------------------------------

export const withdrawEnrollment = (
  actor: Actor,
  enrollmentUuid: string,
  input: RevisionCommand & { readonly reason?: string | undefined; readonly immediate?: boolean | undefined }
) =>
  once(actor, "learning.enrollments.withdraw", input, Enrollment, Effect.gen(function*() {
    const { asLearner, enrollment, policies } = yield* enrollmentFor(actor, enrollmentUuid, { lock: true })
    const graceful = policies.withdraw_grace_hours > 0 && input.immediate !== true && (enrollment.status === "active" || enrollment.status === "paused")
    const name: TransitionName = graceful ? "withdraw_grace" : "withdraw_now"
    const refusal = requireTransition(name, enrollment)
    if (refusal !== undefined) return yield* refusal
    yield* requireRevision("enrollment", enrollment.revision, input.expectedRevision)
    const now = new Date()
    const previous = enrollment.status === "withdrawal_requested" ? enrollment.previous_status : enrollment.status
    const row = yield* updateEnrollment(enrollmentUuid, {
      status: enrollmentTransitions[name].to,
      previous_status: previous,
      withdraw_requested_at: enrollment.withdraw_requested_at ?? now,
      withdraw_effective_at: graceful ? new Date(now.getTime() + policies.withdraw_grace_hours * hourMs) : now,
      withdrawn_at: graceful ? null : now,
      withdraw_reason: input.reason ?? null,
      offer_expires_at: null
    })
    yield* emitTransition(name, row, actor.profileUuid)
    yield* audit(row, actor, "enrollment.withdraw", { status: enrollment.status }, { status: row.status, by: asLearner ? "learner" : "staff" }, input.reason, input.requestUuid)
    if (row.status === "withdrawn") yield* offerFreedSeats(row.run_uuid)
    return yield* fullView(row)
  }))

export const restoreEnrollment = (actor: Actor, enrollmentUuid: string, input: RevisionCommand) =>
  once(actor, "learning.enrollments.restore", input, Enrollment, Effect.gen(function*() {
    const { enrollment, policies, run } = yield* transitionFor(actor, enrollmentUuid, "restore", input.expectedRevision)
    const previous = enrollment.previous_status
    if (previous !== "active" && previous !== "paused") {
      return yield* new InvalidState({ message: `Only a withdrawal from an active or paused enrollment can be undone (it was ${previous ?? "unknown"})` })
    }
    const until = restoreUntil(enrollment, policies)
    if (until === undefined || until.getTime() < Date.now()) {
      return yield* new WindowClosed({ message: `A withdrawal can be undone within ${policies.restore_days} day(s)` })
    }
    if (enrollment.status === "withdrawn") {
      yield* lockProfileInCourse(enrollment.course_uuid, enrollment.profile_uuid)
      if ((yield* openEnrollmentIn(enrollment.course_uuid, enrollment.profile_uuid)) !== undefined) {
        return yield* new NotEligible({ message: "The learner has another open enrollment in this course" })
      }
      const locked = yield* loadRun(run.uuid, { lock: true })
      if (!hasSeat(locked, yield* seatsTaken(run.uuid))) return yield* new CapacityFull({ message: `The run's ${run.capacity} seats are taken` })
    }
    const row = yield* updateEnrollment(enrollmentUuid, {
      status: previous,
      previous_status: null,
      withdraw_requested_at: null,
      withdraw_effective_at: null,
      withdrawn_at: null,
      withdraw_reason: null,
      wake_at: new Date()
    })
    yield* emitTransition("restore", row, actor.profileUuid)
    yield* audit(row, actor, "enrollment.restore", { status: enrollment.status }, { status: row.status }, undefined, input.requestUuid)
    return yield* fullView(row)
  }))

// ---- reads -------------------------------------------------------------------------------------------

export const getEnrollment = (actor: Actor, enrollmentUuid: string) =>
  Effect.gen(function*() {
    const { enrollment, policies } = yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    return enrollmentView(enrollment, policies, { waitlistPosition: yield* waitlistPosition(enrollment), progress: yield* progressOf(enrollment) })
  })

const ListRow = Schema.Struct({
  ...EnrollmentRow.fields,
  position: Schema.String,
  restore_days: Schema.Number,
  waitlist_position: Schema.NullOr(Schema.Number)
})
type ListRow = typeof ListRow.Type

const listColumns = selectList(ListRow, "e", {
  ...enrollmentComputed,
  position: "e.created_at::text",
  restore_days: "r.restore_days",
  waitlist_position: `CASE WHEN e.status = 'waitlisted' THEN (SELECT count(*)::int FROM learning_enrollments w
    WHERE w.run_uuid = e.run_uuid AND w.status = 'waitlisted' AND w.queue_position <= e.queue_position) END`
})
const decodeList = rowsDecoder(ListRow)

const listView = (row: ListRow) => enrollmentView(row, row, { waitlistPosition: row.waitlist_position ?? undefined })

/** The caller's own enrollments, newest first. */
export const listEnrollments = (actor: Actor, query: { readonly status?: EnrollmentStatus | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(listColumns)} FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid
        WHERE e.profile_uuid = ${actor.profileUuid}
          ${query.status !== undefined ? sql`AND e.status = ${query.status}` : sql``}
          ${position._tag === "Some" ? sql`AND (e.created_at, e.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
        ORDER BY e.created_at DESC, e.uuid DESC LIMIT ${limit + 1}`,
      decodeList
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), listView)
  })

/**
 * The roster of a course with progress: course-scoped staff see every run, run-scoped staff their
 * runs; `q` matches the learner's profile name.
 */
export const courseRoster = (
  actor: Actor,
  courseUuid: string,
  query: {
    readonly runUuid?: string | undefined
    readonly groupUuid?: string | undefined
    readonly status?: EnrollmentStatus | undefined
    readonly q?: string | undefined
    readonly cursor?: string | undefined
    readonly limit?: number | undefined
  }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* loadCourse(courseUuid, { lock: false })
    const standing = yield* authorizeCourse(actor, "learning.enrollments.course_list", facts(course))
    yield* requireCourseGroup(courseUuid, query.groupUuid)
    // Course-wide staff see every run, run-scoped staff their runs, group-scoped staff their groups' members.
    const { course: courseWide, groups, runs } = staffScope(standing.assignments)
    const inGroups = (uuids: ReadonlyArray<string>) =>
      sql`EXISTS (SELECT 1 FROM learning_group_members gm WHERE gm.enrollment_uuid = e.uuid AND gm.group_uuid IN ${sql.in([...uuids])})`
    const reach = courseWide
      ? sql``
      : sql`AND (${runs.length > 0 ? sql`e.run_uuid IN ${sql.in(runs)}` : sql`FALSE`} OR ${groups.length > 0 ? inGroups(groups) : sql`FALSE`})`
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const pattern = query.q !== undefined && query.q.trim() !== "" ? `%${query.q.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined
    const rows = yield* Effect.flatMap(sql`SELECT ${sql.literal(listColumns)} FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid
      WHERE e.course_uuid = ${courseUuid}
        ${reach}
        ${query.runUuid !== undefined ? sql`AND e.run_uuid = ${query.runUuid}` : sql``}
        ${query.groupUuid !== undefined ? sql`AND ${inGroups([query.groupUuid])}` : sql``}
        ${query.status !== undefined ? sql`AND e.status = ${query.status}` : sql``}
        ${pattern !== undefined ? sql`AND EXISTS (SELECT 1 FROM profiles p WHERE p.uuid = e.profile_uuid AND p.name ILIKE ${pattern})` : sql``}
        ${position._tag === "Some" ? sql`AND (e.created_at, e.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY e.created_at DESC, e.uuid DESC LIMIT ${limit + 1}`, decodeList)
    const page = pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), listView)
    const items = yield* Effect.forEach(page.items, (item, i) => Effect.map(progressOf(rows[i]!), (progress) => ({ ...item, progress })))
    return { ...page, items }
  })

/** The application: answers, the run's form, and the decisions (staff see who decided). */
export const getApplication = (actor: Actor, enrollmentUuid: string) =>
  Effect.gen(function*() {
    const { asLearner, enrollment, policies } = yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    const answers = (enrollment.application?.answers ?? {}) as Record<string, string>
    return {
      enrollmentUuid,
      status: enrollment.status,
      answers,
      ...(policies.application_form !== null ? { form: policies.application_form } : {}),
      submittedAt: enrollment.created_at,
      decisions: enrollment.decisions.map((d) => ({
        decision: d.decision,
        status: d.status,
        ...(d.reason !== undefined ? { reason: d.reason } : {}),
        ...(asLearner ? {} : { byProfileUuid: d.by }),
        at: new Date(d.at)
      }))
    }
  })

// ---- the worker ------------------------------------------------------------------------------------

const StepStatus = Schema.Struct({ node_key: Schema.String, status: Schema.String })
const decodeStates = rowsDecoder(StepStatus)

/** What `wakeEnrollment` needs of an enrollment. */
type Wakeable = Pick<EnrollmentRow, "uuid" | "profile_uuid" | "run_uuid" | "course_uuid" | "revision">

/**
 * One look at an active enrollment by the clock: steps whose computed unlock has come become
 * `available` with `learning.step.available` (once: the step state row remembers it);
 * `learning.deadline.approaching` goes out `reminderHours` before each effective due of an
 * unfinished step (once per due and lead time); `wake_at` becomes the next such moment.
 */
export const wakeEnrollment = (enrollment: Wakeable, policies: Pick<RunPolicies, "reminder_hours">, now: Date, context?: DateContext) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const dates: ReadonlyMap<string, StepDates> = computeStepDates(context ?? (yield* loadDateContext(enrollment.uuid))!, now)
    const states = new Map(
      (yield* Effect.flatMap(sql`SELECT node_key, status FROM learning_step_states WHERE enrollment_uuid = ${enrollment.uuid}`, decodeStates))
        .map((row) => [row.node_key, row.status])
    )
    const event = (type: "learning.step.available" | "learning.deadline.approaching", status: string, nodeKey: string, extra: Record<string, unknown> = {}) =>
      appendEvent({
        type,
        aggregate: { kind: "learning_enrollment", uuid: enrollment.uuid, revision: enrollment.revision },
        data: { objectUuid: enrollment.uuid, status, nodeKey, ...extra },
        context: { audience: [enrollment.profile_uuid], courseUuid: enrollment.course_uuid, runUuid: enrollment.run_uuid, enrollmentUuid: enrollment.uuid, nodeKey }
      })
    let next: number | undefined
    const later = (at: number) => {
      if (at > now.getTime() && (next === undefined || at < next)) next = at
    }
    for (const [nodeKey, step] of dates) {
      if (step.startRequired === true) continue
      const state = states.get(nodeKey)
      const unlocked = step.unlockAt === undefined || step.unlockAt.getTime() <= now.getTime()
      const closed = step.lockAt !== undefined && step.lockAt.getTime() <= now.getTime()
      if (!unlocked) later(step.unlockAt!.getTime())
      else if (!closed && (state === undefined || state === "locked")) {
        yield* markStepAvailable(enrollment.uuid, nodeKey)
        yield* event("learning.step.available", "available", nodeKey)
      }
      if (step.dueAt === undefined || state === "completed") continue
      const due = step.dueAt.getTime()
      for (const hours of policies.reminder_hours) {
        const at = due - hours * hourMs
        if (at > now.getTime()) {
          later(at)
          continue
        }
        if (due <= now.getTime()) continue
        const sent = yield* sql`INSERT INTO learning_deadline_reminders (enrollment_uuid, node_key, due_at, hours)
          VALUES (${enrollment.uuid}, ${nodeKey}, ${step.dueAt}, ${hours}) ON CONFLICT DO NOTHING RETURNING node_key`
        if (sent.length > 0) yield* event("learning.deadline.approaching", "approaching", nodeKey, { dueAt: step.dueAt.toISOString(), hours })
      }
    }
    yield* setWakeAt(enrollment.uuid, next === undefined ? null : new Date(next))
  })

/** An enrollment the clock wakes, with its run's reminder lead times. */
const WakeRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  run_uuid: Schema.String,
  course_uuid: Schema.String,
  revision: Schema.Number,
  reminder_hours: Schema.Array(Schema.Number)
})
const wakeColumns = selectList(WakeRow, "e", { reminder_hours: "r.reminder_hours" })
const decodeWake = rowsDecoder(WakeRow)

/**
 * One pass of the enrollment clock, in batches claimed with `FOR UPDATE SKIP LOCKED` (any number
 * of workers): offers and invitations past `offerExpiresAt` expire (their seats go to the
 * waitlist), pauses at `until` resume, withdrawals at grace end complete, and active enrollments
 * of running runs whose `wake_at` came are woken (`wakeEnrollment`). Returns how many moved.
 */
export const advanceEnrollments = (now: Date, batch = 100): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const claim = (where: Statement.Fragment) =>
      Effect.flatMap(
        sql`SELECT ${sql.literal(enrollmentColumns)} FROM learning_enrollments e WHERE ${where}
          ORDER BY e.uuid LIMIT ${batch} FOR UPDATE OF e SKIP LOCKED`,
        decodeEnrollments
      )
    const expired = yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* claim(sql`e.status IN ('invited', 'offered') AND e.offer_expires_at <= ${now}`)
      for (const enrollment of rows) {
        const row = yield* updateEnrollment(enrollment.uuid, { status: "expired" })
        yield* emitTransition("expire", row, null)
      }
      for (const runUuid of new Set(rows.map((row) => row.run_uuid))) yield* offerFreedSeats(runUuid)
      return rows.length
    }))
    const resumed = yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* claim(sql`e.status = 'paused' AND e.pause_until <= ${now}`)
      for (const enrollment of rows) yield* resume(enrollment, null, "resume_worker", now)
      return rows.length
    }))
    const withdrawn = yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* claim(sql`e.status = 'withdrawal_requested' AND e.withdraw_effective_at <= ${now}`)
      for (const enrollment of rows) {
        const row = yield* updateEnrollment(enrollment.uuid, { status: "withdrawn", withdrawn_at: now })
        yield* emitTransition("withdraw_worker", row, null)
      }
      for (const runUuid of new Set(rows.map((row) => row.run_uuid))) yield* offerFreedSeats(runUuid)
      return rows.length
    }))
    const woken = yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* Effect.flatMap(
        sql`SELECT ${sql.literal(wakeColumns)}
          FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid
          WHERE e.status = 'active' AND e.wake_at <= ${now} AND r.status = 'running'
          ORDER BY e.wake_at LIMIT ${batch} FOR UPDATE OF e SKIP LOCKED`,
        decodeWake
      )
      for (const row of rows) yield* wakeEnrollment(row, row, now)
      return rows.length
    }))
    return expired + resumed + withdrawn + woken
  })

/**
 * The earliest moment `advanceEnrollments` has work, one partial index each (0020): an offer's
 * expiry, a pause's end, a withdrawal's grace end, an active enrollment's `wake_at` in a running
 * run. `undefined`: none.
 */
const Moment = Schema.Struct({ at: Schema.NullOr(Schema.Union(Timestamp, Schema.String)) })
const decodeMoment = rowsDecoder(Moment)

export const nextEnrollmentMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* Effect.flatMap(sql`SELECT least(
      (SELECT min(offer_expires_at) FROM learning_enrollments WHERE status IN ('invited', 'offered')),
      (SELECT min(pause_until) FROM learning_enrollments WHERE status = 'paused'),
      (SELECT min(withdraw_effective_at) FROM learning_enrollments WHERE status = 'withdrawal_requested'),
      (SELECT e.wake_at FROM learning_enrollments e WHERE e.status = 'active' AND e.wake_at IS NOT NULL
        AND EXISTS (SELECT 1 FROM learning_runs r WHERE r.uuid = e.run_uuid AND r.status = 'running')
        ORDER BY e.wake_at LIMIT 1)) AS at`, decodeMoment)
  return row?.at == null ? undefined : new Date(row.at)
})
