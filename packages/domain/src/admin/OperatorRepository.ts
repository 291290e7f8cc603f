import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../store/Rows.js"

/**
 * `operators`: who holds the operator role, and whether it was granted by hand (the CLI or the
 * admin area: `cli`) or by `BIRZHA_OPERATORS` (`config`). Read and written only here.
 */
export const OperatorSource = Schema.Literal("cli", "config")

export const OperatorRow = Schema.Struct({
  email: Schema.String,
  source: OperatorSource,
  granted_at: Timestamp
})
export type OperatorRow = typeof OperatorRow.Type
const operatorColumns = selectList(OperatorRow, "o")
const decodeOperators = rowsDecoder(OperatorRow)

/** Whether the (lower-cased) address holds the role. */
export const hasOperatorRow = (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 FROM operators WHERE email = ${email}`).pipe(
    Effect.map((rows) => rows.length > 0)
  )

/** Grants the role; a grant by hand outlives the configured list. */
export const upsertOperator = (email: string, source: typeof OperatorSource.Type): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    source === "cli"
      ? sql`INSERT INTO operators (email, source) VALUES (${email}, 'cli') ON CONFLICT (email) DO UPDATE SET source = 'cli'`
      : sql`INSERT INTO operators (email, source) VALUES (${email}, 'config') ON CONFLICT (email) DO NOTHING`).pipe(Effect.asVoid)

/** Removes the role; whether the address held it. */
export const deleteOperator = (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM operators WHERE email = ${email} RETURNING email`).pipe(
    Effect.map((rows) => rows.length > 0)
  )

/** Removes the configured grants not in `keep`. */
export const deleteConfiguredOperatorsExcept = (keep: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM operators WHERE source = 'config' AND NOT (email = ANY(${keep}))`)
    .pipe(Effect.asVoid)

export const listOperatorRows: Effect.Effect<ReadonlyArray<OperatorRow>, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* decodeOperators(yield* sql`SELECT ${sql.literal(operatorColumns)} FROM operators o ORDER BY o.email`)
})
