import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { appendEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import { once } from "../Commands.js"
import { ExtensionRequest, type ExtensionRequestT } from "./CorrectionsModel.js"
import { changedNodeKeys, type StepDates, stepDates } from "../enrollments/Dates.js"
import { enrollmentFor } from "../enrollments/EnrollmentAccess.js"
import { touchDates } from "../enrollments/EnrollmentRepository.js"
import { insertGrantedOverride } from "../enrollments/DateOverrideRepository.js"
import { loadCourse } from "../courses/CourseRepository.js"
import { ConflictOfInterest, GradeFrozen, WindowClosed } from "../LearningErrors.js"
import { atomScope, type CourseOperation, decide, scopeReach, standingOn } from "../Permissions.js"
import { courseFacts } from "../staff/Staff.js"
import { gradesFrozenAt, loadRun } from "../courses/RunRepository.js"
import { addDays, daysBetween } from "../enrollments/Schedule.js"

/**
 * Extension requests: the learner asks for a
 * later due date for one step (or, with `days`, for every step); within the run's extension
 * policy the request is approved at once, otherwise staff with `dates_grant` decide. Approving
 * writes a date override with origin `extension`, so the computed calendar explains it and
 * lateness follows the new date; `learning.deadline.changed` fires only when a computed date changed.
 */

const openStatuses = ["active", "paused"] as const

export const ExtensionRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  enrollment_uuid: Schema.String,
  profile_uuid: Schema.String,
  node_key: Schema.NullOr(Schema.String),
  original_due_at: Timestamp,
  requested_due_at: Timestamp,
  granted_due_at: Schema.NullOr(Timestamp),
  basis: Schema.NullOr(Schema.Literal("original_due", "approval")),
  reason: Schema.String,
  comment: Schema.String,
  status: Schema.Literal("requested", "approved", "denied", "expired"),
  auto_approved: Schema.Boolean,
  override_uuid: Schema.NullOr(Schema.String),
  decided_by: Schema.NullOr(Schema.String),
  decided_at: Schema.NullOr(Timestamp),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type ExtensionRow = typeof ExtensionRow.Type

const columns = selectList(ExtensionRow, "x")
const decodeExtensions = rowsDecoder(ExtensionRow)
const decodePositionedExtensions = rowsDecoder(Schema.Struct({ ...ExtensionRow.fields, position: Schema.String }))
const decodeCounts = rowsDecoder(Schema.Struct({ used: Schema.Number, pending: Schema.Number }))
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decodeMoment = rowsDecoder(Schema.Struct({ at: Schema.NullOr(Timestamp) }))

/** The extension request state machine as data; the tests generate state × trigger × role from it. */
export const extensionTransitions = {
  create: { trigger: "learning.extensions.create", from: ["none"], to: "requested" },
  auto_approve: { trigger: "learning.extensions.create", from: ["none"], to: "approved" },
  approve: { trigger: "learning.extensions.decide", from: ["requested"], to: "approved" },
  deny: { trigger: "learning.extensions.decide", from: ["requested"], to: "denied" },
  expire: { trigger: "worker.extension_expired", from: ["requested"], to: "expired" }
} as const
export const extensionAllows = (trigger: string, from: string) =>
  Object.values(extensionTransitions).some((t) => t.trigger === trigger && (t.from as ReadonlyArray<string>).includes(from))

export const extensionView = (row: ExtensionRow): ExtensionRequestT => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  runUuid: row.run_uuid,
  enrollmentUuid: row.enrollment_uuid,
  profileUuid: row.profile_uuid,
  ...(row.node_key !== null ? { nodeKey: row.node_key } : {}),
  originalDueAt: row.original_due_at,
  requestedDueAt: row.requested_due_at,
  ...(row.granted_due_at !== null ? { grantedDueAt: row.granted_due_at } : {}),
  ...(row.basis !== null ? { basis: row.basis } : {}),
  reason: row.reason,
  comment: row.comment,
  status: row.status,
  autoApproved: row.auto_approved,
  ...(row.override_uuid !== null ? { overrideUuid: row.override_uuid } : {}),
  ...(row.decided_by !== null ? { decidedBy: row.decided_by } : {}),
  ...(row.decided_at !== null ? { decidedAt: row.decided_at } : {}),
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export interface DeadlineTarget {
  readonly uuid: string
  readonly profile_uuid: string
  readonly course_uuid: string
  readonly run_uuid: string
}

/**
 * Runs `change` (which writes date overrides of one enrollment) between two computations of its
 * dates; when a computed date changed, bumps the enrollment (its clock looks again) and emits
 * `learning.deadline.changed` naming the steps. Returns the change's result and the changed keys.
 */
export const withDeadlineChange = <A, E, R>(
  enrollment: DeadlineTarget,
  actorProfileUuid: string,
  change: Effect.Effect<A, E, R>,
  context: Readonly<Record<string, string>> = {}
): Effect.Effect<{ readonly result: A; readonly changed: ReadonlyArray<string> }, E | SqlError, R | SqlClient.SqlClient> =>
  Effect.map(withDeadlineChanges([enrollment], actorProfileUuid, change, context), ({ changed, result }) => ({ result, changed: changed.get(enrollment.uuid) ?? [] }))

/**
 * `withDeadlineChange` for several enrollments at once (a group's members): each enrollment whose
 * computed dates changed is bumped and hears `learning.deadline.changed`; the others hear nothing.
 * Returns the changed keys per enrollment that changed.
 */
export const withDeadlineChanges = <A, E, R>(
  enrollments: ReadonlyArray<DeadlineTarget>,
  actorProfileUuid: string,
  change: Effect.Effect<A, E, R>,
  context: Readonly<Record<string, string>> = {}
): Effect.Effect<{ readonly result: A; readonly changed: ReadonlyMap<string, ReadonlyArray<string>> }, E | SqlError, R | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const before = yield* Effect.forEach(enrollments, (enrollment) => stepDates(enrollment.uuid))
    const result = yield* change
    const changedKeys = new Map<string, ReadonlyArray<string>>()
    for (const [i, enrollment] of enrollments.entries()) {
      const changed = changedNodeKeys(before[i]!, yield* stepDates(enrollment.uuid))
      if (changed.length === 0) continue
      changedKeys.set(enrollment.uuid, changed)
      const revision = yield* touchDates(enrollment.uuid)
      yield* appendEvent({
        type: "learning.deadline.changed",
        aggregate: { kind: "learning_enrollment", uuid: enrollment.uuid, revision },
        data: { objectUuid: enrollment.uuid, status: "changed", nodeKeys: changed },
        context: {
          profileUuid: actorProfileUuid,
          audience: [enrollment.profile_uuid],
          courseUuid: enrollment.course_uuid,
          runUuid: enrollment.run_uuid,
          enrollmentUuid: enrollment.uuid,
          ...context
        }
      })
    }
    return { result, changed: changedKeys }
  })

/**
 * Inserts a date override of one enrollment's step: the due (and the lock, when the step would
 * lock before the new due) and extra attempts. Returns its uuid.
 */
export const insertOverride = (
  enrollment: DeadlineTarget,
  input: {
    readonly nodeKey: string
    readonly dueAt?: Date | undefined
    readonly lockAt?: Date | undefined
    readonly extraAttempts?: number | undefined
    readonly origin: "extension" | "incident"
    readonly reason: string
    readonly by: string
  }
) =>
  Effect.suspend(() => {
    const uuid = crypto.randomUUID()
    return Effect.as(
      insertGrantedOverride({
        uuid,
        runUuid: enrollment.run_uuid,
        enrollmentUuid: enrollment.uuid,
        nodeKey: input.nodeKey,
        dueAt: input.dueAt ?? null,
        lockAt: input.lockAt ?? null,
        extraAttempts: input.extraAttempts ?? 0,
        origin: input.origin,
        reason: input.reason,
        by: input.by
      }),
      uuid
    )
  })

/** The enrollment an extension request is for, as the date writers take it. */
const targetOf = (row: ExtensionRow): DeadlineTarget => ({ uuid: row.enrollment_uuid, profile_uuid: row.profile_uuid, course_uuid: row.course_uuid, run_uuid: row.run_uuid })

/**
 * Authorizes staff on a learner's record (an extension request, an appeal, an incident): callers
 * with no staff role on the course get 404 — the record's own learner too when `learnerSees` is
 * false — so its existence never leaks; staff without the right, and the learner, get 403.
 */
export const staffOnRecord = (
  actor: Actor,
  operation: CourseOperation,
  record: { readonly course_uuid: string; readonly run_uuid: string; readonly profile_uuid?: string },
  notFound: string
) =>
  Effect.gen(function*() {
    const course = yield* loadCourse(record.course_uuid, { lock: false })
    const standing = yield* standingOn(actor, course.uuid)
    if (standing.assignments.length === 0 && actor.profileUuid !== record.profile_uuid) return yield* new NotFound({ message: notFound })
    const refusal = decide(operation, { uuid: course.uuid, status: course.status, visibility: course.visibility, latestVersion: course.latest_version },
      standing, { runUuid: record.run_uuid })
    if (refusal !== undefined) return yield* (refusal._tag === "NotFound" ? new NotFound({ message: notFound }) : refusal)
    return standing
  })

/** The lock that keeps a step open until `due`: the current lock when it is later, else `due`. */
const lockFor = (dates: StepDates, due: Date) => (dates.lockAt !== undefined && dates.lockAt.getTime() < due.getTime() ? due : undefined)

/** Writes the extension's overrides: one per step it covers, each due moved to the granted date (or by the granted days). */
const grant = (row: ExtensionRow, granted: Date, by: string, dates: ReadonlyMap<string, StepDates>) =>
  Effect.gen(function*() {
    const target = targetOf(row)
    const shift = granted.getTime() - row.original_due_at.getTime()
    const uuids: Array<string> = []
    for (const [nodeKey, step] of dates) {
      if (row.node_key !== null && nodeKey !== row.node_key) continue
      if (step.dueAt === undefined) continue
      const due = row.node_key !== null ? granted : new Date(step.dueAt.getTime() + shift)
      uuids.push(yield* insertOverride(target, { nodeKey, dueAt: due, lockAt: lockFor(step, due), origin: "extension", reason: `extension ${row.uuid}`, by }))
    }
    return uuids
  })

const loadExtension = (uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM learning_extension_requests x WHERE x.uuid = ${uuid}
      ${lock ? sql.literal("FOR UPDATE") : sql``}`,
      decodeExtensions
    )
    return row === undefined ? yield* new NotFound({ message: `No extension request ${uuid}` }) : row
  })

const requireOpen = (run: { readonly finished_at: Date | null; readonly freeze_after_days: number }) => {
  const frozen = gradesFrozenAt(run)
  return frozen !== undefined && frozen.getTime() <= Date.now()
    ? Effect.fail(new GradeFrozen({ message: "The run's grades are frozen; dates cannot change" }))
    : Effect.void
}

export interface ExtensionCreateInput {
  readonly requestUuid: string
  readonly nodeKey?: string | undefined
  readonly requestedDueAt?: Date | undefined
  readonly days?: number | undefined
  readonly reason: string
}

export const createExtension = (actor: Actor, enrollmentUuid: string, input: ExtensionCreateInput) =>
  once(actor, "learning.extensions.create", input, ExtensionRequest, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if ((input.requestedDueAt === undefined) === (input.days === undefined)) {
      return yield* new InvalidRequest({ message: "Give requestedDueAt or days (one of them)" })
    }
    if (input.nodeKey === undefined && input.days === undefined) {
      return yield* new InvalidRequest({ message: "days: a run-wide extension (no nodeKey) moves every due by days" })
    }
    const { enrollment, nodes, run } = yield* enrollmentFor(actor, enrollmentUuid, { lock: true })
    if (!(openStatuses as ReadonlyArray<string>).includes(enrollment.status)) {
      return yield* new InvalidState({ message: `An extension needs an active or paused enrollment, not ${enrollment.status}` })
    }
    yield* requireOpen(run)
    const dates = yield* stepDates(enrollmentUuid)
    let originalDue: Date | undefined
    if (input.nodeKey !== undefined) {
      if (!nodes.some((node) => node.nodeKey === input.nodeKey && node.kind === "step")) {
        return yield* new InvalidRequest({ message: `nodeKey: no step "${input.nodeKey}" in the run's version` })
      }
      originalDue = dates.get(input.nodeKey)?.dueAt
      if (originalDue === undefined) return yield* new InvalidRequest({ message: `nodeKey: the step "${input.nodeKey}" has no due date` })
    } else {
      const dues = [...dates.values()].flatMap((step) => step.dueAt !== undefined ? [step.dueAt.getTime()] : [])
      if (dues.length === 0) return yield* new InvalidRequest({ message: "The run has no due dates to extend" })
      originalDue = new Date(Math.max(...dues))
    }
    const requested = input.requestedDueAt ?? addDays(originalDue, input.days!)
    if (requested.getTime() <= originalDue.getTime()) {
      return yield* new InvalidRequest({ message: `requestedDueAt: must be after the current due date ${originalDue.toISOString()}` })
    }
    const policy = run.extension_policy
    const days = daysBetween(originalDue, requested)
    const now = Date.now()
    if (now > addDays(originalDue, policy.windowDays).getTime()) {
      return yield* new WindowClosed({ message: `Extensions are asked no later than ${policy.windowDays} day(s) after the due date` })
    }
    if (days > policy.maxDays) return yield* new WindowClosed({ message: `The run allows at most ${policy.maxDays} day(s) of extension` })
    const [counts] = yield* Effect.flatMap(
      sql`SELECT count(*) FILTER (WHERE status IN ('requested', 'approved'))::int AS used,
        count(*) FILTER (WHERE status = 'requested' AND node_key IS NOT DISTINCT FROM ${input.nodeKey ?? null})::int AS pending
      FROM learning_extension_requests WHERE enrollment_uuid = ${enrollmentUuid}`,
      decodeCounts
    )
    if (counts!.pending > 0) return yield* new InvalidState({ message: "An extension request for this step is waiting for a decision" })
    if (counts!.used >= policy.maxCount) {
      return yield* new WindowClosed({ message: `The run allows at most ${policy.maxCount} extension request(s) per learner` })
    }
    const auto = days <= policy.autoApproveDays
    const [created] = yield* Effect.flatMap(
      sql`INSERT INTO learning_extension_requests AS x (uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid,
        node_key, original_due_at, requested_due_at, reason)
      VALUES (${crypto.randomUUID()}, ${enrollment.course_uuid}, ${run.uuid}, ${enrollmentUuid}, ${enrollment.profile_uuid}, ${input.nodeKey ?? null},
        ${originalDue}, ${requested}, ${input.reason})
      RETURNING ${sql.literal(columns)}`,
      decodeExtensions
    )
    let row = created!
    if (auto) {
      const { result: overrides } = yield* withDeadlineChange(targetOf(row), actor.profileUuid, grant(row, requested, actor.profileUuid, dates), { extensionUuid: row.uuid })
      ;[row] = (yield* Effect.flatMap(
        sql`UPDATE learning_extension_requests x SET status = 'approved', auto_approved = true, basis = 'original_due',
          granted_due_at = requested_due_at, override_uuid = ${overrides[0] ?? null}, decided_at = now(), revision = revision + 1, updated_at = now()
        WHERE x.uuid = ${row.uuid} RETURNING ${sql.literal(columns)}`,
        decodeExtensions
      )) as [ExtensionRow]
    }
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: auto ? "extension.auto_approve" : "extension.request",
      subjectKind: "extension_request",
      subjectUuid: row.uuid,
      enrollmentUuid,
      before: null,
      after: extensionView(row),
      reason: input.reason,
      requestUuid: input.requestUuid
    })
    return extensionView(row)
  }))

export interface ExtensionDecideInput {
  readonly requestUuid: string
  readonly expectedRevision: number
  readonly decision: "approve" | "deny"
  readonly grantedDueAt?: Date | undefined
  readonly days?: number | undefined
  readonly basis?: "original_due" | "approval" | undefined
  readonly comment: string
}

export const decideExtension = (actor: Actor, uuid: string, input: ExtensionDecideInput) =>
  once(actor, "learning.extensions.decide", input, ExtensionRequest, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* loadExtension(uuid, false)
    yield* staffOnRecord(actor, "learning.extensions.decide", found, `No extension request ${uuid}`)
    if (found.profile_uuid === actor.profileUuid) {
      return yield* new ConflictOfInterest({ message: "Nobody decides their own extension request" })
    }
    if (input.decision === "deny" && (input.grantedDueAt !== undefined || input.days !== undefined)) {
      return yield* new InvalidRequest({ message: "grantedDueAt/days: only an approval grants a date" })
    }
    if (input.grantedDueAt !== undefined && input.days !== undefined) return yield* new InvalidRequest({ message: "Give grantedDueAt or days, not both" })
    // The enrollment first (the lock order of every enrollment command), then the request.
    yield* sql`SELECT 1 FROM learning_enrollments WHERE uuid = ${found.enrollment_uuid} FOR UPDATE`
    const row = yield* loadExtension(uuid, true)
    if (!extensionAllows("learning.extensions.decide", row.status)) {
      return yield* new InvalidState({ message: `The request is ${row.status}; only a requested one is decided` })
    }
    yield* requireRevision("extension request", row.revision, input.expectedRevision)
    const run = yield* loadRun(row.run_uuid, { lock: false })
    yield* requireOpen(run)
    let updated: ExtensionRow
    if (input.decision === "deny") {
      ;[updated] = (yield* Effect.flatMap(
        sql`UPDATE learning_extension_requests x SET status = 'denied', comment = ${input.comment},
          decided_by = ${actor.profileUuid}, decided_at = now(), revision = revision + 1, updated_at = now()
        WHERE x.uuid = ${uuid} RETURNING ${sql.literal(columns)}`,
        decodeExtensions
      )) as [ExtensionRow]
    } else {
      const basis = input.basis ?? "original_due"
      const from = basis === "original_due" ? row.original_due_at.getTime() : Date.now()
      const granted = input.grantedDueAt ?? (input.days !== undefined ? addDays(new Date(from), input.days) : row.requested_due_at)
      if (granted.getTime() <= row.original_due_at.getTime()) {
        return yield* new InvalidRequest({ message: `grantedDueAt: must be after the original due date ${row.original_due_at.toISOString()}` })
      }
      const dates = yield* stepDates(row.enrollment_uuid)
      const { result: overrides } = yield* withDeadlineChange(targetOf(row), actor.profileUuid, grant(row, granted, actor.profileUuid, dates), { extensionUuid: uuid })
      ;[updated] = (yield* Effect.flatMap(
        sql`UPDATE learning_extension_requests x SET status = 'approved', basis = ${basis}, granted_due_at = ${granted},
          override_uuid = ${overrides[0] ?? null}, comment = ${input.comment}, decided_by = ${actor.profileUuid}, decided_at = now(),
          revision = revision + 1, updated_at = now()
        WHERE x.uuid = ${uuid} RETURNING ${sql.literal(columns)}`,
        decodeExtensions
      )) as [ExtensionRow]
    }
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: `extension.${input.decision}`,
      subjectKind: "extension_request",
      subjectUuid: uuid,
      enrollmentUuid: row.enrollment_uuid,
      before: extensionView(row),
      after: extensionView(updated),
      reason: input.comment,
      requestUuid: input.requestUuid
    })
    return extensionView(updated)
  }))

export const listExtensions = (actor: Actor, enrollmentUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)} FROM learning_extension_requests x
      WHERE x.enrollment_uuid = ${enrollmentUuid} ORDER BY x.created_at DESC, x.uuid DESC LIMIT 500`,
      decodeExtensions
    )
    return rows.map(extensionView)
  })

export const courseExtensions = (
  actor: Actor,
  courseUuid: string,
  query: { readonly status?: ExtensionRow["status"] | undefined; readonly runUuid?: string | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* loadCourse(courseUuid, { lock: false })
    const standing = yield* standingOn(actor, courseUuid)
    // Run- and group-scoped staff see the requests of their runs and of their groups' members.
    const scope = atomScope(standing.assignments, "dates_grant")
    const refusal = decide("learning.extensions.course_list", courseFacts(course), standing, { runUuid: query.runUuid })
    if (refusal !== undefined && scope.groups.length === 0) return yield* refusal
    const reach = scopeReach(sql, scope, sql`x.run_uuid`, sql`x.enrollment_uuid`)
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(columns)}, x.created_at::text AS position
      FROM learning_extension_requests x WHERE x.course_uuid = ${courseUuid} AND ${reach}
        ${query.status !== undefined ? sql`AND x.status = ${query.status}` : sql``}
        ${query.runUuid !== undefined ? sql`AND x.run_uuid = ${query.runUuid}` : sql``}
        ${position._tag === "Some" ? sql`AND (x.created_at, x.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY x.created_at DESC, x.uuid DESC LIMIT ${limit + 1}`,
      decodePositionedExtensions
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), extensionView)
  })

/** W: requests still undecided when their requested due date has passed expire (nothing to grant any more). */
export const expireExtensions = (now: Date, batch = 100): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_extension_requests SET status = 'expired', revision = revision + 1, updated_at = now()
        WHERE uuid IN (SELECT uuid FROM learning_extension_requests WHERE status = 'requested' AND requested_due_at <= ${now}
          ORDER BY requested_due_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        RETURNING uuid`,
        decodeUuids
      ),
      (rows) => rows.length
    )))

/** The earliest moment `expireExtensions` has work (index `learning_extension_requests_expiry`, migration 0030); `undefined`: none. */
export const nextExtensionExpiryMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT min(requested_due_at) AS at FROM learning_extension_requests WHERE status = 'requested'`.pipe(
    Effect.flatMap(decodeMoment),
    Effect.map(([row]) => row?.at ?? undefined)
  ))
