import { Effect, Either, Option, Schema, SchemaAST } from "effect"
import { randomUUID } from "node:crypto"
import { detailsOf, InvalidRequest, NotFound } from "../kernel/ApiError.js"
import { credentialFieldsOf } from "../kernel/Common.js"
import type { Actor, KeyActor, SessionActor } from "../kernel/Authentication.js"
import { IntegrationCommandsApi } from "./IntegrationCommandsApi.js"
import type { CatalogEntry } from "../kernel/Operation.js"
import { ServerSecret } from "../auth/ServerSecret.js"
import { authorizeKey } from "../keys/KeyAccess.js"
import { KeyRequired, SessionRequired } from "../keys/KeyErrors.js"
import { implementWith } from "../operations/Implementation.js"
import { approvalOf, inputOfArguments, Operations, schemaErrorOf } from "../operations/Operations.js"
import { PublicOrigin } from "../operations/PublicOrigin.js"
import { ApprovalNotRequired, CommandFailed } from "./IntegrationCommand.js"
import {
  claimCommand,
  commandOfAccount,
  decideCommand,
  failureMessage,
  finishCommand,
  insertCommand,
  ownerCommandOf,
  pendingCommandsOfAccount,
  toCommand
} from "./IntegrationCommands.js"

/** Fields the server fixes for a prepared command; a client sending them is refused (spec). */
const serverFixed = ["requestUuid", "profileUuid"] as const

const propertyNames = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  try {
    return SchemaAST.getPropertySignatures(SchemaAST.typeAST(ast)).map((property) => String(property.name))
  } catch {
    return []
  }
}

/**
 * Decodes prepared arguments with the operation's own input schemas (path, query, body), strictly
 * (an unknown field is refused: the owner approves exactly what will run), and answers a violation
 * with the error the operation itself would give.
 */
const validate = (entry: CatalogEntry, args: Record<string, unknown>) => {
  const input = inputOfArguments(entry, args)
  const checks: Array<readonly [Option.Option<SchemaAST.AST>, unknown]> = [
    [entry.schemas.path, input.path ?? {}],
    [entry.schemas.payload, input.payload],
    [entry.schemas.urlParams, input.urlParams ?? {}]
  ]
  for (const [ast, value] of checks) {
    if (Option.isNone(ast)) continue
    const decoded = Schema.decodeUnknownEither(Schema.make(ast.value), { errors: "all", onExcessProperty: "error" })(value)
    if (Either.isLeft(decoded)) {
      const error = schemaErrorOf(entry, decoded.left, input.payload)
      // Approval operations name no input error of their own today; any other would still be a 400.
      return Effect.fail(error instanceof InvalidRequest ? error : new InvalidRequest({ message: String(Reflect.get(Object(error), "message")), ...detailsOf(error) }))
    }
  }
  return Effect.void
}

const keyOf = (actor: Actor): Effect.Effect<KeyActor, KeyRequired> =>
  actor.via === "key" || actor.via === "mcp"
    ? Effect.succeed(actor)
    : Effect.fail(new KeyRequired({ message: "The approval flow is for bearer clients; in a browser session call the operation directly" }))

/** The owner's operations are session-only in the catalog (the registry refuses keys); narrowed here for the types. */
const ownerOf = (actor: Actor): Effect.Effect<SessionActor, SessionRequired> =>
  actor.via === "session" ? Effect.succeed(actor) : Effect.fail(new SessionRequired({ message: "Commands are decided in a browser session only" }))

const noSuchCommand = () => new NotFound({ message: "Your account has no such prepared command" })

export const IntegrationCommandsOperations = implementWith(
  IntegrationCommandsApi,
  Effect.all({ publicOrigin: PublicOrigin, secret: ServerSecret })
)(({ publicOrigin, secret }) => ({
  "integrationCommands.prepare": ({ payload }, actor) =>
    Effect.gen(function*() {
      const key = yield* keyOf(actor)
      const operations = yield* Operations
      const entry = operations.entries.get(payload.operationId)
      if (entry === undefined) {
        return yield* Effect.fail(new InvalidRequest({ message: `operationId: no operation ${payload.operationId} in the catalog` }))
      }
      // A flag that widens the call into an operation needing approval (tasks.save with submit: true) needs it too.
      const { needed, widened } = approvalOf(entry, payload.arguments, operations.entries)
      if (!needed) {
        return yield* Effect.fail(new ApprovalNotRequired({ message: `${entry.id} needs no approval: call it directly` }))
      }
      for (const field of serverFixed) {
        if (field in payload.arguments) {
          return yield* Effect.fail(new InvalidRequest({ message: `arguments.${field}: the server fixes ${field}; leave it out` }))
        }
      }
      for (const field of Option.match(entry.schemas.payload, { onNone: () => [], onSome: credentialFieldsOf })) {
        if (field in payload.arguments) {
          return yield* Effect.fail(new InvalidRequest({
            message: `arguments.${field}: a credential is never stored in a prepared command or shown for approval; leave it out (the key's verified address decides) or use the mailed link in a browser`
          }))
        }
      }
      // The key must be allowed to run the operation itself (scope, access on the channel it came through), approval aside.
      for (const allowed of [entry, ...widened]) yield* authorizeKey(allowed, key, { channel: key.via === "mcp" ? "mcp" : "http", approved: true })
      const uuid = randomUUID()
      const requestUuid = randomUUID()
      const fields: ReadonlyArray<string> = Option.match(entry.schemas.payload, { onNone: () => [], onSome: propertyNames })
      const args: Record<string, unknown> = {
        ...payload.arguments,
        ...(fields.includes("requestUuid") ? { requestUuid } : {}),
        ...(fields.includes("profileUuid") ? { profileUuid: key.profileUuid } : {})
      }
      yield* validate(entry, args)
      const row = yield* insertCommand(key, { uuid, operationId: entry.id, arguments: args, requestUuid })
      return { command: toCommand(row, publicOrigin, secret) }
    }),
  "integrationCommands.commit": ({ path }, actor) =>
    Effect.gen(function*() {
      const key = yield* keyOf(actor)
      // Any body (`confirmed: true` included) is ignored: only the owner's approval lets it run.
      const claim = yield* claimCommand(key.keyUuid, path.uuid, publicOrigin)
      if (claim._tag === "Done") return { command: toCommand(claim.row, publicOrigin, secret) }
      const operations = yield* Operations
      const entry = operations.entries.get(claim.row.operation_id)
      if (entry === undefined) return yield* Effect.fail(new NotFound({ message: "The command's operation no longer exists" }))
      const args = toCommand(claim.row, publicOrigin, secret).arguments
      // The same key runs it, on the channel the commit came through (a tool call stays MCP), approved for this one operation.
      const answer = yield* operations.invoke(entry.id, key, inputOfArguments(entry, args), { approved: true })
      const row = yield* finishCommand(claim.row.uuid, { status: answer.status, body: answer.body }, secret)
      if (row.state === "failed") return yield* Effect.fail(new CommandFailed({ message: failureMessage(row) }))
      return { command: toCommand(row, publicOrigin, secret) }
    }),
  "integrationCommands.pending": (_, actor) =>
    Effect.gen(function*() {
      const owner = yield* ownerOf(actor)
      const { entries } = yield* Operations
      const rows = yield* pendingCommandsOfAccount(owner.accountUuid)
      return { items: yield* Effect.forEach(rows, (row) => ownerCommandOf(row, entries)) }
    }),
  "integrationCommands.get": ({ path }, actor) =>
    Effect.gen(function*() {
      const owner = yield* ownerOf(actor)
      const { entries } = yield* Operations
      const row = yield* commandOfAccount(owner.accountUuid, path.uuid)
      if (Option.isNone(row)) return yield* Effect.fail(noSuchCommand())
      return { command: yield* ownerCommandOf(row.value, entries) }
    }),
  "integrationCommands.decide": ({ path, payload }, actor) =>
    Effect.gen(function*() {
      const owner = yield* ownerOf(actor)
      const { entries } = yield* Operations
      // Only a pending, unexpired command of a live key changes; any other is answered as it stands.
      const row = yield* decideCommand(owner.accountUuid, path.uuid, payload.decision === "approve" ? "approved" : "denied")
      if (Option.isNone(row)) return yield* Effect.fail(noSuchCommand())
      return { command: yield* ownerCommandOf(row.value, entries) }
    })
}))
