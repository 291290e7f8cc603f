import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder, Timestamp } from "./Rows.js"

/**
 * A role that belongs to an address (`moderators`, migration 0004; `operators`, migration 0033):
 * granted by hand (the CLI or the admin area: `cli`) or by a configured list re-applied at every
 * start (`config`). The statements of both tables; each table's repository is its one writer
 * (publications/ModerationRepository.ts, admin/OperatorRepository.ts).
 */
export const RoleGrantSource = Schema.Literal("cli", "config")

export const RoleGrantRow = Schema.Struct({
  email: Schema.String,
  source: RoleGrantSource,
  granted_at: Timestamp
})
export type RoleGrantRow = typeof RoleGrantRow.Type
const decodeGrants = rowsDecoder(RoleGrantRow)

export const roleGrants = (table: "moderators" | "operators") => ({
  /** Whether the (lower-cased) address holds the role. */
  has: (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 FROM ${sql(table)} WHERE email = ${email}`).pipe(
      Effect.map((rows) => rows.length > 0)
    ),
  /** Grants the role; a grant by hand outlives the configured list. */
  upsert: (email: string, source: typeof RoleGrantSource.Type): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      source === "cli"
        ? sql`INSERT INTO ${sql(table)} (email, source) VALUES (${email}, 'cli') ON CONFLICT (email) DO UPDATE SET source = 'cli'`
        : sql`INSERT INTO ${sql(table)} (email, source) VALUES (${email}, 'config') ON CONFLICT (email) DO NOTHING`).pipe(Effect.asVoid),
  /** Removes the role; whether the address held it. */
  remove: (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM ${sql(table)} WHERE email = ${email} RETURNING email`).pipe(
      Effect.map((rows) => rows.length > 0)
    ),
  /** Removes the configured grants not in `keep`. */
  removeConfiguredExcept: (keep: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM ${sql(table)} WHERE source = 'config' AND NOT (email = ANY(${keep}))`)
      .pipe(Effect.asVoid),
  /** Every holder, by address. */
  list: Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(sql`SELECT email, source, granted_at FROM ${sql(table)} ORDER BY email`, decodeGrants)) as Effect.Effect<
      ReadonlyArray<RoleGrantRow>,
      SqlError,
      SqlClient.SqlClient
    >
})

const decodeRoles = rowsDecoder(Schema.Struct({ moderator: Schema.Boolean, operator: Schema.Boolean }))

/** The roles an address holds, both tables read in one statement (a session's scopes, an account in the admin area). */
export const rolesOfAddress = (email: string): Effect.Effect<{ readonly moderator: boolean; readonly operator: boolean }, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT EXISTS (SELECT 1 FROM moderators WHERE email = ${email}) AS moderator,
        EXISTS (SELECT 1 FROM operators WHERE email = ${email}) AS operator`,
      decodeRoles
    )).pipe(Effect.map((rows) => rows[0] ?? { moderator: false, operator: false }))
