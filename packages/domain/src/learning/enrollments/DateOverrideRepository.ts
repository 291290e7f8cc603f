import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"

/**
 * `learning_date_overrides`: the one module that writes it. The learner and group layers of the
 * effective dates (`Dates.ts` reads them): a learner's manual overrides (`Overrides.ts`),
 * extensions and incidents (`corrections/Extensions.ts`), a group's dates (`staff/GroupSchedule.ts`).
 */

export const OverrideOrigin = Schema.Literal("manual", "extension", "incident", "group")

/** A date override row as the computation reads it. */
export const OverrideRow = Schema.Struct({
  uuid: Schema.String,
  node_key: Schema.NullOr(Schema.String),
  group_uuid: Schema.NullOr(Schema.String),
  unlock_at: Schema.NullOr(Timestamp),
  due_at: Schema.NullOr(Timestamp),
  lock_at: Schema.NullOr(Timestamp),
  extra_attempts: Schema.Number,
  origin: OverrideOrigin,
  reason: Schema.String,
  created_at: Timestamp
})
export type OverrideRow = typeof OverrideRow.Type

/** A learner's stored override: what the computation reads, plus its target and state. */
export const StoredOverride = Schema.Struct({
  uuid: Schema.String,
  enrollment_uuid: Schema.String,
  group_uuid: Schema.NullOr(Schema.String),
  node_key: Schema.NullOr(Schema.String),
  unlock_at: Schema.NullOr(Timestamp),
  due_at: Schema.NullOr(Timestamp),
  lock_at: Schema.NullOr(Timestamp),
  extra_attempts: Schema.Number,
  origin: OverrideOrigin,
  reason: Schema.String,
  status: Schema.Literal("active", "cleared"),
  created_at: Timestamp,
  cleared_at: Schema.NullOr(Timestamp)
})
export type StoredOverride = typeof StoredOverride.Type

const storedColumns = selectList(StoredOverride)
const decodeStored = rowsDecoder(StoredOverride)

/** Clears a learner's active manual override of a step (run-wide without `nodeKey`); returns what it cleared. */
export const clearManualOverrides = (enrollmentUuid: string, nodeKey: string | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const same = nodeKey !== undefined ? sql`node_key = ${nodeKey}` : sql`node_key IS NULL`
    return Effect.flatMap(
      sql`UPDATE learning_date_overrides SET status = 'cleared', cleared_at = clock_timestamp()
        WHERE enrollment_uuid = ${enrollmentUuid} AND origin = 'manual' AND status = 'active' AND ${same} RETURNING ${sql.literal(storedColumns)}`,
      decodeStored
    )
  })

/** Inserts a learner's manual override and returns it. */
export const insertManualOverride = (input: {
  readonly runUuid: string
  readonly enrollmentUuid: string
  readonly nodeKey: string | null
  readonly unlockAt: Date | null
  readonly dueAt: Date | null
  readonly lockAt: Date | null
  readonly extraAttempts: number
  readonly reason: string
  readonly by: string
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_date_overrides
            (uuid, run_uuid, enrollment_uuid, node_key, unlock_at, due_at, lock_at, extra_attempts, origin, reason, created_by)
          VALUES (${crypto.randomUUID()}, ${input.runUuid}, ${input.enrollmentUuid}, ${input.nodeKey}, ${input.unlockAt},
            ${input.dueAt}, ${input.lockAt}, ${input.extraAttempts}, 'manual', ${input.reason}, ${input.by})
          RETURNING ${sql.literal(storedColumns)}`,
        decodeStored
      ),
      (rows) => rows[0]!
    ))

/** Inserts an override of one enrollment's step granted by an extension or an incident. */
export const insertGrantedOverride = (input: {
  readonly uuid: string
  readonly runUuid: string
  readonly enrollmentUuid: string
  readonly nodeKey: string
  readonly dueAt: Date | null
  readonly lockAt: Date | null
  readonly extraAttempts: number
  readonly origin: "extension" | "incident"
  readonly reason: string
  readonly by: string
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(
      sql`INSERT INTO learning_date_overrides (uuid, run_uuid, enrollment_uuid, node_key, due_at, lock_at, extra_attempts, origin, reason, created_by)
        VALUES (${input.uuid}, ${input.runUuid}, ${input.enrollmentUuid}, ${input.nodeKey}, ${input.dueAt}, ${input.lockAt},
          ${input.extraAttempts}, ${input.origin}, ${input.reason}, ${input.by})`
    ))

/** Inserts a group's override of one step (a schedule plan's commit). */
export const insertGroupOverride = (input: {
  readonly runUuid: string
  readonly groupUuid: string
  readonly nodeKey: string
  readonly unlockAt: string | null
  readonly dueAt: string | null
  readonly lockAt: string | null
  readonly reason: string
  readonly by: string
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(
      sql`INSERT INTO learning_date_overrides (uuid, run_uuid, group_uuid, node_key, unlock_at, due_at, lock_at, origin, reason, created_by)
        VALUES (${crypto.randomUUID()}, ${input.runUuid}, ${input.groupUuid}, ${input.nodeKey}, ${input.unlockAt}, ${input.dueAt}, ${input.lockAt},
          'group', ${input.reason}, ${input.by})`
    ))
