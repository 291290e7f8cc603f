import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { NotFound } from "../../kernel/ApiError.js"
import { revisedColumns } from "../../store/Revision.js"
import { uuidArray } from "../../store/Rows.js"

/**
 * `learning_enrollments` (LEARNING §2.1 #6): its rows, read and written only here and in the
 * enrollment operations. `queue_position` orders arrivals (the waitlist is FIFO by it).
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

/** Non-terminal statuses: at most one enrollment per profile per course is in one of them (§5.9). */
export const openStatuses: ReadonlyArray<EnrollmentStatus> = ["invited", "requested", "waitlisted", "offered", "active", "paused", "withdrawal_requested"]
/** Statuses that hold a seat of the run's capacity (an invitation or an offer reserves one). */
export const seatStatuses: ReadonlyArray<EnrollmentStatus> = ["invited", "offered", "active", "paused", "withdrawal_requested"]

/** One finished pause: dates still ahead at `from` moved by `days`. */
export interface PauseRecord {
  readonly from: string
  readonly days: number
}

export interface DecisionRecord {
  readonly decision: "approve" | "reject" | "waitlist"
  readonly reason?: string
  readonly by: string
  readonly at: string
  readonly status: EnrollmentStatus
}

export interface EnrollmentRow {
  readonly uuid: string
  readonly run_uuid: string
  readonly course_uuid: string
  readonly profile_uuid: string
  readonly status: EnrollmentStatus
  readonly started_at: Date | null
  readonly revision: number
  readonly created_at: Date
  readonly updated_at: Date
  readonly queue_position: string
  readonly previous_status: EnrollmentStatus | null
  readonly offer_expires_at: Date | null
  readonly invited_by: string | null
  readonly invitation_message: string | null
  readonly application: { readonly answers: Readonly<Record<string, unknown>> } | null
  readonly decisions: ReadonlyArray<DecisionRecord>
  readonly paused_at: Date | null
  readonly pause_until: Date | null
  readonly paused_days: number
  readonly pause_count: number
  readonly pauses: ReadonlyArray<PauseRecord>
  readonly withdraw_requested_at: Date | null
  readonly withdraw_effective_at: Date | null
  readonly withdrawn_at: Date | null
  readonly withdraw_reason: string | null
  readonly activated_at: Date | null
  readonly criteria_met_at: Date | null
  readonly completed_at: Date | null
  readonly transferred_from: string | null
  /** The active groups it is a member of (LEARNING §2.1 #6), oldest first. */
  readonly groups: ReadonlyArray<{ readonly uuid: string; readonly name: string; readonly kind: "cohort" | "team" | "section" }>
}

export const enrollmentColumns = `e.uuid, e.run_uuid, e.course_uuid, e.profile_uuid, e.status, e.started_at, e.revision, e.created_at,
  e.updated_at, e.queue_position::text AS queue_position, e.previous_status, e.offer_expires_at, e.invited_by, e.invitation_message,
  e.application, e.decisions, e.paused_at, e.pause_until, e.paused_days, e.pause_count, e.pauses, e.withdraw_requested_at,
  e.withdraw_effective_at, e.withdrawn_at, e.withdraw_reason, e.activated_at, e.criteria_met_at, e.completed_at, e.transferred_from,
  (SELECT coalesce(jsonb_agg(jsonb_build_object('uuid', g.uuid, 'name', g.name, 'kind', g.kind) ORDER BY g.created_at, g.uuid), '[]'::jsonb)
    FROM learning_group_members gm JOIN learning_groups g ON g.uuid = gm.group_uuid
    WHERE gm.enrollment_uuid = e.uuid AND g.status = 'active') AS groups`

/**
 * Enrollments by uuid, in uuid order (locked in that order for the transaction when asked, so two
 * transactions locking several never wait on each other crosswise); unknown uuids are left out.
 * The lock is `FOR NO KEY UPDATE`: it orders the enrollment's commands and grading (an enrollment
 * is locked before its submissions and step states, docs/decisions.md "Lock order"), while rows
 * that only reference it (a submission, a step state, a grading job) can still be inserted.
 */
export const loadEnrollments = (uuids: ReadonlyArray<string>, options: { readonly lock: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    uuids.length === 0 ? Effect.succeed([]) : sql<EnrollmentRow>`SELECT ${sql.literal(enrollmentColumns)} FROM learning_enrollments e WHERE e.uuid = ANY(${uuidArray(sql, uuids)})
      ORDER BY e.uuid ${options.lock ? sql.literal("FOR NO KEY UPDATE OF e") : sql``}`)

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
