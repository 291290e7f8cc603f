import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, type Redacted } from "effect"
import { NotFound } from "../kernel/ApiError.js"
import type { KeyActor } from "../kernel/Authentication.js"
import { openSecret, sealSecret } from "../webhooks/SigningSecret.js"
import {
  claimApproved,
  commandRowWhere,
  type CommandRow,
  decidePending,
  insertCommandRow,
  pendingRowsOfAccount,
  storeResult
} from "./CommandRepository.js"
import type { CatalogEntry } from "../kernel/Operation.js"
import { approvalOf } from "../operations/Operations.js"
import { getPublication } from "../publications/PublicReads.js"
import { findOwnPublication } from "../publications/PublicationRepository.js"
import {
  ApprovalPending,
  CommandDenied,
  CommandExpired,
  CommandFailed,
  CommandInProgress,
  type IntegrationCommand,
  type IntegrationCommandState,
  type OwnerCommand
} from "./IntegrationCommand.js"

/** How long the owner has to approve and the client to commit (docs/decisions.md "Approval flow"). */
export const commandLifetimeMinutes = 60

/** A commit left `running` this long (a crashed host) may be claimed again; the fixed requestUuid keeps it one write. */
const staleClaimSeconds = 120

export type { CommandRow }

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

/** Where the owner approves a prepared command: an absolute address on the public origin. */
export const approvalUrlOf = (publicOrigin: string, uuid: string) => `${publicOrigin}/approvals/${uuid}`

export const toCommand = (row: CommandRow, publicOrigin: string, serverSecret: Redacted.Redacted<string>): IntegrationCommand => ({
  uuid: row.uuid,
  operationId: row.operation_id,
  arguments: objectOf(row.arguments),
  state: commandStateOf(row),
  approvalUrl: approvalUrlOf(publicOrigin, row.uuid),
  expiresAt: row.expires_at,
  createdAt: row.created_at,
  ...(row.decided_at === null ? {} : { decidedAt: row.decided_at }),
  ...(row.committed_at === null ? {} : { committedAt: row.committed_at }),
  ...(row.result_status === null
    ? {}
    : { result: { status: row.result_status, body: openResult(serverSecret, row.uuid, json(row.result) ?? null) } })
})

const selectOne = commandRowWhere

/** Stores a prepared command (arguments already decoded with the operation's own schema). */
export const insertCommand = (
  key: KeyActor,
  command: { readonly uuid: string; readonly operationId: string; readonly arguments: Record<string, unknown>; readonly requestUuid: string }
): Effect.Effect<CommandRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    yield* insertCommandRow({
      uuid: command.uuid,
      keyUuid: key.keyUuid,
      accountUuid: key.accountUuid,
      profileUuid: key.profileUuid,
      operationId: command.operationId,
      arguments: command.arguments,
      requestUuid: command.requestUuid,
      lifetimeMinutes: commandLifetimeMinutes
    })
    const row = yield* selectOne((s) => s.and([s`c.uuid = ${command.uuid}`]))
    return Option.getOrThrow(row)
  })

/** The owner's view: a command of any key of the signed-in account. */
export const commandOfAccount = (accountUuid: string, uuid: string) =>
  selectOne((s) => s.and([s`c.uuid = ${uuid}`, s`c.account_uuid = ${accountUuid}`]))

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const titleOf = (data: Record<string, unknown>): string | undefined => {
  const title = data["title"] ?? data["name"]
  return typeof title === "string" && title.trim() !== "" ? title : undefined
}

/** The publication a command's `publicationUuid` names, as its owner may see it: the key profile's own draft, or another's public version. */
const recordOf = (row: CommandRow, args: Record<string, unknown>): Effect.Effect<OwnerCommand["record"], SqlError, SqlClient.SqlClient> => {
  const uuid = args["publicationUuid"]
  if (typeof uuid !== "string" || !uuidPattern.test(uuid)) return Effect.succeed(undefined)
  return Effect.flatMap(findOwnPublication(row.profile_uuid, uuid), (own) => {
    if (Option.isSome(own)) {
      const title = titleOf(own.value.draft)
      return Effect.succeed({ uuid, kind: own.value.kind, ...(title === undefined ? {} : { title }), draft: own.value.draft })
    }
    return Effect.map(getPublication(uuid), Option.match({
      onNone: () => undefined,
      onSome: (found) => {
        const title = titleOf(found.approved)
        return { uuid, kind: found.kind, ...(title === undefined ? {} : { title }) }
      }
    }))
  })
}

/**
 * The owner's view of a command (the approval pages): what will run, what it does in words, the
 * key that asks and the record it touches. Its result is left out: it may hold the key's secret.
 */
export const ownerCommandOf = (
  row: CommandRow,
  entries: ReadonlyMap<string, CatalogEntry>
): Effect.Effect<OwnerCommand, SqlError, SqlClient.SqlClient> =>
  Effect.map(recordOf(row, objectOf(row.arguments)), (record) => {
    const args = objectOf(row.arguments)
    const entry = entries.get(row.operation_id)
    const widened = entry === undefined ? [] : approvalOf(entry, args, entries).widened
    return {
      uuid: row.uuid,
      operationId: row.operation_id,
      arguments: args,
      state: commandStateOf(row),
      expiresAt: row.expires_at,
      createdAt: row.created_at,
      ...(row.decided_at === null ? {} : { decidedAt: row.decided_at }),
      summary: entry?.summary ?? row.operation_id,
      also: widened.map((other) => ({ operationId: other.id, summary: other.summary })),
      key: { uuid: row.key_uuid, name: row.key_name },
      ...(record === undefined ? {} : { record })
    }
  })

/** The signed-in account's commands waiting for its decision (`/approvals`), soonest expiry first, at most 100. */
export const pendingCommandsOfAccount = (accountUuid: string) => pendingRowsOfAccount(accountUuid, 100)

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
    yield* decidePending(accountUuid, uuid, decision)
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
  uuid: string,
  publicOrigin: string
): Effect.Effect<
  Claim,
  NotFound | ApprovalPending | CommandDenied | CommandExpired | CommandFailed | CommandInProgress | SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function*() {
    const claimed = yield* claimApproved(keyUuid, uuid, staleClaimSeconds)
    const found = yield* selectOne((s) => s.and([s`c.uuid = ${uuid}`, s`c.key_uuid = ${keyUuid}`]))
    if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ message: "This key prepared no such command" }))
    const row = found.value
    if (claimed) return { _tag: "Run", row } as const
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
        // The address in full: an agent passes it on as it is (the prepared command's approvalUrl, toCommand).
        return yield* Effect.fail(new ApprovalPending({
          message: `The owner has not approved this command yet: send them ${approvalUrlOf(publicOrigin, row.uuid)}`,
          resource: "command",
          uuid: row.uuid,
          state: row.state
        }))
    }
  })

/** Stores the operation's answer once: 2xx commits the command, anything else fails it for good. */
export const finishCommand = (
  uuid: string,
  result: { readonly status: number; readonly body: unknown },
  serverSecret: Redacted.Redacted<string>
): Effect.Effect<CommandRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const state = result.status >= 200 && result.status < 300 ? "committed" : "failed"
    yield* storeResult(uuid, state, { status: result.status, body: sealResult(serverSecret, uuid, result.body ?? null) })
    return Option.getOrThrow(yield* selectOne((s) => s.and([s`c.uuid = ${uuid}`])))
  })

/** "The operation failed: <code>: <message>" from a stored error envelope. */
export const failureMessage = (row: CommandRow): string => {
  const body = objectOf(row.result)
  const error = typeof body["error"] === "object" && body["error"] !== null ? body["error"] as Record<string, unknown> : {}
  return `The operation failed (${row.result_status ?? "?"} ${String(error["code"] ?? "")}): ${String(error["message"] ?? "")}; prepare a new command`
}
