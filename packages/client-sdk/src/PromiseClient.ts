import { FetchHttpClient } from "@effect/platform"
import { detailsOf, type ErrorDetails } from "@birzha/domain"
import { Cause, Effect, Exit, Option } from "effect"
import { type BirzhaClientOptions, type BirzhaOperations, makeBirzhaClient } from "./BirzhaClient.js"
import { type Groups, withGroups } from "./Groups.js"

/**
 * What a Promise of the facade rejects with. `code` and `status` are the service's own when it
 * answered with its error envelope; `transport_error` and `unexpected_response` otherwise.
 * `details` holds the envelope's members that explain the refusal (`field` and `rule`, `resource`,
 * `uuid`, `state` and `allowed`, `scopes`, `limit` and `retryAfterSeconds`...), those it carried.
 */
export class BirzhaError extends Error {
  override readonly name: string = "BirzhaError"
  constructor(
    readonly code: string,
    message: string,
    readonly status: number | undefined,
    override readonly cause?: unknown,
    readonly details: ErrorDetails = {}
  ) {
    super(message)
  }
}

/**
 * The events cursor is older than 30 days (410 `resync_required`): read the current records again,
 * then start a new cursor without one. Thrown by `events.list` and by `followEvents`.
 */
export class ResyncRequiredError extends BirzhaError {
  override readonly name: string = "ResyncRequiredError"
}

type Method<F> = F extends (...request: infer Request) => Effect.Effect<infer Success, infer _E, infer _R>
  ? (...request: Request) => Promise<Success>
  : never

/** The catalog as plain async functions, for code that does not use Effect: by id and in groups. */
export interface BirzhaPromiseClient extends PromiseOperations, Groups<PromiseOperations> {}

/** Every operation of the catalog by its id, as a function answering a Promise. */
export type PromiseOperations = { readonly [Id in keyof BirzhaOperations]: Method<BirzhaOperations[Id]> }

const toBirzhaError = (cause: Cause.Cause<unknown>): BirzhaError => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return new BirzhaError("transport_error", Cause.pretty(cause), undefined, cause)
  const error = failure.value
  const ctor = typeof error === "object" && error !== null ? error.constructor : undefined
  const code = ctor !== undefined && "code" in ctor && typeof ctor.code === "string" ? ctor.code : undefined
  const status = ctor !== undefined && "status" in ctor && typeof ctor.status === "number" ? ctor.status : undefined
  const message = error instanceof Error ? error.message : String(error)
  if (code === "resync_required") return new ResyncRequiredError(code, message, status, error)
  if (code !== undefined) return new BirzhaError(code, message, status, error, detailsOf(error))
  const tag = typeof error === "object" && error !== null && "_tag" in error ? error._tag : undefined
  return tag === "ParseError" || tag === "ResponseError"
    ? new BirzhaError("unexpected_response", message, undefined, error)
    : new BirzhaError("transport_error", message, undefined, error)
}

/**
 * `createBirzhaClient({ baseUrl, apiKey })`: every operation of the catalog as
 * `client["events.types"]()` and `client.events.types()`, typed from the same schemas as the
 * Effect client.
 */
export const createBirzhaClient = (options: BirzhaClientOptions): BirzhaPromiseClient => {
  const client = Effect.runSync(makeBirzhaClient(options).pipe(Effect.provide(FetchHttpClient.layer)))
  const facade: Record<string, (request?: unknown) => Promise<unknown>> = {}
  for (const [id, method] of Object.entries(client as unknown as Record<string, (request?: unknown) => Effect.Effect<unknown, unknown>>)) {
    facade[id] = (request) =>
      Effect.runPromiseExit(method(request)).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        throw toBirzhaError(exit.cause)
      })
  }
  return withGroups(facade) as unknown as BirzhaPromiseClient
}
