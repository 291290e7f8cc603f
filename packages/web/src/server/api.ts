import { type BirzhaClient, makeBirzhaClient } from "@birzha/client"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Cause, Effect, Either, Exit, FiberRef, Layer, Option, ParseResult } from "effect"

/** The session cookie a page request carried, sent along by the calls made while rendering that page. */
const requestCookie = FiberRef.unsafeMake<string | undefined>(undefined)

/** A refused or failed call as the page answers it: 400 (the input, named), 404, or 503 for anything else. */
export interface Refusal {
  /** 401: the call needed a session the request did not carry (a signed-in page sends to sign-in). */
  readonly status: 400 | 401 | 404 | 503
  /** For a 400 the client found before sending: the input's field at fault (`kind`, `q`, `uuid`). */
  readonly field?: string
}

export interface ServerApi {
  /** Runs calls of the one client; `cookie` (the visitor's session) goes with each of them. */
  readonly run: <A>(
    program: (client: BirzhaClient) => Effect.Effect<A, unknown>,
    cookie?: string
  ) => Promise<Either.Either<A, Refusal>>
}

const refusalOf = (cause: Cause.Cause<unknown>): Refusal => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return { status: 503 }
  const error = failure.value
  // The client checks the input against the operation's schema before sending: a ParseError
  // there is the page's own 400 (a bad `kind`, a too long `q`, a path that is no uuid). Only the
  // field is kept: the schema's message is English, and the page speaks the visitor's language.
  if (ParseResult.isParseError(error)) {
    const path = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.path ?? []
    const field = path.filter((key) => typeof key === "string" && !["path", "urlParams", "payload"].includes(key)).join(".")
    return field === "" ? { status: 400 } : { status: 400, field }
  }
  const status = typeof error === "object" && error !== null && "constructor" in error ? (error.constructor as { readonly status?: unknown }).status : undefined
  // A record the visitor may not act on (a teaching list without its right) reads as not there, not as an outage.
  if (status === 404 || status === 403) return { status: 404 }
  if (status === 400) return { status: 400 }
  if (status === 401) return { status: 401 }
  return { status: 503 }
}

/**
 * The server's client of the service: `@birzha/client` (the same one the browser and any
 * integration use) over `fetch` to `baseUrl`, the host's own listener on the loopback interface
 * (docs/decisions.md, "Web application"). Built once; the per-request cookie rides a FiberRef.
 */
/**
 * `fetch`, with a GET or HEAD that failed before any answer (a kept-alive connection the host
 * closed as the call went out, a connection judged idle after the process was held up) sent once
 * more on a new attempt, as browsers do for an idempotent request. Anything else fails as it came.
 */
export const fetchOnceMore: typeof globalThis.fetch = async (input, init) => {
  try {
    return await globalThis.fetch(input, init)
  } catch (error) {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase()
    if ((method !== "GET" && method !== "HEAD") || init?.signal?.aborted === true) throw error
    return globalThis.fetch(input, init)
  }
}

export const makeServerApi = (
  baseUrl: string,
  http: Layer.Layer<HttpClient.HttpClient> = FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, fetchOnceMore)))
): ServerApi => {
  const withCookie = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      HttpClient.mapRequestEffect(client, (request) =>
        Effect.map(FiberRef.get(requestCookie), (cookie) =>
          cookie === undefined ? request : HttpClientRequest.setHeader(request, "cookie", cookie))))
  ).pipe(Layer.provide(http))
  const client = Effect.runSync(makeBirzhaClient({ baseUrl }).pipe(Effect.provide(withCookie)))
  return {
    run: (program, cookie) =>
      Effect.runPromiseExit(program(client).pipe(Effect.locally(requestCookie, cookie))).then((exit) =>
        Exit.isSuccess(exit) ? Either.right(exit.value) : Either.left(refusalOf(exit.cause))
      )
  }
}
