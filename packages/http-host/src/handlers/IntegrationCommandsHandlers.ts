import {
  ApprovalNotRequired,
  authorizeKey,
  BirzhaApi,
  catalog,
  type CatalogEntry,
  CommandFailed,
  CurrentActor,
  InvalidRequest,
  type KeyActor,
  keyChannel,
  KeyRequired,
  NotFound
} from "@birzha/domain"
import { claimCommand, failureMessage, finishCommand, insertCommand, ServerSecret, toCommand } from "@birzha/domain/server"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Either, FiberRef, Layer, Option, ParseResult, Schema, SchemaAST } from "effect"
import { randomUUID } from "node:crypto"
import { HostSettings } from "../HostSettings.js"
import { dispatchOperation, splitArguments } from "./InternalDispatch.js"
import { noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

/** Fields the server fixes for a prepared command; a client sending them is refused (spec). */
const serverFixed = ["requestUuid", "profileUuid"] as const

const propertyNames = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  try {
    return SchemaAST.getPropertySignatures(SchemaAST.typeAST(ast)).map((property) => String(property.name))
  } catch {
    return []
  }
}

const envelope = (status: number, code: string, message: string) =>
  HttpServerResponse.unsafeJson({ error: { code, message } }, { status })

/**
 * Decodes prepared arguments with the operation's own input schemas (path, query, body), and
 * answers a violation with the code the operation itself would give (`invalidInput`).
 */
const validate = (entry: CatalogEntry, parts: ReturnType<typeof splitArguments>): Option.Option<HttpServerResponse.HttpServerResponse> => {
  const stringly = (record: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]))
  const hasBody = Option.isSome(entry.schemas.payload)
  const checks: Array<readonly [Option.Option<SchemaAST.AST>, unknown]> = [
    [entry.schemas.path, stringly(parts.path)],
    [hasBody ? entry.schemas.payload : entry.schemas.urlParams, hasBody ? parts.rest : stringly(parts.rest)]
  ]
  for (const [ast, value] of checks) {
    if (Option.isNone(ast)) continue
    const decoded = Schema.decodeUnknownEither(Schema.make(ast.value), { errors: "all", onExcessProperty: "error" })(value)
    if (Either.isLeft(decoded)) {
      const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
      const field = String(issues[0]?.path[0] ?? "*")
      const cls = entry.invalidInput[field] ?? entry.invalidInput["*"]
      const message = issues.map((issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`).join("; ")
      return Option.some(envelope(cls?.status ?? InvalidRequest.status, cls?.code ?? InvalidRequest.code, message))
    }
  }
  return Option.none()
}

const keyOf = (actor: typeof CurrentActor.Service): Effect.Effect<KeyActor, KeyRequired> =>
  actor.via === "session"
    ? Effect.fail(new KeyRequired({ message: "The approval flow is for bearer clients; in a browser session call the operation directly" }))
    : Effect.succeed(actor)

export const IntegrationCommandsHandlers = HttpApiBuilder.group(BirzhaApi, "integrationCommands", (handlers) =>
  Effect.gen(function*() {
    const run = using(yield* Effect.context<SqlClient.SqlClient>())
    const { publicOrigin } = yield* HostSettings
    // Secrets in stored results (a webhook signing secret) are sealed under it.
    const secret = yield* ServerSecret
    const byId = new Map(catalog.map((entry) => [entry.id, entry]))

    return handlers
      .handle("integrationCommands.prepare", ({ payload }) =>
        Effect.gen(function*() {
          yield* noStore
          const key = yield* Effect.flatMap(CurrentActor, keyOf)
          const entry = byId.get(payload.operationId)
          if (entry === undefined) {
            return yield* Effect.fail(new InvalidRequest({ message: `operationId: no operation ${payload.operationId} in the catalog` }))
          }
          if (!entry.approval) {
            return yield* Effect.fail(new ApprovalNotRequired({ message: `${entry.id} needs no approval: call it directly` }))
          }
          for (const field of serverFixed) {
            if (field in payload.arguments) {
              return yield* Effect.fail(new InvalidRequest({ message: `arguments.${field}: the server fixes ${field}; leave it out` }))
            }
          }
          // The key must be allowed to run the operation itself (scope, access on the channel it came through), approval aside.
          yield* authorizeKey(entry, key, { channel: yield* FiberRef.get(keyChannel), approved: true })
          const uuid = randomUUID()
          const requestUuid = randomUUID()
          const fields: ReadonlyArray<string> = Option.match(entry.schemas.payload, { onNone: () => [], onSome: propertyNames })
          const args: Record<string, unknown> = {
            ...payload.arguments,
            ...(fields.includes("requestUuid") ? { requestUuid } : {}),
            ...(fields.includes("profileUuid") ? { profileUuid: key.profileUuid } : {})
          }
          const invalid = validate(entry, splitArguments(entry, args))
          if (Option.isSome(invalid)) return invalid.value
          const row = yield* run(insertCommand(key, { uuid, operationId: entry.id, arguments: args, requestUuid }))
          return { command: toCommand(row, publicOrigin, secret) }
        }))
      .handle("integrationCommands.commit", ({ path }) =>
        Effect.gen(function*() {
          yield* noStore
          const key = yield* Effect.flatMap(CurrentActor, keyOf)
          // Any body (`confirmed: true` included) is ignored: only the owner's approval lets it run.
          const claim = yield* run(claimCommand(key.keyUuid, path.uuid))
          if (claim._tag === "Done") return { command: toCommand(claim.row, publicOrigin, secret) }
          const entry = byId.get(claim.row.operation_id)
          if (entry === undefined) return yield* Effect.fail(new NotFound({ message: "The command's operation no longer exists" }))
          const request = yield* HttpServerRequest.HttpServerRequest
          const args = toCommand(claim.row, publicOrigin, secret).arguments
          const result = yield* dispatchOperation(entry, args, {
            authorization: request.headers["authorization"] ?? "",
            publicOrigin,
            approved: true,
            // The commit runs the operation on the channel the commit came through (a tool call stays MCP).
            channel: yield* FiberRef.get(keyChannel)
          })
          const row = yield* run(finishCommand(claim.row.uuid, result, secret))
          if (row.state === "failed") return yield* Effect.fail(new CommandFailed({ message: failureMessage(row) }))
          return { command: toCommand(row, publicOrigin, secret) }
        }))
  })
).pipe(
  // The same memoized router every route registers with, so `dispatch` sees the whole service.
  Layer.provide(HttpApiBuilder.Router.Live)
)
