import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { selectList } from "../store/Rows.js"

/** `integration_commands` as the service reads it: the one module that reads and writes the table. */
export const StoredCommandRow = Schema.Struct({
  uuid: Schema.String,
  key_uuid: Schema.String,
  account_uuid: Schema.String,
  profile_uuid: Schema.String,
  operation_id: Schema.String,
  /** jsonb: the arguments as decoded by the operation's own schema at prepare. */
  arguments: Schema.Unknown,
  request_uuid: Schema.String,
  state: Schema.Literal("pending", "approved", "denied", "running", "committed", "failed"),
  expires_at: Schema.DateFromSelf,
  decided_at: Schema.NullOr(Schema.DateFromSelf),
  committed_at: Schema.NullOr(Schema.DateFromSelf),
  result_status: Schema.NullOr(Schema.Number),
  /** jsonb: the operation's answer, its secret sealed. */
  result: Schema.Unknown,
  created_at: Schema.DateFromSelf
})

/** The stored row with what the database's clock and the key say: expired, and the key revoked. */
export const CommandRow = Schema.Struct({
  ...StoredCommandRow.fields,
  expired: Schema.Boolean,
  key_revoked: Schema.Boolean,
  /** The name of the key that prepared it (the approval page says which key asks). */
  key_name: Schema.String
})
export type CommandRow = typeof CommandRow.Type

const commandRowList = `${selectList(StoredCommandRow, "c")}, (c.expires_at <= now()) AS expired, (k.revoked_at IS NOT NULL) AS key_revoked, k.name AS key_name`
const decodeRows = Schema.decodeUnknown(Schema.Array(CommandRow))

/** The one command matching `where` (over `c`, the command, and `k`, its key). */
export const commandRowWhere = (
  where: (sql: SqlClient.SqlClient) => Statement.Fragment
): Effect.Effect<Option.Option<CommandRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(commandRowList)} FROM integration_commands c
      JOIN api_keys k ON k.uuid = c.key_uuid WHERE ${where(sql)}`.pipe(
      Effect.flatMap((rows) => Effect.orDie(decodeRows(rows))),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

/** The account's commands still waiting for a decision (pending, unexpired, key live), soonest expiry first. */
export const pendingRowsOfAccount = (accountUuid: string, limit: number): Effect.Effect<ReadonlyArray<CommandRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(commandRowList)} FROM integration_commands c
      JOIN api_keys k ON k.uuid = c.key_uuid
      WHERE c.account_uuid = ${accountUuid} AND c.state = 'pending' AND c.expires_at > now() AND k.revoked_at IS NULL
      ORDER BY c.expires_at, c.uuid LIMIT ${limit}`.pipe(Effect.flatMap((rows) => Effect.orDie(decodeRows(rows)))))

/** A new pending command that expires in `lifetimeMinutes`. */
export const insertCommandRow = (command: {
  readonly uuid: string
  readonly keyUuid: string
  readonly accountUuid: string
  readonly profileUuid: string
  readonly operationId: string
  readonly arguments: Record<string, unknown>
  readonly requestUuid: string
  readonly lifetimeMinutes: number
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO integration_commands
      (uuid, key_uuid, account_uuid, profile_uuid, operation_id, arguments, request_uuid, state, expires_at)
      VALUES (${command.uuid}, ${command.keyUuid}, ${command.accountUuid}, ${command.profileUuid}, ${command.operationId},
        ${JSON.stringify(command.arguments)}::jsonb, ${command.requestUuid}, 'pending',
        now() + make_interval(mins => ${command.lifetimeMinutes}))`.pipe(Effect.asVoid))

/** Only a pending, unexpired command of a live key of the account takes the owner's decision. */
export const decidePending = (
  accountUuid: string,
  uuid: string,
  decision: "approved" | "denied"
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE integration_commands c SET state = ${decision}, decided_at = now(), updated_at = now()
      FROM api_keys k
      WHERE c.uuid = ${uuid} AND c.account_uuid = ${accountUuid} AND c.state = 'pending'
        AND c.expires_at > now() AND k.uuid = c.key_uuid AND k.revoked_at IS NULL`.pipe(Effect.asVoid))

/**
 * An approved command of the key becomes `running` (or a `running` one whose claim is older than
 * `staleClaimSeconds`); true for exactly one caller.
 */
export const claimApproved = (keyUuid: string, uuid: string, staleClaimSeconds: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE integration_commands SET state = 'running', claimed_at = now(), updated_at = now()
      WHERE uuid = ${uuid} AND key_uuid = ${keyUuid} AND expires_at > now()
        AND (state = 'approved' OR (state = 'running' AND claimed_at < now() - make_interval(secs => ${staleClaimSeconds})))
      RETURNING uuid`.pipe(Effect.map((rows) => rows.length > 0)))

/** A running command ends committed or failed with its stored answer. */
export const storeResult = (
  uuid: string,
  state: "committed" | "failed",
  result: { readonly status: number; readonly body: unknown }
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE integration_commands SET state = ${state}, committed_at = now(), updated_at = now(),
      result_status = ${result.status}, result = ${JSON.stringify(result.body)}::jsonb
      WHERE uuid = ${uuid} AND state = 'running'`.pipe(Effect.asVoid))
