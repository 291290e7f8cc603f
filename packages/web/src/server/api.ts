import { type BirzhaClient, makeBirzhaClient } from "@birzha/client"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Cause, Effect, Either, Exit, FiberRef, Layer, Option, ParseResult } from "effect"

/** The session cookie a page request carried, sent along by the calls made while rendering that page. */
const requestCookie = FiberRef.unsafeMake<string | undefined>(undefined)

/**
 * Why a read failed, for the host's log (a page answered 503 says nothing more to its visitor):
 * never a header, a body or a query string, so no cookie, session, key or code can be in it.
 */
export interface ReadFailure {
  /** The client's operation id (`learning.teaching.get`); the request's method and path when no operation is known. */
  readonly operation: string
  /** `transport`, `answer`, the API's error (`ServiceUnavailable 503`), `defect` or `interrupted`. */
  readonly kind: string
  /** What failed, as short text: `Transport: fetch failed: other side closed (UND_ERR_SOCKET)`, `502 Decode` (an answer not the API's). */
  readonly message: string
}

/** A refused or failed call as the page answers it: 400 (the input, named), 404, or 503 for anything else. */
export interface Refusal {
  /** 401: the call needed a session the request did not carry (a signed-in page sends to sign-in). */
  readonly status: 400 | 401 | 404 | 503
  /** For a 400 the client found before sending: the input's field at fault (`kind`, `q`, `uuid`). */
  readonly field?: string
  /** For a 401 or a 503: what failed, for the host's log. */
  readonly failure?: ReadFailure
}

export interface ServerApi {
  /** Runs calls of the one client; `cookie` (the visitor's session) goes with each of them. */
  readonly run: <A>(
    program: (client: BirzhaClient) => Effect.Effect<A, unknown>,
    cookie?: string
  ) => Promise<Either.Either<A, Refusal>>
}

/** Which operation's call failed with an error (or died with a defect): filled as the calls fail (`named`). */
const operationOf = new WeakMap<object, string>()

const remember = (cause: Cause.Cause<unknown>, operation: string) => {
  for (const error of [...Cause.failures(cause), ...Cause.defects(cause)]) {
    if (typeof error === "object" && error !== null && !operationOf.has(error)) operationOf.set(error, operation)
  }
}

/**
 * The client with each call's failure remembered against its operation id (`client["a.b"]` and
 * `client.a.b` alike). The proxy's target is its own empty object: a group of the client is a
 * read-only property (packages/client-sdk/src/Groups.ts), which a proxy of the client itself could
 * not answer with a proxy of the group.
 */
const named = <C extends object>(client: C, prefix = ""): C => {
  const made = new Map<string, unknown>()
  return new Proxy({} as C, {
    get: (_, key) => {
      const value: unknown = Reflect.get(client, key)
      if (typeof key !== "string" || (typeof value !== "function" && (typeof value !== "object" || value === null))) return value
      const known = made.get(key)
      if (known !== undefined) return known
      const id = `${prefix}${key}`
      const wrapped = typeof value === "function"
        ? (...args: ReadonlyArray<unknown>) =>
          Effect.tapErrorCause(value(...args) as Effect.Effect<unknown, unknown>, (cause) => Effect.sync(() => remember(cause, id)))
        : named(value, `${id}.`)
      made.set(key, wrapped)
      return wrapped
    }
  })
}

const maxMessage = 300

/** Text for the log: a URL's query cut off (it may hold a search or a cursor), one line, short. */
const loggable = (text: string) => {
  const line = text.replace(/(https?:\/\/[^\s?#"']*)[?#][^\s"']*/g, "$1").replace(/\s+/g, " ").trim()
  return line.length > maxMessage ? `${line.slice(0, maxMessage)}…` : line
}

/** An error's message and those of its causes (`fetch failed: other side closed`), as undici nests them. */
const causeChain = (error: unknown): string => {
  const parts: Array<string> = []
  for (let at: unknown = error, depth = 0; at !== undefined && at !== null && depth < 4; depth++) {
    if (!(typeof at === "object" && "message" in at && typeof at.message === "string")) {
      parts.push(String(at))
      break
    }
    const code = "code" in at && typeof at.code === "string" && !at.message.includes(at.code) ? ` (${at.code})` : ""
    if (at.message !== "") parts.push(`${at.message}${code}`)
    at = "cause" in at ? at.cause : undefined
  }
  return parts.join(": ")
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** The operation, else the request's method and path (no query) of an error of the HTTP client. */
const operationNamed = (error: unknown): string => {
  const known = isObject(error) ? operationOf.get(error) : undefined
  if (known !== undefined) return known
  const request = isObject(error) ? error["request"] : undefined
  if (isObject(request) && typeof request["method"] === "string" && typeof request["url"] === "string") {
    return `${request["method"]} ${loggable(request["url"].replace(/^https?:\/\/[^/]*/, ""))}`
  }
  return "unknown"
}

/** What the cause says failed, for the log; its first failure, else its first defect, else an interruption. */
const readFailureOf = (cause: Cause.Cause<unknown>): ReadFailure => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    const tag = isObject(error) && typeof error["_tag"] === "string" ? error["_tag"] : undefined
    // The HTTP client's own errors (@effect/platform's HttpClientError): no answer, or one it could not use.
    if (tag === "RequestError" && isObject(error)) {
      return { operation: operationNamed(error), kind: "transport", message: loggable(`${String(error["reason"])}: ${causeChain(error["cause"])}`) }
    }
    if (tag === "ResponseError" && isObject(error)) {
      const response = isObject(error["response"]) ? error["response"] : {}
      const description = typeof error["description"] === "string" ? ` ${error["description"]}` : ""
      return { operation: operationNamed(error), kind: "answer", message: loggable(`${String(response["status"])} ${String(error["reason"])}${description}`) }
    }
    const status = isObject(error) ? (error.constructor as { readonly status?: unknown }).status : undefined
    return {
      operation: operationNamed(error),
      kind: [tag ?? (isObject(error) ? error.constructor.name : typeof error), typeof status === "number" ? String(status) : ""].join(" ").trim(),
      message: loggable(causeChain(error))
    }
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) return { operation: operationNamed(defect.value), kind: "defect", message: loggable(causeChain(defect.value)) }
  return { operation: "unknown", kind: "interrupted", message: "the read was interrupted" }
}

/** The HTTP status the API's error carries (its class's `status`), if it is one. */
const statusOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "constructor" in error ? (error.constructor as { readonly status?: unknown }).status : undefined

/**
 * A read the service may refuse to this visitor (403 or 404: a review's workspace before its claim)
 * as an `Option`. Any other failure (the service unavailable, a rate limit, an answer not the API's)
 * fails the page as every read does: a page that showed such a read as absent would look like an
 * empty record, and a form on it would save over what the service holds.
 */
export const unlessRefused = <A, E, R>(read: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.catchIf(Effect.asSome(read), (error) => statusOf(error) === 403 || statusOf(error) === 404, () => Effect.succeedNone)

const refusalOf = (cause: Cause.Cause<unknown>): Refusal => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return { status: 503, failure: readFailureOf(cause) }
  const error = failure.value
  // The client checks the input against the operation's schema before sending: a ParseError
  // there is the page's own 400 (a bad `kind`, a too long `q`, a path that is no uuid). Only the
  // field is kept: the schema's message is English, and the page speaks the visitor's language.
  if (ParseResult.isParseError(error)) {
    const path = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.path ?? []
    const field = path.filter((key) => typeof key === "string" && !["path", "urlParams", "payload"].includes(key)).join(".")
    return field === "" ? { status: 400 } : { status: 400, field }
  }
  const status = statusOf(error)
  // A record the visitor may not act on (a teaching list without its right) reads as not there, not as an outage.
  if (status === 404 || status === 403) return { status: 404 }
  if (status === 400) return { status: 400 }
  // A signed-in page sends a 401 to sign-in; a public read answers it 503 (loaders.ts), which the log explains.
  if (status === 401) return { status: 401, failure: readFailureOf(cause) }
  return { status: 503, failure: readFailureOf(cause) }
}

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

/**
 * The server's client of the service: `@birzha/client` (the same one the browser and any
 * integration use) over `fetch` to `baseUrl`, the host's own listener on the loopback interface
 * (docs/web.md, "Web application"). Built once; the per-request cookie rides a FiberRef.
 */
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
  const client = named(Effect.runSync(makeBirzhaClient({ baseUrl }).pipe(Effect.provide(withCookie))))
  return {
    run: (program, cookie) =>
      Effect.runPromiseExit(program(client).pipe(Effect.locally(requestCookie, cookie))).then((exit) =>
        Exit.isSuccess(exit) ? Either.right(exit.value) : Either.left(refusalOf(exit.cause))
      )
  }
}
