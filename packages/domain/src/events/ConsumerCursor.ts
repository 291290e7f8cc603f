import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { Int8Text, rowsDecoder } from "../store/Rows.js"

/** The single-row cursor tables of the service's own event consumers (their position in the sequence). */
export type ConsumerCursor = "automation_cursor" | "learning_notifier_cursor"

const decodeWindow = rowsDecoder(Schema.Struct({ position: Int8Text, last: Int8Text }))

/**
 * A consumer's next window of sequenced events: the positions `(after, upto]`, at most `window`
 * of them, with the cursor row locked until the caller's transaction ends (so several workers
 * take turns); undefined when it has caught up. The caller moves the cursor with `moveCursor`.
 */
export const lockCursorWindow = (
  table: ConsumerCursor,
  window: number
): Effect.Effect<{ readonly after: bigint; readonly upto: bigint } | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [cursor] = yield* Effect.flatMap(
      sql`SELECT c.position::text AS position, s.last_position::text AS last
      FROM ${sql(table)} c, event_sequence s FOR UPDATE OF c`,
      decodeWindow
    )
    if (cursor === undefined) return undefined
    const after = BigInt(cursor.position)
    const last = BigInt(cursor.last)
    if (last <= after) return undefined
    return { after, upto: last - after > BigInt(window) ? after + BigInt(window) : last }
  })

const decodeBehind = rowsDecoder(Schema.Struct({ behind: Schema.Boolean }))

/**
 * Whether a consumer has sequenced events to read: one statement outside a transaction, no lock
 * (the idle poll; `lockCursorWindow` then takes the window in the consumer's transaction).
 */
export const cursorBehind = (table: ConsumerCursor): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* decodeBehind(yield* sql`SELECT c.position < s.last_position AS behind FROM ${sql(table)} c, event_sequence s`)
    return row?.behind === true
  })

/** Sets a consumer's cursor (in the transaction that consumed up to it). */
export const moveCursor = (table: ConsumerCursor, position: bigint): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`UPDATE ${sql(table)} SET position = ${position.toString()}`))
