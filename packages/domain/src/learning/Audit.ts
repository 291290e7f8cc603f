import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import type { InvalidRequest } from "../kernel/ApiError.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { rowsDecoder, selectList, Timestamp } from "../store/Rows.js"

/**
 * The append-only audit log: written by the changing transaction itself, never
 * updated or deleted (a trigger refuses both). Score, date, roster, staff, ownership, schedule and
 * checker-control changes write one row each; so do publish and archive of a course.
 */
export interface AuditEntry {
  readonly courseUuid: string
  readonly actorProfileUuid: string | null
  readonly action: string
  readonly subjectKind: string
  readonly subjectUuid: string
  readonly enrollmentUuid?: string | undefined
  readonly before?: unknown
  readonly after?: unknown
  readonly reason?: string | undefined
  readonly requestUuid?: string | undefined
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value))

export const appendAudit = (entry: AuditEntry): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_audit_events
      (course_uuid, actor_profile_uuid, action, subject_kind, subject_uuid, enrollment_uuid, before, after, reason, request_uuid)
      VALUES (${entry.courseUuid}, ${entry.actorProfileUuid}, ${entry.action}, ${entry.subjectKind}, ${entry.subjectUuid},
        ${entry.enrollmentUuid ?? null}, ${json(entry.before)}::jsonb, ${json(entry.after)}::jsonb, ${entry.reason ?? ""},
        ${entry.requestUuid ?? null})`.pipe(Effect.asVoid))

/**
 * Several entries in one statement, in the given order (`created_at` is `clock_timestamp()` per
 * row, so they read back in that order): the batch form of `appendAudit` for writers that change
 * many subjects in one transaction (`Layers.appendScoreLayers`).
 */
export const appendAudits = (entries: ReadonlyArray<AuditEntry>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  entries.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_audit_events
        (course_uuid, actor_profile_uuid, action, subject_kind, subject_uuid, enrollment_uuid, before, after, reason, request_uuid)
      SELECT e.course_uuid, e.actor_profile_uuid, e.action, e.subject_kind, e.subject_uuid, e.enrollment_uuid, e.before::jsonb, e.after::jsonb, e.reason,
        e.request_uuid
      FROM jsonb_to_recordset(${
      JSON.stringify(entries.map((entry, i) => ({
        i,
        course_uuid: entry.courseUuid,
        actor_profile_uuid: entry.actorProfileUuid,
        action: entry.action,
        subject_kind: entry.subjectKind,
        subject_uuid: entry.subjectUuid,
        enrollment_uuid: entry.enrollmentUuid ?? null,
        // As JSON text, as appendAudit writes them: SQL NULL when absent, a JSON null stays one.
        before: json(entry.before),
        after: json(entry.after),
        reason: entry.reason ?? "",
        request_uuid: entry.requestUuid ?? null
      })))
    }::jsonb) AS e(i int, course_uuid uuid, actor_profile_uuid uuid, action text, subject_kind text, subject_uuid uuid, enrollment_uuid uuid,
        before text, after text, reason text, request_uuid uuid)
      ORDER BY e.i`.pipe(Effect.asVoid))

const AuditRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  actor_profile_uuid: Schema.NullOr(Schema.String),
  action: Schema.String,
  subject_kind: Schema.String,
  subject_uuid: Schema.String,
  enrollment_uuid: Schema.NullOr(Schema.String),
  before: Schema.Unknown,
  after: Schema.Unknown,
  reason: Schema.String,
  request_uuid: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  /** `created_at::text`: the exact keyset position. */
  position: Schema.String
})
type AuditRow = typeof AuditRow.Type
const auditColumns = selectList(AuditRow, undefined, { position: "created_at::text" })
const decodeAuditRows = rowsDecoder(AuditRow)

export interface AuditFilter {
  readonly action?: string | undefined
  readonly actorUuid?: string | undefined
  readonly enrollmentUuid?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/** A course's audit events, newest first, filtered; keyset pages. */
export const listAudit = (courseUuid: string, filter: AuditFilter): Effect.Effect<
  { readonly items: ReadonlyArray<ReturnType<typeof auditView>>; readonly nextCursor?: string },
  SqlError | InvalidRequest,
  SqlClient.SqlClient
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const conditions = [
      sql`course_uuid = ${courseUuid}`,
      ...(filter.action !== undefined ? [sql`action = ${filter.action}`] : []),
      ...(filter.actorUuid !== undefined ? [sql`actor_profile_uuid = ${filter.actorUuid}`] : []),
      ...(filter.enrollmentUuid !== undefined ? [sql`enrollment_uuid = ${filter.enrollmentUuid}`] : []),
      ...(filter.from !== undefined ? [sql`created_at >= ${filter.from}`] : []),
      ...(filter.to !== undefined ? [sql`created_at < ${filter.to}`] : []),
      ...(position._tag === "Some" ? [sql`(created_at, uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)`] : [])
    ]
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(auditColumns)}
      FROM learning_audit_events WHERE ${sql.and(conditions)}
      ORDER BY created_at DESC, uuid DESC LIMIT ${limit + 1}`,
      decodeAuditRows
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), auditView)
  })

const auditView = (row: AuditRow) => ({
  uuid: row.uuid,
  courseUuid: row.course_uuid,
  ...(row.actor_profile_uuid !== null ? { actorProfileUuid: row.actor_profile_uuid } : {}),
  action: row.action,
  subjectKind: row.subject_kind,
  subjectUuid: row.subject_uuid,
  ...(row.enrollment_uuid !== null ? { enrollmentUuid: row.enrollment_uuid } : {}),
  ...(row.before !== null ? { before: row.before } : {}),
  ...(row.after !== null ? { after: row.after } : {}),
  reason: row.reason,
  ...(row.request_uuid !== null ? { requestUuid: row.request_uuid } : {}),
  createdAt: row.created_at
})
