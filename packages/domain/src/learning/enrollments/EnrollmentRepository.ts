import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { NotFound } from "../../kernel/ApiError.js"
import { revisedColumns } from "../../store/Revision.js"
import { Int8Text, rowsDecoder, selectList, Timestamp, uuidArray } from "../../store/Rows.js"

/**
 * `learning_enrollments`: its rows, decoded, and the one module that writes it (other modules call
 * the functions below). `queue_position` orders arrivals (the waitlist is FIFO by it).
 */

export const enrollmentStatuses = [
  "invited",
  "requested",
  "waitlisted",
  "offered",
  "active",
  "paused",
  "withdrawal_requested",
  "withdrawn",
  "declined",
  "expired",
  "rejected",
  "completed",
  "cancelled"
] as const
export type EnrollmentStatus = typeof enrollmentStatuses[number]

/** Non-terminal statuses: at most one enrollment per profile per course is in one of them (a unique index). */
export const openStatuses: ReadonlyArray<EnrollmentStatus> = ["invited", "requested", "waitlisted", "offered", "active", "paused", "withdrawal_requested"]
/** Statuses that hold a seat of the run's capacity (an invitation or an offer reserves one). */
export const seatStatuses: ReadonlyArray<EnrollmentStatus> = ["invited", "offered", "active", "paused", "withdrawal_requested"]

/** One finished pause: dates still ahead at `from` moved by `days`. */
export const PauseRecord = Schema.Struct({ from: Schema.String, days: Schema.Number })
export type PauseRecord = typeof PauseRecord.Type

export const EnrollmentStatus = Schema.Literal(...enrollmentStatuses)

export const DecisionRecord = Schema.Struct({
  decision: Schema.Literal("approve", "reject", "waitlist"),
  reason: Schema.optionalWith(Schema.String, { exact: true }),
  by: Schema.String,
  at: Schema.String,
  status: EnrollmentStatus
})
export type DecisionRecord = typeof DecisionRecord.Type

export const EnrollmentRow = Schema.Struct({
  uuid: Schema.String,
  run_uuid: Schema.String,
  course_uuid: Schema.String,
  profile_uuid: Schema.String,
  status: EnrollmentStatus,
  started_at: Schema.NullOr(Timestamp),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp,
  queue_position: Int8Text,
  previous_status: Schema.NullOr(EnrollmentStatus),
  offer_expires_at: Schema.NullOr(Timestamp),
  invited_by: Schema.NullOr(Schema.String),
  invitation_message: Schema.NullOr(Schema.String),
  application: Schema.NullOr(Schema.Struct({ answers: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })),
  decisions: Schema.Array(DecisionRecord),
  paused_at: Schema.NullOr(Timestamp),
  pause_until: Schema.NullOr(Timestamp),
  paused_days: Schema.Number,
  pause_count: Schema.Number,
  pauses: Schema.Array(PauseRecord),
  withdraw_requested_at: Schema.NullOr(Timestamp),
  withdraw_effective_at: Schema.NullOr(Timestamp),
  withdrawn_at: Schema.NullOr(Timestamp),
  withdraw_reason: Schema.NullOr(Schema.String),
  activated_at: Schema.NullOr(Timestamp),
  criteria_met_at: Schema.NullOr(Timestamp),
  completed_at: Schema.NullOr(Timestamp),
  transferred_from: Schema.NullOr(Schema.String),
  /** The active groups it is a member of, oldest first. */
  groups: Schema.Array(Schema.Struct({ uuid: Schema.String, name: Schema.String, kind: Schema.Literal("cohort", "team", "section") }))
})
export type EnrollmentRow = typeof EnrollmentRow.Type

/** The columns of `EnrollmentRow` computed in SQL (alias `e`): the queue position as text, the groups. */
export const enrollmentComputed = {
  queue_position: "e.queue_position::text",
  groups: `(SELECT coalesce(jsonb_agg(jsonb_build_object('uuid', g.uuid, 'name', g.name, 'kind', g.kind) ORDER BY g.created_at, g.uuid), '[]'::jsonb)
    FROM learning_group_members gm JOIN learning_groups g ON g.uuid = gm.group_uuid
    WHERE gm.enrollment_uuid = e.uuid AND g.status = 'active')`
}

export const enrollmentColumns = selectList(EnrollmentRow, "e", enrollmentComputed)
const decodeEnrollments = rowsDecoder(EnrollmentRow)

/**
 * Enrollments by uuid, in uuid order (locked in that order for the transaction when asked, so two
 * transactions locking several never wait on each other crosswise); unknown uuids are left out.
 * The lock is `FOR NO KEY UPDATE`: it orders the enrollment's commands and grading (an enrollment
 * is locked before its submissions and step states, docs/decisions.md "Lock order"), while rows
 * that only reference it (a submission, a step state, a grading job) can still be inserted.
 */
export const loadEnrollments = (uuids: ReadonlyArray<string>, options: { readonly lock: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    uuids.length === 0 ? Effect.succeed([]) : Effect.flatMap(
      sql`SELECT ${sql.literal(enrollmentColumns)} FROM learning_enrollments e WHERE e.uuid = ANY(${uuidArray(sql, uuids)})
        ORDER BY e.uuid ${options.lock ? sql.literal("FOR NO KEY UPDATE OF e") : sql``}`,
      decodeEnrollments
    ))

/**
 * Locks enrollments, in uuid order, for the transaction (as `loadEnrollments` does, reading
 * nothing): taken first by whatever changes an enrollment's submissions or step states without
 * having loaded it, so the enrollment always comes before them (docs/decisions.md "Lock order").
 * Locking one the transaction already holds costs nothing.
 */
export const lockEnrollments = (uuids: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM learning_enrollments WHERE uuid = ANY(${uuidArray(sql, [...new Set(uuids.map((uuid) => uuid.toLowerCase()))])})
      ORDER BY uuid FOR NO KEY UPDATE`.pipe(Effect.asVoid))

/** The enrollment (locked for the transaction when asked); 404 when there is none. */
export const loadEnrollment = (uuid: string, options: { readonly lock: boolean }) =>
  Effect.flatMap(loadEnrollments([uuid], options), (rows) =>
    rows[0] === undefined ? Effect.fail(new NotFound({ message: `No enrollment ${uuid}` })) : Effect.succeed(rows[0]))

/**
 * Sets columns of a locked enrollment and bumps its revision; returns the new row. Values are
 * plain columns; `json` ones are written as jsonb.
 */
export const updateEnrollment = (
  uuid: string,
  values: Readonly<Record<string, string | number | boolean | Date | null>>,
  json: Readonly<Record<string, unknown>> = {}
): Effect.Effect<EnrollmentRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE learning_enrollments SET ${revisedColumns(sql, values, json)} WHERE uuid = ${uuid}`
    return yield* Effect.orDie(loadEnrollment(uuid, { lock: false }))
  })

/** A new enrollment's columns (`enroll`, `invite`); the rest take their defaults. */
export interface NewEnrollmentRow {
  readonly run_uuid: string
  readonly course_uuid: string
  readonly profile_uuid: string
  readonly status: EnrollmentStatus
  readonly activated_at: Date | null
  readonly offer_expires_at: Date | null
  readonly invited_by: string | null
  readonly invitation_message: string | null
  readonly application: { readonly answers: Readonly<Record<string, string>> } | null
}

/** Inserts an enrollment (its clock looks at it at once when it starts active) and returns it. */
export const insertEnrollment = (input: NewEnrollmentRow) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const uuid = crypto.randomUUID()
    yield* sql`INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status, activated_at, wake_at, offer_expires_at,
        invited_by, invitation_message, application)
      VALUES (${uuid}, ${input.run_uuid}, ${input.course_uuid}, ${input.profile_uuid}, ${input.status},
        ${input.activated_at}, ${input.activated_at}, ${input.offer_expires_at},
        ${input.invited_by}, ${input.invitation_message},
        ${input.application !== null ? JSON.stringify(input.application) : null}::jsonb)`
    return yield* Effect.orDie(loadEnrollment(uuid, { lock: false }))
  })

const Revision = Schema.Struct({ revision: Schema.Number })
const decodeRevisions = rowsDecoder(Revision)

/** Sets when the enrollment clock next looks at an enrollment (`null`: nothing ahead); no revision bump. */
export const setWakeAt = (uuid: string, at: Date | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`UPDATE learning_enrollments SET wake_at = ${at} WHERE uuid = ${uuid}`))

/** The clock looks at the enrollment again now (its dates moved); no revision bump. */
export const wakeNow = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`UPDATE learning_enrollments SET wake_at = now() WHERE uuid = ${uuid}`))

/**
 * The enrollment's dates changed (an override, an extension): the clock looks again now and the
 * revision is bumped; returns the new revision.
 */
export const touchDates = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_enrollments SET wake_at = now(), revision = revision + 1, updated_at = now()
          WHERE uuid = ${uuid} RETURNING revision`,
        decodeRevisions
      ),
      (rows) => rows[0]!.revision
    ))

/** The completion criteria were met at `at`; when `completes`, the enrollment completes with it. Returns the new revision. */
export const markCriteriaMet = (uuid: string, at: Date, completes: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_enrollments SET criteria_met_at = ${at}, revision = revision + 1, updated_at = now()
          ${completes ? sql`, status = 'completed', completed_at = ${at}, paused_at = NULL, pause_until = NULL` : sql``}
          WHERE uuid = ${uuid} RETURNING revision`,
        decodeRevisions
      ),
      (rows) => rows[0]!.revision
    ))

const Completed = Schema.Struct({ uuid: Schema.String, profile_uuid: Schema.String, revision: Schema.Number })
const decodeCompleted = rowsDecoder(Completed)

/** A run finished: its active and paused enrollments complete; returns them. */
export const completeRunEnrollments = (runUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE learning_enrollments
        SET status = 'completed', revision = revision + 1, updated_at = now()
        WHERE run_uuid = ${runUuid} AND status IN ('active', 'paused') RETURNING uuid, profile_uuid, revision`,
      decodeCompleted
    ))

const Cancelled = Schema.Struct({ uuid: Schema.String, profile_uuid: Schema.String })
const decodeCancelled = rowsDecoder(Cancelled)

/** A run was cancelled: its open enrollments are cancelled; returns them. */
export const cancelRunEnrollments = (runUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE learning_enrollments
        SET status = 'cancelled', revision = revision + 1, updated_at = now()
        WHERE run_uuid = ${runUuid} AND status IN ('invited', 'requested', 'waitlisted', 'offered', 'active', 'paused', 'withdrawal_requested')
        RETURNING uuid, profile_uuid`,
      decodeCancelled
    ))

const Transferred = Schema.Struct({ uuid: Schema.String, profile_uuid: Schema.String, status: EnrollmentStatus, revision: Schema.Number })
const decodeTransferred = rowsDecoder(Transferred)

/** Moves an enrollment to another run of its course (a transfer's commit); returns what its events need. */
export const moveToRun = (uuid: string, toRunUuid: string, fromRunUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_enrollments
          SET run_uuid = ${toRunUuid}, transferred_from = ${fromRunUuid}, wake_at = now(), revision = revision + 1, updated_at = now()
          WHERE uuid = ${uuid} RETURNING uuid, profile_uuid, status, revision`,
        decodeTransferred
      ),
      (rows) => rows[0]!
    ))
