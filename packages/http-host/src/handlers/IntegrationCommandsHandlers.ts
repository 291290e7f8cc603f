import {
  ApprovalNotRequired,
  approvedOperation,
  authorizeKey,
  BirzhaApi,
  catalog,
  type CatalogEntry,
  CommandFailed,
  CurrentActor,
  InvalidRequest,
  type KeyActor,
  KeyRequired,
  NotFound
} from "@birzha/domain"
import { claimCommand, failureMessage, finishCommand, insertCommand, toCommand } from "@birzha/domain/server"
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Either, Layer, Option, ParseResult, Schema, SchemaAST } from "effect"
import { randomUUID } from "node:crypto"
import { HostSettings } from "../HostSettings.js"
import { noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

/** Fields the server fixes for a prepared command; a client sending them is refused (spec). */
const serverFixed = ["requestUuid", "profileUuid"] as const

const pathNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? "")

const propertyNames = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  try {
    return SchemaAST.getPropertySignatures(SchemaAST.typeAST(ast)).map((property) => String(property.name))
  } catch {
    return []
  }
}

interface Parts {
  readonly path: Record<string, unknown>
  readonly rest: Record<string, unknown>
}

/** The flat arguments split the way the route reads them: path parameters, and the rest as body (or query). */
const split = (entry: CatalogEntry, args: Record<string, unknown>): Parts => {
  const names = new Set(pathNames(entry.path))
  const path: Record<string, unknown> = {}
  const rest: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(args)) (names.has(name) ? path : rest)[name] = value
  return { path, rest }
}

const envelope = (status: number, code: string, message: string) =>
  HttpServerResponse.unsafeJson({ error: { code, message } }, { status })

/**
 * Decodes prepared arguments with the operation's own input schemas (path, query, body), and
 * answers a violation with the code the operation itself would give (`invalidInput`).
 */
const validate = (entry: CatalogEntry, parts: Parts): Option.Option<HttpServerResponse.HttpServerResponse> => {
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

/** The answer an operation's failure gets on the wire: the error's own status and code. */
const answerOfFailure = (cause: Cause.Cause<unknown>): { readonly status: number; readonly body: unknown } => {
  const error = Cause.squash(cause)
  if (typeof error === "object" && error !== null) {
    // Domain errors carry their status and code as statics of their class.
    const cls = error.constructor as { readonly status?: unknown; readonly code?: unknown }
    const message = "message" in error && typeof error.message === "string" ? error.message : ""
    if (typeof cls.status === "number" && typeof cls.code === "string") {
      return { status: cls.status, body: { error: { code: cls.code, message } } }
    }
    if ("_tag" in error && error._tag === "HttpApiDecodeError") {
      return { status: 400, body: { error: { code: InvalidRequest.code, message } } }
    }
  }
  return { status: 500, body: { error: { code: "internal_error", message: "The operation failed unexpectedly" } } }
}

const keyOf = (actor: typeof CurrentActor.Service): Effect.Effect<KeyActor, KeyRequired> =>
  actor.via === "session"
    ? Effect.fail(new KeyRequired({ message: "The approval flow is for bearer clients; in a browser session call the operation directly" }))
    : Effect.succeed(actor)

export const IntegrationCommandsHandlers = HttpApiBuilder.group(BirzhaApi, "integrationCommands", (handlers) =>
  Effect.gen(function*() {
    const run = using(yield* Effect.context<SqlClient.SqlClient>())
    const router = yield* HttpApiBuilder.Router
    const { publicOrigin } = yield* HostSettings
    const byId = new Map(catalog.map((entry) => [entry.id, entry]))

    /**
     * Runs the operation through the service's own router, exactly as a direct call with the same
     * key would (route, authentication, scopes, schemas, handler), with `approvedOperation` set so
     * the key's approval check passes for this one operation. No per-operation code.
     */
    const dispatch = (entry: CatalogEntry, args: Record<string, unknown>, authorization: string) =>
      Effect.gen(function*() {
        const parts = split(entry, args)
        let path = entry.path
        for (const [name, value] of Object.entries(parts.path)) path = path.replace(`{${name}}`, encodeURIComponent(String(value)))
        const url = new URL(path, publicOrigin)
        const hasBody = Option.isSome(entry.schemas.payload)
        if (!hasBody) {
          for (const [name, value] of Object.entries(parts.rest)) url.searchParams.set(name, typeof value === "string" ? value : JSON.stringify(value))
        }
        const request = HttpServerRequest.fromWeb(
          new Request(url, {
            method: entry.method,
            headers: { authorization, "content-type": "application/json" },
            ...(hasBody ? { body: JSON.stringify(parts.rest) } : {})
          })
        )
        const app = yield* HttpRouter.toHttpApp(yield* router.router)
        return yield* app.pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, request),
          Effect.scoped,
          Effect.locally(approvedOperation, entry.id),
          Effect.flatMap((response) =>
            Effect.promise(async () => {
              const text = await HttpServerResponse.toWeb(response).text()
              let body: unknown = null
              try {
                body = text === "" ? null : JSON.parse(text)
              } catch {
                body = text
              }
              return { status: response.status, body }
            })
          ),
          Effect.catchAllCause((cause) => Effect.succeed(answerOfFailure(cause)))
        )
      })

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
          // The key must be allowed to run the operation itself (scope, HTTP access), approval aside.
          yield* authorizeKey(entry, key, { channel: "http", approved: true })
          const uuid = randomUUID()
          const requestUuid = randomUUID()
          const fields: ReadonlyArray<string> = Option.match(entry.schemas.payload, { onNone: () => [], onSome: propertyNames })
          const args: Record<string, unknown> = {
            ...payload.arguments,
            ...(fields.includes("requestUuid") ? { requestUuid } : {}),
            ...(fields.includes("profileUuid") ? { profileUuid: key.profileUuid } : {})
          }
          const invalid = validate(entry, split(entry, args))
          if (Option.isSome(invalid)) return invalid.value
          const row = yield* run(insertCommand(key, { uuid, operationId: entry.id, arguments: args, requestUuid }))
          return { command: toCommand(row, publicOrigin) }
        }))
      .handle("integrationCommands.commit", ({ path }) =>
        Effect.gen(function*() {
          yield* noStore
          const key = yield* Effect.flatMap(CurrentActor, keyOf)
          // Any body (`confirmed: true` included) is ignored: only the owner's approval lets it run.
          const claim = yield* run(claimCommand(key.keyUuid, path.uuid))
          if (claim._tag === "Done") return { command: toCommand(claim.row, publicOrigin) }
          const entry = byId.get(claim.row.operation_id)
          if (entry === undefined) return yield* Effect.fail(new NotFound({ message: "The command's operation no longer exists" }))
          const request = yield* HttpServerRequest.HttpServerRequest
          const args = toCommand(claim.row, publicOrigin).arguments
          const result = yield* dispatch(entry, args, request.headers["authorization"] ?? "")
          const row = yield* run(finishCommand(claim.row.uuid, result))
          if (row.state === "failed") return yield* Effect.fail(new CommandFailed({ message: failureMessage(row) }))
          return { command: toCommand(row, publicOrigin) }
        }))
  })
).pipe(
  // The same memoized router every route registers with, so `dispatch` sees the whole service.
  Layer.provide(HttpApiBuilder.Router.Live)
)
