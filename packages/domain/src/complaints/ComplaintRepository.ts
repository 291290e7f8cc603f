import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { JsonObject, rowDecoder, rowsDecoder, selectList } from "../store/Rows.js"
import { ComplaintAction, ComplaintDecision, ComplaintStatus, ComplaintSubjectKind } from "./Complaint.js"

/** `complaints`: this module is the table's one reader and writer. */
export const ComplaintRow = Schema.Struct({
  uuid: Schema.String,
  author_profile_uuid: Schema.String,
  subject_kind: ComplaintSubjectKind,
  subject_uuid: Schema.String,
  body: Schema.String,
  subject_snapshot: JsonObject,
  status: ComplaintStatus,
  decision: Schema.NullOr(ComplaintDecision),
  action: Schema.NullOr(ComplaintAction),
  reason: Schema.NullOr(Schema.String),
  decided_at: Schema.NullOr(Schema.DateFromSelf),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ComplaintRow = typeof ComplaintRow.Type

const PositionedRow = Schema.Struct({ ...ComplaintRow.fields, position: Schema.String })
export type PositionedComplaintRow = typeof PositionedRow.Type

const columns = selectList(ComplaintRow, "c")
const decodeRow = rowDecoder(ComplaintRow)
const decodeRows = rowsDecoder(PositionedRow)

export const insertComplaint = (complaint: {
  authorProfileUuid: string
  subjectKind: string
  subjectUuid: string
  body: string
  snapshot: Readonly<Record<string, unknown>>
}): Effect.Effect<ComplaintRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO complaints (author_profile_uuid, subject_kind, subject_uuid, body, subject_snapshot, status)
      VALUES (${complaint.authorProfileUuid}, ${complaint.subjectKind}, ${complaint.subjectUuid}, ${complaint.body},
        ${JSON.stringify(complaint.snapshot)}::jsonb, 'open')
      RETURNING ${sql.literal(selectList(ComplaintRow))}`.pipe(Effect.flatMap((rows) => decodeRow(rows[0]))))

const decodeComplaints = rowsDecoder(ComplaintRow)
const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))
const decodeSubjectCounts = rowsDecoder(Schema.Struct({ subject_uuid: Schema.String, n: Schema.Number }))
const Standing = Schema.Struct({ status: Schema.String, revision: Schema.Number })
const decodeStanding = rowsDecoder(Standing)

export const hasOpenComplaint = (author: string, kind: string, subject: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM complaints WHERE author_profile_uuid = ${author} AND subject_kind = ${kind} AND subject_uuid = ${subject}
      AND status = 'open'`.pipe(Effect.map((rows) => rows.length > 0)))

export const countOpenComplaints = (author: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT count(*)::int AS n FROM complaints WHERE author_profile_uuid = ${author} AND status = 'open'`.pipe(
      Effect.flatMap(decodeCount),
      Effect.map((rows) => rows[0]?.n ?? 0)
    ))

/** One complaint of its author. */
export const authorComplaint = (author: string, uuid: string): Effect.Effect<Option.Option<ComplaintRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM complaints c WHERE c.uuid = ${uuid} AND c.author_profile_uuid = ${author}`.pipe(
      Effect.flatMap((rows) => rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(decodeRow(rows[0]), Option.some))
    ))

/** A complaint locked for a decision. */
export const lockComplaint = (uuid: string): Effect.Effect<Option.Option<ComplaintRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM complaints c WHERE c.uuid = ${uuid} FOR UPDATE`.pipe(
      Effect.flatMap((rows) => rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(decodeRow(rows[0]), Option.some))
    ))

/** The other open complaints on a subject, locked (an uphold decides them all). */
export const lockOpenOnSubject = (kind: string, subject: string, except: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM complaints c
      WHERE c.subject_kind = ${kind} AND c.subject_uuid = ${subject} AND c.status = 'open' AND c.uuid <> ${except}
      ORDER BY c.created_at FOR UPDATE`.pipe(Effect.flatMap(decodeComplaints)))

export const decideComplaint = (uuid: string, decided: { status: string; decision: string; action: string; reason: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE complaints SET status = ${decided.status}, decision = ${decided.decision}, action = ${decided.action},
        reason = ${decided.reason}, decided_at = now(), revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid} RETURNING ${sql.literal(selectList(ComplaintRow))}`.pipe(Effect.flatMap((rows) => decodeRow(rows[0]))))

/** A page of an author's complaints, newest first. */
export const authorComplaintPage = (author: string, after: { key: string; uuid: string } | undefined, limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)}, c.created_at::text AS position FROM complaints c
      WHERE c.author_profile_uuid = ${author}
        ${after === undefined ? sql`` : sql`AND (c.created_at, c.uuid) < (${after.key}::timestamptz, ${after.uuid}::uuid)`}
      ORDER BY c.created_at DESC, c.uuid DESC LIMIT ${limit}`.pipe(Effect.flatMap(decodeRows)))

/** The moderators' queue: by status (and subject kind), oldest first. */
export const queuePage = (filter: { status: string; subjectKind?: string | undefined; after?: { key: string; uuid: string } | undefined; limit: number }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)}, c.created_at::text AS position FROM complaints c
      WHERE c.status = ${filter.status}
        ${filter.subjectKind === undefined ? sql`` : sql`AND c.subject_kind = ${filter.subjectKind}`}
        ${filter.after === undefined ? sql`` : sql`AND (c.created_at, c.uuid) > (${filter.after.key}::timestamptz, ${filter.after.uuid}::uuid)`}
      ORDER BY c.created_at, c.uuid LIMIT ${filter.limit}`.pipe(Effect.flatMap(decodeRows)))

/** The open complaints on some subjects, oldest first (the queue groups them per subject). */
export const openOnSubjects = (subjects: ReadonlyArray<string>) =>
  subjects.length === 0 ? Effect.succeed([] as ReadonlyArray<ComplaintRow>) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM complaints c WHERE ${sql.in("c.subject_uuid", subjects)} AND c.status = 'open'
      ORDER BY c.created_at`.pipe(Effect.flatMap(decodeComplaints)))

/** How many open complaints name each relation (moderation of reviews). */
export const openCountsOnRelations = (relations: ReadonlyArray<string>) =>
  relations.length === 0 ? Effect.succeed(new Map<string, number>()) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT subject_uuid, count(*)::int AS n FROM complaints
      WHERE subject_kind = 'relation' AND ${sql.in("subject_uuid", relations)} AND status = 'open' GROUP BY subject_uuid`.pipe(
      Effect.flatMap(decodeSubjectCounts),
      Effect.map((rows) => new Map(rows.map((row) => [row.subject_uuid, row.n])))
    ))

/** A complaint's status and revision (the CLI decides at the revision it read). */
export const complaintStanding = (uuid: string): Effect.Effect<Option.Option<typeof Standing.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT status, revision FROM complaints WHERE uuid = ${uuid}`.pipe(
      Effect.flatMap(decodeStanding),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))
