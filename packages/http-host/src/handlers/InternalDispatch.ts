import { approvedOperation, type CatalogEntry, keyChannel, type KeyChannel } from "@birzha/domain"
import { HttpApiBuilder, HttpApiError, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { inputError } from "../ErrorEnvelope.js"

/**
 * The service's own router as an internal call: the approval commit and the MCP tools run an
 * operation exactly as a direct HTTP call with the same Authorization header (route,
 * authentication, scopes, schemas, handler), on the channel the caller came through.
 */

const pathNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? "")

/** The flat arguments split the way the route reads them: path parameters, and the rest as body (or query). */
export const splitArguments = (entry: CatalogEntry, args: Record<string, unknown>) => {
  const names = new Set(pathNames(entry.path))
  const path: Record<string, unknown> = {}
  const rest: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(args)) (names.has(name) ? path : rest)[name] = value
  return { path, rest }
}

export interface DispatchResult {
  readonly status: number
  readonly body: unknown
}

const isDecodeError = (error: unknown): error is HttpApiError.HttpApiDecodeError =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "HttpApiDecodeError"

/** The answer an operation's failure gets on the wire: the error's own status and code. */
const answerOfFailure = (entry: CatalogEntry, args: Record<string, unknown>, cause: Cause.Cause<unknown>): DispatchResult => {
  const squashed = Cause.squash(cause)
  // A schema violation answers the operation's own input error, as over HTTP (tasks: invalid_task).
  const error = isDecodeError(squashed)
    ? inputError(entry, squashed, () => (typeof args["kind"] === "string" ? args["kind"] : undefined))
    : squashed
  if (typeof error === "object" && error !== null) {
    // Domain errors carry their status and code as statics of their class.
    const cls = error.constructor as { readonly status?: unknown; readonly code?: unknown }
    const message = "message" in error && typeof error.message === "string" ? error.message : ""
    if (typeof cls.status === "number" && typeof cls.code === "string") {
      return { status: cls.status, body: { error: { code: cls.code, message } } }
    }
  }
  return { status: 500, body: { error: { code: "internal_error", message: "The operation failed unexpectedly" } } }
}

/**
 * Runs `entry` with flat `args` through the router. `approved` sets `approvedOperation` for this
 * one operation (only the commit of an approved prepared command may pass it).
 */
export const dispatchOperation = (
  entry: CatalogEntry,
  args: Record<string, unknown>,
  options: {
    readonly authorization: string
    readonly publicOrigin: string
    readonly approved: boolean
    readonly channel: KeyChannel
  }
) =>
  Effect.gen(function*() {
    const router = yield* HttpApiBuilder.Router
    const parts = splitArguments(entry, args)
    let path = entry.path
    for (const [name, value] of Object.entries(parts.path)) path = path.replace(`{${name}}`, encodeURIComponent(String(value)))
    const url = new URL(path, options.publicOrigin)
    const hasBody = Option.isSome(entry.schemas.payload)
    if (!hasBody) {
      for (const [name, value] of Object.entries(parts.rest)) url.searchParams.set(name, typeof value === "string" ? value : JSON.stringify(value))
    }
    const request = HttpServerRequest.fromWeb(
      new Request(url, {
        method: entry.method,
        headers: { authorization: options.authorization, "content-type": "application/json" },
        ...(hasBody ? { body: JSON.stringify(parts.rest) } : {})
      })
    )
    const app = yield* HttpRouter.toHttpApp(yield* router.router)
    const run = app.pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request), Effect.scoped)
    const onChannel = Effect.locally(run, keyChannel, options.channel)
    return yield* (options.approved ? Effect.locally(onChannel, approvedOperation, entry.id) : onChannel).pipe(
      Effect.flatMap((response) =>
        Effect.promise(async (): Promise<DispatchResult> => {
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
      Effect.catchAllCause((cause) => Effect.succeed(answerOfFailure(entry, args, cause)))
    )
  })
