import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Effect, Option, type Redacted } from "effect"
import { NotFound } from "../api/ApiError.js"
import type { KeyActor } from "../api/Authentication.js"
import { openSecret, sealSecret } from "../webhooks/SigningSecret.js"
import {
  ApprovalPending,
  CommandDenied,
  CommandExpired,
  CommandFailed,
  CommandInProgress,
  type IntegrationCommand,
  type IntegrationCommandState
} from "./IntegrationCommand.js"

/** How long the owner has to approve and the client to commit (docs/decisions.md "Approval flow"). */
export const commandLifetimeMinutes = 60

/** A commit left `running` this long (a crashed host) may be claimed again; the fixed requestUuid keeps it one write. */
const staleClaimSeconds = 120

export interface CommandRow {
  readonly uuid: string
  readonly key_uuid: string
  readonly account_uuid: string
  readonly profile_uuid: string
  readonly operation_id: string
  readonly arguments: unknown
  readonly request_uuid: string
  readonly state: "pending" | "approved" | "denied" | "running" | "committed" | "failed"
  readonly expires_at: Date
  readonly decided_at: Date | null
  readonly committed_at: Date | null
  readonly result_status: number | null
  readonly result: unknown
  readonly created_at: Date
  readonly expired: boolean
  readonly key_revoked: boolean
}

const columns = `c.uuid, c.key_uuid, c.account_uuid, c.profile_uuid, c.operation_id, c.arguments, c.request_uuid,
  c.state, c.expires_at, c.decided_at, c.committed_at, c.result_status, c.result, c.created_at,
  (c.expires_at <= now()) AS expired, (k.revoked_at IS NOT NULL) AS key_revoked`

// pg and PGlite both parse jsonb; a driver handing back text still reads the same.
const json = (value: unknown): unknown => typeof value === "string" ? JSON.parse(value) : value

const objectOf = (value: unknown): Record<string, unknown> => {
  const parsed = json(value)
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {}
}

/**
 * A secret in an operation's answer (`webhooks.create` and `webhooks.rotate` return the signing
 * secret) is kept encrypted at rest in the stored result, as the endpoint keeps it: the top-level
 * `secret` is stored sealed (AES-256-GCM under the server secret, bound to the command) as
 * `sealedSecret`, and opened again only for the key's own commit answers.
 */
const sealedField = "sealedSecret"
const secretContext = (commandUuid: string) => `integration-command:${commandUuid}`

const sealResult = (serverSecret: Redacted.Redacted<string>, commandUuid: string, body: unknown): unknown => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body
  const { secret, ...rest } = body as Record<string, unknown>
  return typeof secret === "string" ? { ...rest, [sealedField]: sealSecret(serverSecret, secretContext(commandUuid), secret) } : body
}

const openResult = (serverSecret: Redacted.Redacted<string>, commandUuid: string, body: unknown): unknown => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body
  const { [sealedField]: sealed, ...rest } = body as Record<string, unknown>
  return typeof sealed === "string" ? { ...rest, secret: openSecret(serverSecret, secretContext(commandUuid), sealed) } : body
}

/** What the owner and the client see; a finished command keeps its state even after expiry. */
export const commandStateOf = (row: CommandRow): IntegrationCommandState =>
  row.state === "committed" || row.state === "failed" || row.state === "denied"
    ? row.state
    : row.key_revoked
    ? "revoked"
    : row.expired
    ? "expired"
    : row.state

export const toCommand = (row: CommandRow, publicOrigin: string, serverSecret: Redacted.Redacted<string>): IntegrationCommand => ({
  uuid: row.uuid,
  operationId: row.operation_id,
  arguments: objectOf(row.arguments),
  state: commandStateOf(row),
  approvalUrl: `${publicOrigin}/approvals/${row.uuid}`,
  expiresAt: row.expires_at,
  createdAt: row.created_at,
  ...(row.decided_at === null ? {} : { decidedAt: row.decided_at }),
  ...(row.committed_at === null ? {} : { committedAt: row.committed_at }),
  ...(row.result_status === null
    ? {}
    : { result: { status: row.result_status, body: openResult(serverSecret, row.uuid, json(row.result) ?? null) } })
})

const selectOne = (where: (sql: SqlClient.SqlClient) => Statement.Fragment) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<CommandRow>`SELECT ${sql.literal(columns)} FROM integration_commands c
      JOIN api_keys k ON k.uuid = c.key_uuid WHERE ${where(sql)}`
    return Option.fromNullable(rows[0])
  })

/** Stores a prepared command (arguments already decoded with the operation's own schema). */
export const insertCommand = (
  key: KeyActor,
  command: { readonly uuid: string; readonly operationId: string; readonly arguments: Record<string, unknown>; readonly requestUuid: string }
): Effect.Effect<CommandRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO integration_commands
      (uuid, key_uuid, account_uuid, profile_uuid, operation_id, arguments, request_uuid, state, expires_at)
      VALUES (${command.uuid}, ${key.keyUuid}, ${key.accountUuid}, ${key.profileUuid}, ${command.operationId},
        ${JSON.stringify(command.arguments)}::jsonb, ${command.requestUuid}, 'pending',
        now() + make_interval(mins => ${commandLifetimeMinutes}))`
    const row = yield* selectOne((s) => s.and([s`c.uuid = ${command.uuid}`]))
    return Option.getOrThrow(row)
  })

/** The owner's view: a command of any key of the signed-in account. */
export const commandOfAccount = (accountUuid: string, uuid: string) =>
  selectOne((s) => s.and([s`c.uuid = ${uuid}`, s`c.account_uuid = ${accountUuid}`]))

/**
 * The owner approves or denies a pending command. Only a pending, unexpired command of a live key
 * changes; anything else answers the command as it stands (the page shows its state).
 */
export const decideCommand = (
  accountUuid: string,
  uuid: string,
  decision: "approved" | "denied"
): Effect.Effect<Option.Option<CommandRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE integration_commands c SET state = ${decision}, decided_at = now(), updated_at = now()
      FROM api_keys k
      WHERE c.uuid = ${uuid} AND c.account_uuid = ${accountUuid} AND c.state = 'pending'
        AND c.expires_at > now() AND k.uuid = c.key_uuid AND k.revoked_at IS NULL`
    return yield* commandOfAccount(accountUuid, uuid)
  })

export type Claim =
  | { readonly _tag: "Run"; readonly row: CommandRow }
  | { readonly _tag: "Done"; readonly row: CommandRow }

/**
 * The commit's claim: an approved command becomes `running` for exactly one caller; a committed
 * one is answered again from its stored result. Only the key that prepared it sees it.
 */
export const claimCommand = (
  keyUuid: string,
  uuid: string
): Effect.Effect<
  Claim,
  NotFound | ApprovalPending | CommandDenied | CommandExpired | CommandFailed | CommandInProgress | SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const claimed = yield* sql<{ uuid: string }>`UPDATE integration_commands SET state = 'running', claimed_at = now(), updated_at = now()
      WHERE uuid = ${uuid} AND key_uuid = ${keyUuid} AND expires_at > now()
        AND (state = 'approved' OR (state = 'running' AND claimed_at < now() - make_interval(secs => ${staleClaimSeconds})))
      RETURNING uuid`
    const found = yield* selectOne((s) => s.and([s`c.uuid = ${uuid}`, s`c.key_uuid = ${keyUuid}`]))
    if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ message: "This key prepared no such command" }))
    const row = found.value
    if (claimed.length > 0) return { _tag: "Run", row } as const
    switch (row.state) {
      case "committed":
        return { _tag: "Done", row } as const
      case "failed":
        return yield* Effect.fail(new CommandFailed({ message: failureMessage(row) }))
      case "denied":
        return yield* Effect.fail(new CommandDenied({ message: "The owner denied this command; it can never run" }))
      default:
        if (row.expired) {
          return yield* Effect.fail(new CommandExpired({ message: "The command expired before it was committed; prepare it again" }))
        }
        if (row.state === "running") {
          return yield* Effect.fail(new CommandInProgress({ message: "Another commit of this command is running; retry shortly" }))
        }
        return yield* Effect.fail(new ApprovalPending({ message: `The owner has not approved this command yet: send them ${"/approvals/" + row.uuid}` }))
    }
  })

/** Stores the operation's answer once: 2xx commits the command, anything else fails it for good. */
export const finishCommand = (
  uuid: string,
  result: { readonly status: number; readonly body: unknown },
  serverSecret: Redacted.Redacted<string>
): Effect.Effect<CommandRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const state = result.status >= 200 && result.status < 300 ? "committed" : "failed"
    const stored = sealResult(serverSecret, uuid, result.body ?? null)
    yield* sql`UPDATE integration_commands SET state = ${state}, committed_at = now(), updated_at = now(),
      result_status = ${result.status}, result = ${JSON.stringify(stored)}::jsonb
      WHERE uuid = ${uuid} AND state = 'running'`
    return Option.getOrThrow(yield* selectOne((s) => s.and([s`c.uuid = ${uuid}`])))
  })

/** "The operation failed: <code>: <message>" from a stored error envelope. */
export const failureMessage = (row: CommandRow): string => {
  const body = objectOf(row.result)
  const error = typeof body["error"] === "object" && body["error"] !== null ? body["error"] as Record<string, unknown> : {}
  return `The operation failed (${row.result_status ?? "?"} ${String(error["code"] ?? "")}): ${String(error["message"] ?? "")}; prepare a new command`
}
