import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { AssignmentStatus } from "./ReviewModel.js"

/**
 * `learning_review_assignments`: the one module that writes it, and its row decoded. The rules of
 * who moves an assignment where live in ReviewAssignments.ts and Reviews.ts; they call these.
 */

/** One entry of an assignment's `history` (jsonb): every holder and move is kept. */
export const HistoryEntry = Schema.Struct({
  at: Schema.String,
  action: Schema.String,
  byProfileUuid: Schema.optional(Schema.String),
  fromProfileUuid: Schema.optional(Schema.String),
  toProfileUuid: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
})
export type HistoryEntry = typeof HistoryEntry.Type

/** The reviewer's autosaved draft (jsonb); its rubric is checked by the operation's input schema when saved. */
const Draft = Schema.Struct({
  rubric: Schema.Array(Schema.Unknown),
  comment: Schema.String,
  points: Schema.optional(Schema.Number)
})

/** A decision (jsonb), provisional or final; `decidedAt` is ISO text. */
const Decision = Schema.Struct({
  outcome: Schema.Literal("accept", "revise", "fail"),
  points: Schema.Number,
  rubric: Schema.Array(Schema.Struct({ criterion: Schema.String, points: Schema.Number, comment: Schema.optional(Schema.String) })),
  comment: Schema.String,
  final: Schema.Boolean,
  decidedBy: Schema.String,
  decidedAt: Schema.String
})

/** A reported issue (jsonb); it pauses the due clock. */
const Issue = Schema.Struct({ kind: Schema.String, note: Schema.String, reportedBy: Schema.String, reportedAt: Schema.String })

export const AssignmentRow = Schema.Struct({
  uuid: Schema.String,
  submission_uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  node_key: Schema.String,
  learner_profile_uuid: Schema.String,
  pseudonym: Schema.String,
  kind: Schema.Literal("staff", "peer", "self"),
  status: AssignmentStatus,
  reviewer_profile_uuid: Schema.NullOr(Schema.String),
  claimed_at: Schema.NullOr(Timestamp),
  due_at: Schema.NullOr(Timestamp),
  overdue_for: Schema.NullOr(Timestamp),
  draft: Schema.NullOr(Draft),
  draft_revision: Schema.Number,
  draft_saved_at: Schema.NullOr(Timestamp),
  decision: Schema.NullOr(Decision),
  issue: Schema.NullOr(Issue),
  sla_paused_at: Schema.NullOr(Timestamp),
  history: Schema.Array(HistoryEntry),
  layer_uuid: Schema.NullOr(Schema.String),
  released_at: Schema.NullOr(Timestamp),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type AssignmentRow = typeof AssignmentRow.Type

/** The row's columns over the alias `a`. */
export const assignmentColumns = selectList(AssignmentRow, "a")

/** A row of a keyset page: the row and its position (`created_at::text` or `updated_at::text`). */
export const PositionedAssignmentRow = Schema.Struct({ ...AssignmentRow.fields, position: Schema.String })

export const decodeAssignments = rowsDecoder(AssignmentRow)
export const decodePositionedAssignments = rowsDecoder(PositionedAssignmentRow)
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decodeMoment = rowsDecoder(Schema.Struct({ at: Schema.NullOr(Timestamp) }))

/** One new assignment of a submission: pooled, or (a self review) claimed by its learner at once, due in `dueHours`. */
export const insertAssignment = (values: {
  readonly submission: {
    readonly uuid: string
    readonly course_uuid: string
    readonly run_uuid: string
    readonly node_key: string
    readonly profile_uuid: string
  }
  readonly pseudonym: string
  readonly kind: "staff" | "peer" | "self"
  readonly dueHours: number
  readonly history: ReadonlyArray<HistoryEntry>
}): Effect.Effect<AssignmentRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const row = values.submission
    const self = values.kind === "self"
    return Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_review_assignments AS a (uuid, submission_uuid, course_uuid, run_uuid,
          node_key, learner_profile_uuid, pseudonym, kind, status, reviewer_profile_uuid, claimed_at, due_at, history)
        VALUES (${crypto.randomUUID()}, ${row.uuid}, ${row.course_uuid}, ${row.run_uuid}, ${row.node_key}, ${row.profile_uuid}, ${values.pseudonym},
          ${values.kind}, ${self ? "claimed" : "pooled"}, ${self ? row.profile_uuid : null}, ${self ? sql`now()` : null},
          ${self ? sql`now() + make_interval(hours => ${values.dueHours})` : null},
          ${JSON.stringify(values.history)}::jsonb)
        RETURNING ${sql.literal(assignmentColumns)}`,
        decodeAssignments
      ),
      (rows) => rows[0]!
    )
  })

/** The profile's claimed staff assignments in the course, oldest first, locked. */
export const lockClaimedStaffAssignments = (courseUuid: string, profileUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(assignmentColumns)} FROM learning_review_assignments a
      WHERE a.course_uuid = ${courseUuid} AND a.reviewer_profile_uuid = ${profileUuid} AND a.status = 'claimed'
        AND a.kind = 'staff' ORDER BY a.created_at FOR UPDATE`,
      decodeAssignments
    ))

/** A claim back to the pool, its draft, dues and pause cleared (a revoked reviewer's). */
export const returnClaimToPool = (uuid: string, entry: HistoryEntry) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_review_assignments a SET status = 'pooled', reviewer_profile_uuid = NULL,
          claimed_at = NULL, due_at = NULL, overdue_for = NULL, draft = NULL, sla_paused_at = NULL, revision = revision + 1, updated_at = now(),
          history = history || ${JSON.stringify([entry])}::jsonb
        WHERE a.uuid = ${uuid} RETURNING ${sql.literal(assignmentColumns)}`,
        decodeAssignments
      ),
      (rows) => rows[0]!
    ))

/**
 * Marks up to `batch` claims past their due time (no reported issue, not yet announced for this
 * due time) as announced, `SKIP LOCKED`, and returns them.
 */
export const markOverdueAssignments = (now: Date, batch: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE learning_review_assignments a SET overdue_for = a.due_at
      WHERE a.uuid IN (SELECT uuid FROM learning_review_assignments
        WHERE status = 'claimed' AND issue IS NULL AND due_at <= ${now} AND overdue_for IS DISTINCT FROM due_at
        ORDER BY due_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
      RETURNING ${sql.literal(assignmentColumns)}`,
      decodeAssignments
    ))

/** The earliest due time of a claim not yet announced overdue; `undefined`: none. */
export const nextOverdueDue: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT due_at AS at FROM learning_review_assignments
    WHERE status = 'claimed' AND issue IS NULL AND due_at IS NOT NULL AND overdue_for IS DISTINCT FROM due_at ORDER BY due_at LIMIT 1`,
        decodeMoment
      ),
      (rows) => rows[0]?.at ?? undefined
    )
)

/** A submission's assignments, oldest first; locked in commands. */
export const loadAssignments = (submissionUuid: string, options: { readonly lock: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(assignmentColumns)} FROM learning_review_assignments a
      WHERE a.submission_uuid = ${submissionUuid} ORDER BY a.created_at, a.uuid ${options.lock ? sql.literal("FOR UPDATE") : sql``}`,
      decodeAssignments
    ))

/** The submission's other assignments still pooled or claimed. */
export const otherOpenAssignments = (submissionUuid: string, exceptUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT uuid FROM learning_review_assignments
      WHERE submission_uuid = ${submissionUuid} AND uuid <> ${exceptUuid} AND status IN ('pooled', 'claimed')`,
      decodeUuids
    ))

/** A move of an assignment: the columns set (objects as jsonb), its revision bumped and the history entry appended. */
export const updateAssignment = (uuid: string, set: Record<string, unknown>, entry: HistoryEntry) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const assignments = Object.entries(set).map(([column, value]) =>
      value !== null && typeof value === "object" && !(value instanceof Date)
        ? sql`${sql(column)} = ${JSON.stringify(value)}::jsonb`
        : sql`${sql(column)} = ${value as string}`
    )
    return Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_review_assignments a SET ${sql.csv(assignments)}, revision = revision + 1, updated_at = now(),
          history = history || ${JSON.stringify([entry])}::jsonb
        WHERE a.uuid = ${uuid} RETURNING ${sql.literal(assignmentColumns)}`,
        decodeAssignments
      ),
      (rows) => rows[0]!
    )
  })

/** The holder's autosave: the draft replaced, its own revision bumped (the assignment's stays). */
export const saveDraft = (uuid: string, draft: { readonly rubric: ReadonlyArray<unknown>; readonly comment: string; readonly points?: number }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_review_assignments a SET draft = ${JSON.stringify(draft)}::jsonb,
        draft_revision = draft_revision + 1, draft_saved_at = now()
      WHERE a.uuid = ${uuid} RETURNING ${sql.literal(assignmentColumns)}`,
        decodeAssignments
      ),
      (rows) => rows[0]!
    ))
