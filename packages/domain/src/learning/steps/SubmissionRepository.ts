import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { SubmissionStatus } from "./StepModel.js"

/**
 * `learning_submissions`: its row and the one module that writes it. The rules of a submission
 * (what may move it, when) are in Submissions.ts and SubmissionMachine.ts; reads are anywhere, decoded
 * with `decodeSubmissions`.
 */

export const SubmissionRow = Schema.Struct({
  uuid: Schema.String,
  enrollment_uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  profile_uuid: Schema.String,
  node_key: Schema.String,
  version_number: Schema.Number,
  variant_uuid: Schema.NullOr(Schema.String),
  checker_uuid: Schema.NullOr(Schema.String),
  attempt_no: Schema.Number,
  attempt_counted: Schema.Boolean,
  reply: Schema.Unknown,
  status: SubmissionStatus,
  demo_attempt_uuid: Schema.NullOr(Schema.String),
  submitted_at: Timestamp,
  graded_at: Schema.NullOr(Timestamp),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type SubmissionRow = typeof SubmissionRow.Type

/** The row's columns as `s.column` (every query names the table `s`). */
export const submissionColumns = selectList(SubmissionRow, "s")
export const decodeSubmissions = rowsDecoder(SubmissionRow)

/** The columns a status move changes, as `moveSubmissions` answers them. */
const SubmissionMove = Schema.Struct({ uuid: Schema.String, status: SubmissionStatus, revision: Schema.Number, updated_at: Timestamp })
const decodeMoves = rowsDecoder(SubmissionMove)

/**
 * Moves one submission to `to`, `steps` revisions on (two transitions of the table in one write);
 * `refunds` clears `attempt_counted`, `graded` stamps `graded_at`. Answers the row afterwards.
 */
export const updateSubmissionStatus = (
  uuid: string,
  change: { readonly to: string; readonly steps: number; readonly refunds: boolean; readonly graded: boolean }
): Effect.Effect<SubmissionRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_submissions s SET status = ${change.to}, revision = revision + ${change.steps}, updated_at = now()
        ${change.refunds ? sql`, attempt_counted = false` : sql``}
        ${change.graded ? sql`, graded_at = clock_timestamp()` : sql``}
        WHERE s.uuid = ${uuid} RETURNING ${sql.literal(submissionColumns)}`,
        decodeSubmissions
      ),
      (rows) => rows[0]!
    ))

/** A new submission's values (`insertSubmission`, `insertGradedSubmissions`). */
export interface NewSubmission {
  readonly uuid: string
  readonly enrollment_uuid: string
  readonly course_uuid: string
  readonly run_uuid: string
  readonly profile_uuid: string
  readonly node_key: string
  readonly version_number: number
  readonly variant_uuid: string | null
  readonly checker_uuid: string | null
  readonly attempt_no: number
  readonly reply: unknown
  readonly demo_attempt_uuid: string | null
}

/** A submission in `submitted` (revision 1), to be graded or queued by the caller. */
export const insertSubmission = (submission: NewSubmission): Effect.Effect<SubmissionRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_submissions AS s (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid,
          node_key, version_number, variant_uuid, checker_uuid, attempt_no, reply, status, demo_attempt_uuid)
        VALUES (${submission.uuid}, ${submission.enrollment_uuid}, ${submission.course_uuid}, ${submission.run_uuid}, ${submission.profile_uuid},
          ${submission.node_key}, ${submission.version_number}, ${submission.variant_uuid}, ${submission.checker_uuid}, ${submission.attempt_no},
          ${JSON.stringify(submission.reply)}::jsonb, 'submitted', ${submission.demo_attempt_uuid})
        RETURNING ${sql.literal(submissionColumns)}`,
        decodeSubmissions
      ),
      (rows) => rows[0]!
    ))

/**
 * Submissions written in their final state in one statement (inline-graded attempts: `status` and
 * `revision` as the table's moves leave them, `graded_at` now). Answers the rows in the given order.
 */
export const insertGradedSubmissions = (
  submissions: ReadonlyArray<NewSubmission & { readonly status: string; readonly revision: number }>
): Effect.Effect<ReadonlyArray<SubmissionRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const inserted = new Map((yield* Effect.flatMap(
      sql`INSERT INTO learning_submissions AS s (uuid, enrollment_uuid, course_uuid, run_uuid,
        profile_uuid, node_key, version_number, variant_uuid, checker_uuid, attempt_no, reply, status, revision, graded_at, demo_attempt_uuid)
      SELECT uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, variant_uuid, checker_uuid, attempt_no,
        reply::jsonb, status, revision, clock_timestamp(), demo_attempt_uuid
      FROM jsonb_to_recordset(${
        JSON.stringify(submissions.map((submission) => ({
          ...submission,
          // As text: a reply of JSON null stays the jsonb null, not SQL NULL.
          reply: JSON.stringify(submission.reply) ?? "null"
        })))
      }::jsonb) AS i(uuid uuid, enrollment_uuid uuid, course_uuid uuid, run_uuid uuid, profile_uuid uuid, node_key text, version_number int,
        variant_uuid uuid, checker_uuid uuid, attempt_no int, reply text, status text, revision int, demo_attempt_uuid uuid)
      RETURNING ${sql.literal(submissionColumns)}`,
      decodeSubmissions
    )).map((row) => [row.uuid, row]))
    return submissions.map(({ uuid }) => inserted.get(uuid)!)
  })

/** Moves the submissions in one of `from` to `to`, a revision on, in one statement (anything else stays). */
export const moveSubmissionsFrom = (uuids: ReadonlyArray<string>, from: ReadonlyArray<string>, to: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_submissions SET status = ${to}, revision = revision + 1, updated_at = now()
      WHERE uuid IN ${sql.in([...uuids])} AND status IN ${sql.in([...from])}`.pipe(Effect.asVoid))

/** Back to `submitted`, a revision on (an incident's requeue; the caller checked the table allows it). */
export const requeueSubmission = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_submissions SET status = 'submitted', revision = revision + 1, updated_at = now() WHERE uuid = ${uuid}`.pipe(Effect.asVoid))

/** One revision on (a score layer changed under it). */
export const bumpSubmissionRevision = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE learning_submissions SET revision = revision + 1, updated_at = now() WHERE uuid = ${uuid} RETURNING revision`.pipe(Effect.asVoid))

/**
 * Several submissions each `steps` revisions on and set to `status`, in one statement. Answers only
 * what changed (uuid, status, revision, updated_at): reading every column again costs more than the write.
 */
export const moveSubmissions = (moves: ReadonlyArray<{ readonly uuid: string; readonly steps: number; readonly status: string }>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE learning_submissions s
      SET revision = s.revision + u.steps, status = u.status, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(moves)}::jsonb) AS u(uuid uuid, steps int, status text)
      WHERE s.uuid = u.uuid RETURNING s.uuid, s.status, s.revision, s.updated_at`,
      decodeMoves
    ))
