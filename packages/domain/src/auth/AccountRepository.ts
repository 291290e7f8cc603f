import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { findOne, rowsDecoder, selectList } from "../store/Rows.js"

/** `accounts`: the one module that reads and writes it. */
export const AccountRow = Schema.Struct({
  uuid: Schema.String,
  email: Schema.String,
  current_profile_uuid: Schema.NullOr(Schema.String),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  deleted_at: Schema.NullOr(Schema.DateFromSelf)
})
export type AccountRow = typeof AccountRow.Type

const accountColumns = selectList(AccountRow)

/** The live (not deleted) account of an address, as stored (lower-cased). */
export const liveAccountRow: (email: string) => Effect.Effect<Option.Option<AccountRow>, SqlError, SqlClient.SqlClient> = (email) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    findOne({
      Request: Schema.String,
      Result: AccountRow,
      execute: (address) => sql`SELECT ${sql.literal(accountColumns)} FROM accounts WHERE email = ${address} AND deleted_at IS NULL`
    })(email))

const decodeUuid = rowsDecoder(Schema.Struct({ uuid: Schema.String }))

export const insertAccount = (email: string): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(Effect.flatMap(sql`INSERT INTO accounts ${sql.insert({ email })} RETURNING uuid`, decodeUuid), (rows) => rows[0]!.uuid))

/** Locks the account's row until the end of the transaction: serialises bounded creations (keys, profiles). */
export const lockAccountRow = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 FROM accounts WHERE uuid = ${accountUuid} FOR UPDATE`.pipe(Effect.asVoid))

export const setCurrentProfile = (accountUuid: string, profileUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE accounts SET current_profile_uuid = ${profileUuid}, updated_at = now() WHERE uuid = ${accountUuid}`.pipe(Effect.asVoid))

/** Marks a live account deleted; false when there was none. */
export const softDeleteAccount = (accountUuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`UPDATE accounts SET deleted_at = now(), updated_at = now(), revision = revision + 1
        WHERE uuid = ${accountUuid} AND deleted_at IS NULL RETURNING uuid`,
      (rows) => rows.length > 0
    ))

const decodeAccounts = rowsDecoder(AccountRow)

/**
 * Accounts whose address contains `fragment` (lower-cased), live ones first, then by address: the
 * admin area's search. `position` rather than LIKE, so `%` and `_` in the fragment match themselves.
 */
export const accountsMatching = (fragment: string, limit: number): Effect.Effect<ReadonlyArray<AccountRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(accountColumns)} FROM accounts WHERE position(${fragment} in email) > 0
        ORDER BY (deleted_at IS NULL) DESC, email, created_at DESC LIMIT ${limit}`,
      decodeAccounts
    ))

/** One account by uuid, deleted or not. */
export const accountRowByUuid = (accountUuid: string): Effect.Effect<Option.Option<AccountRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(sql`SELECT ${sql.literal(accountColumns)} FROM accounts WHERE uuid = ${accountUuid}`, decodeAccounts),
      (rows) => Option.fromNullable(rows[0])
    ))
