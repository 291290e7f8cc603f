import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"

/**
 * `learning_step_states`: its row and the one module that writes it. The state machine and the
 * progress rules (what may move a step, completion after it) are in StepStates.ts.
 */

export const stepStatuses = ["locked", "available", "in_progress", "completed", "failed"] as const
export type StepStatus = typeof stepStatuses[number]

/** A video step's progress: where the learner is and what they watched. */
export const MediaProgress = Schema.Struct({
  positionSec: Schema.Number,
  ranges: Schema.Array(Schema.Tuple(Schema.Number, Schema.Number)),
  durationSec: Schema.optional(Schema.Number)
})

export const StepStateRow = Schema.Struct({
  enrollment_uuid: Schema.String,
  node_key: Schema.String,
  status: Schema.Literal(...stepStatuses),
  completed_at: Schema.NullOr(Timestamp),
  outcome: Schema.NullOr(Schema.String),
  media: Schema.NullOr(MediaProgress),
  revision: Schema.Number,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type StepStateRow = typeof StepStateRow.Type

export const stepStateColumns = selectList(StepStateRow)
const aliasedColumns = selectList(StepStateRow, "s")
const decodeRows = rowsDecoder(StepStateRow)

/** The step's state rows of an enrollment, by nodeKey (steps and the module markers). */
export const loadStepStates = (enrollmentUuid: string): Effect.Effect<ReadonlyMap<string, StepStateRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(sql`SELECT ${sql.literal(stepStateColumns)} FROM learning_step_states WHERE enrollment_uuid = ${enrollmentUuid}`, decodeRows),
      (rows) => new Map(rows.map((row) => [row.node_key, row]))
    ))

/**
 * One step's state row, locked for the transaction when asked (the caller holds its enrollment
 * already: docs/decisions.md "Lock order"); undefined when the step has none yet.
 */
export const loadStepState = (enrollmentUuid: string, nodeKey: string, options: { readonly lock: boolean } = { lock: false }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT ${sql.literal(stepStateColumns)} FROM learning_step_states
        WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey} ${options.lock ? sql.literal("FOR NO KEY UPDATE") : sql``}`,
        decodeRows
      ),
      (rows) => rows[0]
    ))

/** The existing rows of (enrollment, node) pairs, locked in key order. */
export const lockStepStates = (keys: ReadonlyArray<{ readonly enrollment_uuid: string; readonly node_key: string }>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(aliasedColumns)}
      FROM learning_step_states s JOIN jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) AS k(enrollment_uuid uuid, node_key text)
        ON s.enrollment_uuid = k.enrollment_uuid AND s.node_key = k.node_key
      ORDER BY s.enrollment_uuid, s.node_key FOR NO KEY UPDATE OF s`,
      decodeRows
    ))

/**
 * Rows written in one statement: inserted in their final state where `existing` is false (one a
 * concurrent transaction wrote first is left out of the answer), else moved to `status`, a revision
 * on. Answers the rows written.
 */
export const writeStepStates = (
  writes: ReadonlyArray<{
    readonly enrollment_uuid: string
    readonly node_key: string
    readonly status: StepStatus
    readonly completed_at: Date | null
    readonly existing: boolean
  }>
): Effect.Effect<ReadonlyArray<StepStateRow>, SqlError, SqlClient.SqlClient> =>
  writes.length === 0 ? Effect.succeed([]) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`WITH w AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(writes)}::jsonb)
          AS w(enrollment_uuid uuid, node_key text, status text, completed_at timestamptz, existing boolean)
      ), inserted AS (
        INSERT INTO learning_step_states (enrollment_uuid, node_key, status, completed_at)
        SELECT enrollment_uuid, node_key, status, completed_at FROM w WHERE NOT existing ORDER BY enrollment_uuid, node_key
        ON CONFLICT (enrollment_uuid, node_key) DO NOTHING RETURNING ${sql.literal(stepStateColumns)}
      ), updated AS (
        UPDATE learning_step_states s SET status = w.status, completed_at = w.completed_at, revision = s.revision + 1, updated_at = now()
        FROM w WHERE w.existing AND s.enrollment_uuid = w.enrollment_uuid AND s.node_key = w.node_key
        RETURNING ${sql.literal(aliasedColumns)}
      ) SELECT * FROM inserted UNION ALL SELECT * FROM updated`,
      decodeRows
    ))

/** The marker row of a completed module (`learning.module.completed` was sent); kept as it is when there. */
export const insertModuleCompleted = (enrollmentUuid: string, moduleKey: string, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_step_states (enrollment_uuid, node_key, status, completed_at) VALUES (${enrollmentUuid}, ${moduleKey}, 'completed', ${at})
        ON CONFLICT (enrollment_uuid, node_key) DO NOTHING`.pipe(Effect.asVoid))

/** A step unlocked: `available`, from no row or a `locked` one (any other row stays). */
export const markStepAvailable = (enrollmentUuid: string, nodeKey: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_step_states (enrollment_uuid, node_key, status) VALUES (${enrollmentUuid}, ${nodeKey}, 'available')
          ON CONFLICT (enrollment_uuid, node_key) DO UPDATE SET status = 'available', revision = learning_step_states.revision + 1, updated_at = now()
          WHERE learning_step_states.status = 'locked'`.pipe(Effect.asVoid))

/** A video step's progress saved (the row made `available` when the step had none). */
export const writeMedia = (enrollmentUuid: string, nodeKey: string, media: typeof MediaProgress.Type) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO learning_step_states (enrollment_uuid, node_key, status, media)
        VALUES (${enrollmentUuid}, ${nodeKey}, 'available', ${JSON.stringify(media)}::jsonb)
        ON CONFLICT (enrollment_uuid, node_key) DO UPDATE SET media = EXCLUDED.media, revision = learning_step_states.revision + 1, updated_at = now()`
      .pipe(Effect.asVoid))
