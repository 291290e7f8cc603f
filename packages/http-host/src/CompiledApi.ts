import {
  anonymous,
  type Caller,
  type CatalogEntry,
  envelope,
  ForbiddenOrigin,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  sessionCookieName,
  UnsupportedMediaType
} from "@birzha/domain"
import {
  actorForKey,
  answerOfCause,
  authorize,
  type Answer,
  callStartRefs,
  EncodedJson,
  forEachPiece,
  type JsonPiece,
  makeSessionLookup,
  Operations,
  type RawInput,
  ServerSecret,
  spanOfTraceParent,
  StreamedJson,
  tracingOn
} from "@birzha/domain/internal"
import { Cookies } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { type Context, Duration, Effect, Exit, FiberId, FiberRef, FiberRefs, Option, Redacted, Runtime, RuntimeFlags } from "effect"
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http"
import type { AccessLog } from "./AccessLog.js"
import { type BodyLimits, bodyLimitsOf, minBodyBytes } from "./BodyLimits.js"
import { clientAddressOf } from "./HostSettings.js"
import { jsonBody } from "./JsonBody.js"
import { JsonShapeScanner } from "./JsonShape.js"
import { requestIdHeader, requestIdOf } from "./RequestId.js"
import { sharedScheduler } from "./SharedScheduler.js"

/**
 * The catalog served straight from `node:http`: the route table, decoders and encoders are
 * compiled once, and each request runs its operation through `Operations.invoke` on a prebuilt
 * runtime. No handler exists per operation id: what an answer needs beyond its body (status,
 * `Cache-Control`, cookies) comes from the declaration and the operation's facts.
 * Anything that is not a catalog operation (pages, file bytes, MCP, documents) goes to `fallback`.
 */
export interface CompiledApiSettings {
  readonly maxBodyBytes: number
  readonly publicOrigin: string
  readonly trustProxy: boolean
}

interface Route {
  readonly entry: CatalogEntry
  /** Path segments; `undefined` where a parameter stands, named in `names`. */
  readonly segments: ReadonlyArray<string | undefined>
  readonly names: ReadonlyArray<string>
}

export interface RouteMatch {
  readonly entry: CatalogEntry
  readonly path: Record<string, string>
}

/**
 * Longest path parameter, as sent, that names anything: the platform router's own limit for the
 * pages' routes, so a longer one is 404 on every route whatever the method (never 405).
 */
export const maxPathParameterLength = 100

/** A path parameter as the route gets it: percent-decoded, or `undefined` when it names nothing. */
const pathParameter = (raw: string): string | undefined => {
  if (raw === "" || raw.length > maxPathParameterLength) return undefined
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

const splitPath = (path: string) => {
  // A trailing slash names the same route.
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  return trimmed.split("/")
}

/** The catalog's paths compiled once: exact paths in a map, parameterised ones by segment count. */
export const compileRoutes = (
  entries: ReadonlyArray<CatalogEntry>,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }>
) => {
  const exact = new Map<string, CatalogEntry>()
  const byLength = new Map<number, Array<Route>>()
  for (const entry of entries) {
    if (!entry.path.includes("{")) {
      exact.set(`${entry.method} ${entry.path}`, entry)
      continue
    }
    const parts = entry.path.split("/")
    const route: Route = {
      entry,
      segments: parts.map((part) => (part.startsWith("{") ? undefined : part)),
      names: parts.map((part) => (part.startsWith("{") ? part.slice(1, -1) : ""))
    }
    const list = byLength.get(parts.length) ?? []
    list.push(route)
    byLength.set(parts.length, list)
  }
  const others = extra.map(({ method, path }) => {
    const parts = path.split("/")
    return { method, segments: parts.map((part) => (part.startsWith("{") ? undefined : part)), names: parts.map(() => "") }
  })

  const matchPath = (segments: ReadonlyArray<string>, route: Pick<Route, "segments" | "names">): Record<string, string> | undefined => {
    const params: Record<string, string> = {}
    for (let i = 0; i < segments.length; i++) {
      const expected = route.segments[i]
      const actual = segments[i] ?? ""
      if (expected === undefined) {
        const value = pathParameter(actual)
        if (value === undefined) return undefined
        params[route.names[i] ?? ""] = value
      } else if (expected !== actual) return undefined
    }
    return params
  }

  return {
    match: (method: string, path: string): RouteMatch | undefined => {
      const found = exact.get(`${method} ${path}`) ?? (path.endsWith("/") ? exact.get(`${method} ${path.slice(0, -1)}`) : undefined)
      if (found !== undefined) return { entry: found, path: {} }
      const segments = splitPath(path)
      for (const route of byLength.get(segments.length) ?? []) {
        if (route.entry.method !== method) continue
        const params = matchPath(segments, route)
        if (params !== undefined) return { entry: route.entry, path: params }
      }
      return undefined
    },
    /** Whether a route outside the catalog (pages, files, MCP) serves this method and path. */
    isOther: (method: string, path: string) => {
      const segments = splitPath(path)
      return others.some((route) => route.method === method && route.segments.length === segments.length && matchPath(segments, route) !== undefined)
    },
    allowedMethods: (path: string): ReadonlyArray<string> => {
      const methods = new Set<string>()
      const segments = splitPath(path)
      for (const entry of entries) if (!entry.path.includes("{") && splitPath(entry.path).join("/") === segments.join("/")) methods.add(entry.method)
      for (const route of byLength.get(segments.length) ?? []) if (matchPath(segments, route) !== undefined) methods.add(route.entry.method)
      for (const route of others) if (route.segments.length === segments.length && matchPath(segments, route) !== undefined) methods.add(route.method)
      return [...methods].sort()
    }
  }
}

export type CompiledRoutes = ReturnType<typeof compileRoutes>

const jsonHeaders = { "content-type": "application/json", "x-content-type-options": "nosniff" } as const

/** Writes one JSON answer; errors and per-caller answers are never stored by caches. */
export const writeJson = (
  res: ServerResponse,
  status: number,
  body: string | undefined,
  headers: Record<string, string> = {},
  noStore = true
) => {
  const all: Record<string, string> = body === undefined
    ? { "x-content-type-options": "nosniff", ...headers }
    : { ...jsonHeaders, "content-length": String(Buffer.byteLength(body)), ...headers }
  if (noStore) all["cache-control"] = "no-store"
  res.writeHead(status, all)
  res.end(body)
}

export const writeEnvelope = (
  res: ServerResponse,
  cls: { readonly status: number; readonly code: string },
  message: string,
  headers: Record<string, string> = {}
) => writeJson(res, cls.status, JSON.stringify(envelope(cls, message)), headers)

/**
 * The headers of an operation's answer as a flat array, in the order `writeJson` writes them:
 * `length` is the body's size, `undefined` without a body, `"chunked"` for a body written while it
 * is read (no `content-length`: node sends it with chunked transfer coding).
 */
const answerHeaders = (
  length: number | "chunked" | undefined,
  noStore: boolean,
  setCookie: string | undefined,
  retryAfter: string | undefined
): Array<string> => {
  const headers: Array<string> = length === undefined
    ? ["x-content-type-options", "nosniff"]
    : length === "chunked"
    ? ["content-type", "application/json", "x-content-type-options", "nosniff"]
    : ["content-type", "application/json", "x-content-type-options", "nosniff", "content-length", String(length)]
  if (setCookie !== undefined) headers.push("set-cookie", setCookie)
  if (retryAfter !== undefined) headers.push("retry-after", retryAfter)
  if (noStore) headers.push("cache-control", "no-store")
  return headers
}

/** Writes an operation's answer: one `writeHead` with the headers as a flat array and one `end`. The hot path of every operation. */
const writeAnswer = (
  res: ServerResponse,
  status: number,
  body: Buffer | string | undefined,
  noStore: boolean,
  setCookie: string | undefined,
  retryAfter: string | undefined
) => {
  const length = body === undefined ? undefined : typeof body === "string" ? Buffer.byteLength(body) : body.length
  res.writeHead(status, answerHeaders(length, noStore, setCookie, retryAfter))
  res.end(body)
}

const sessionCookieAttributes = { secure: true, httpOnly: true, sameSite: "lax", path: "/" } as const

const sessionCookieHeader = (session: NonNullable<Answer["facts"]["session"]>) =>
  session === "ended"
    ? Cookies.serializeCookie(Cookies.unsafeMakeCookie(sessionCookieName, "", { ...sessionCookieAttributes, expires: new Date(0), maxAge: Duration.zero }))
    : Cookies.serializeCookie(Cookies.unsafeMakeCookie(sessionCookieName, session.token, {
      ...sessionCookieAttributes,
      expires: session.expiresAt,
      maxAge: Duration.millis(Math.max(0, session.expiresAt.getTime() - Date.now()))
    }))

const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const at = part.indexOf("=")
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

const bearerOf = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const match = /^bearer\s+(\S*)\s*$/i.exec(header)
  return match === null ? undefined : match[1]
}

/** The query string as the framework reads it: one string per name, an array when repeated. */
const queryOf = (search: string): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = {}
  if (search === "") return out
  for (const [name, value] of new URLSearchParams(search)) {
    const existing = out[name]
    out[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value]
  }
  return out
}

/** Whether the request carries a body: a length above zero, or one sent in chunks. */
const hasBody = (req: IncomingMessage) => {
  const length = req.headers["content-length"]
  return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined
}

/** `application/json` (any parameters) or a `+json` type: what a JSON operation reads. */
const jsonMediaType = /^\s*application\/([\w.-]+\+)?json\s*(;|$)/i

/**
 * A JSON operation's body in another media type, or with none, is 415: such a request is what a
 * page of another site can send without asking (a form, `fetch` in `no-cors` mode: `text/plain`,
 * `application/x-www-form-urlencoded`, `multipart/form-data`), and no operation reads anything
 * but JSON (file bytes go to their upload address).
 */
const refusesMediaType = (req: IncomingMessage) => hasBody(req) && !jsonMediaType.test(req.headers["content-type"] ?? "")

const forbiddenOrigin: Answer = {
  status: ForbiddenOrigin.status,
  body: envelope(ForbiddenOrigin, "A change made with the session cookie must come from the service's own pages (Origin)"),
  facts: {},
  errorCode: ForbiddenOrigin.code
}

/**
 * Cross-site request forgery: a change (any method but GET and HEAD) the session cookie
 * authenticates must carry `Origin` equal to the public origin, as sign-in does (spec). Browsers
 * send `Origin` on every such request, so an absent one is refused too (`Sec-Fetch-Site` would
 * add nothing: a browser that sends it also sends `Origin`). Bearer keys are not ambient
 * credentials and need no `Origin`.
 */
const isCrossSiteChange = (req: IncomingMessage, caller: Caller, publicOrigin: string) =>
  caller.via === "session" && req.method !== "GET" && req.method !== "HEAD" && req.headers.origin !== publicOrigin

export type BodyRead =
  | { readonly _tag: "Body"; readonly bytes: Buffer }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Refused"; readonly problem: string }
  | { readonly _tag: "Aborted" }

/**
 * Reads the body while counting it: past the operation's byte bound it stops keeping bytes and
 * answers `TooLarge`; past a structural limit (`JsonShape.ts`) it answers `Refused`, both as soon
 * as the chunk that passes it arrives (a chunked body is not read to its end first).
 */
export const readBody = (req: IncomingMessage, limits: BodyLimits): Promise<BodyRead> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    const scanner = new JsonShapeScanner(limits)
    let size = 0
    let done = false
    const finish = (read: BodyRead) => {
      if (done) return
      done = true
      chunks.length = 0
      resolve(read)
    }
    req.on("data", (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > limits.maxBytes) return finish({ _tag: "TooLarge" })
      const problem = scanner.feed(chunk)
      if (problem !== undefined) return finish({ _tag: "Refused", problem })
      chunks.push(chunk)
    })
    req.on("end", () => finish({ _tag: "Body", bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }))
    req.on("error", () => finish({ _tag: "Aborted" }))
    req.on("aborted", () => finish({ _tag: "Aborted" }))
  })

/** How long, and how much of a refused body, is still read and dropped after the answer (twice the host's body limit). */
const lingerMs = 5_000

/**
 * Answers a request whose body will not be read (413, or any refusal of an `Expect: 100-continue`
 * request) and closes its connection without losing the answer. Node ends a `Connection: close`
 * response by destroying the socket as soon as the answer is flushed; the client's unread bytes
 * then make the kernel send a reset, which reaches a client still sending its body before the
 * answer does (half of the tries at full speed). So the answer is written on the socket itself,
 * the socket is half-closed, and what the client still sends is read and dropped until it closes,
 * for at most `lingerMs` and `maxDrainBytes`.
 */
export const answerAndClose = (req: IncomingMessage, res: ServerResponse, status: number, body: string, maxDrainBytes: number) => {
  const socket = req.socket
  if (res.socket !== socket || res.headersSent || !socket.writable) {
    // Another answer on this connection is still being written (pipelining): node keeps the order.
    if (!res.headersSent) writeJson(res, status, body, { connection: "close" })
    req.resume()
    return
  }
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\n` +
      (requestIdOf(req) === undefined ? "" : `${requestIdHeader}: ${requestIdOf(req)}\r\n`) +
      `cache-control: no-store\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  )
  let drained = 0
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length
    if (drained > maxDrainBytes) socket.destroy()
  })
  req.resume()
  const timer = setTimeout(() => socket.destroy(), lingerMs)
  timer.unref()
  socket.once("close", () => clearTimeout(timer))
}

/**
 * Answers through `res` while the client may still be sending a body the answer does not need
 * (the platform router's routes, whose answer node writes): the connection stays open, and node
 * reads and drops the rest of the body before the next request, for at most `maxDrainBytes` or
 * `lingerMs`; past either the socket closes. The client reads the answer once it has sent its body.
 */
export const answerAndDrain = (
  req: IncomingMessage,
  res: ServerResponse,
  cls: { readonly status: number; readonly code: string },
  message: string,
  maxDrainBytes: number
) => {
  if (!res.headersSent) writeEnvelope(res, cls, message)
  if (req.complete) return
  let drained = 0
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length
    if (drained > maxDrainBytes) req.socket.destroy()
  })
  req.resume()
  const timer = setTimeout(() => req.socket.destroy(), lingerMs)
  timer.unref()
  req.once("end", () => clearTimeout(timer))
  req.socket.once("close", () => clearTimeout(timer))
}

/**
 * The runtime each request's fiber starts on: the registry's services as its context, so no call
 * merges a context; without Effect's fiber metrics (counters and a lifetime histogram per fiber)
 * and with the tracer off (spans of every SQL statement built and dropped) unless the service
 * exports traces (`tracingOn`, kernel/Tracing.ts); its tasks in one shared queue
 * (`sharedScheduler`). Logging is the host's own, unchanged.
 */
const requestRuntime = (host: Runtime.Runtime<never>, context: Context.Context<never>): Runtime.Runtime<never> => {
  const fiberRefs = FiberRefs.updateManyAs(host.fiberRefs, {
    entries: [
      [FiberRef.currentTracerEnabled, [[FiberId.none, FiberRefs.getOrDefault(host.fiberRefs, tracingOn)]]],
      [FiberRef.currentScheduler, [[FiberId.none, sharedScheduler()]]]
    ]
  })
  return Runtime.make({ context, fiberRefs, runtimeFlags: RuntimeFlags.disable(host.runtimeFlags, RuntimeFlags.RuntimeMetrics) })
}

/**
 * The request as the trace's server span (`POST /api/v1/…` by its declared route), continuing a
 * W3C `traceparent` the client sent; the operation's own span (`Operations.invoke`) and the
 * credential lookups are its children. Attributes are the route and status, never the URL's query.
 */
const withRequestSpan = (req: IncomingMessage, entry: CatalogEntry, program: Effect.Effect<Answer>, requestId: string | undefined) => {
  const given = req.headers["traceparent"]
  const parent = spanOfTraceParent(typeof given === "string" ? given : undefined)
  return program.pipe(
    Effect.tap((answer) => Effect.annotateCurrentSpan("http.response.status_code", answer.status)),
    Effect.withSpan(`${entry.method} ${entry.path}`, {
      kind: "server",
      attributes: {
        "http.request.method": entry.method,
        "http.route": entry.path,
        "birzha.operation": entry.id,
        ...(requestId === undefined ? {} : { "birzha.request_id": requestId })
      },
      ...(parent === undefined ? { root: true } : { parent })
    })
  )
}

/**
 * Builds the request listener. `fallback` serves everything outside the catalog.
 */
export const makeCompiledApi = (settings: CompiledApiSettings, extraRoutes: ReadonlyArray<{ readonly method: string; readonly path: string }>, accessLog: AccessLog) =>
  Effect.gen(function*() {
    const operations = yield* Operations
    const lookupSession = yield* makeSessionLookup
    const keyServices = yield* Effect.context<SqlClient.SqlClient | ServerSecret>()
    const hostRuntime = yield* Effect.runtime<never>()
    const runtime = requestRuntime(hostRuntime, operations.context)
    const tracing = FiberRefs.getOrDefault(hostRuntime.fiberRefs, tracingOn)
    const routes = compileRoutes([...operations.entries.values()], extraRoutes)
    const { maxBodyBytes, publicOrigin } = settings
    // Each operation's body bound and structural limits, from its declared body schema (BodyLimits.ts).
    const bodyLimits = new Map<string, BodyLimits>()
    for (const entry of operations.entries.values()) {
      if (Option.isSome(entry.schemas.payload)) bodyLimits.set(entry.id, bodyLimitsOf(entry.schemas.payload.value, maxBodyBytes))
    }

    const lookupKey = (token: string, via: "key" | "mcp") => Effect.provide(actorForKey(Redacted.make(token), via), keyServices)

    /**
     * Who calls, from the cookie and the bearer key. An operation that needs a caller tries the key
     * first (its refusal is answered when no valid session rescues it); a public one is anonymous
     * unless a usable session or key came along (never 401 or 403 for a public read).
     */
    const lookUpCaller = (entry: CatalogEntry, cookie: string | undefined, bearer: string | undefined): Effect.Effect<Caller, unknown> =>
      Effect.gen(function*() {
        const session = cookie === undefined || cookie === "" ? undefined : Option.getOrUndefined(yield* lookupSession(Redacted.make(cookie)))
        if (entry.access === "public") {
          if (session !== undefined) return session
          if (bearer === undefined || bearer === "") return anonymous
          const key = Option.getOrUndefined(yield* lookupKey(bearer, "key"))
          return key !== undefined && key.httpEnabled ? key : anonymous
        }
        if (bearer !== undefined && bearer !== "") {
          const key = Option.getOrUndefined(yield* lookupKey(bearer, "key"))
          if (key !== undefined) {
            const allowed = yield* Effect.either(authorize(entry, key, false))
            // A refused key falls through to a valid session sent with it.
            if (allowed._tag === "Right" || session === undefined) return key
          }
        }
        return session ?? anonymous
      })

    /**
     * `lookUpCaller` without an effect where none is needed: no credential is anonymous, and a
     * cookie alone is its session or anonymous (for public and authenticated operations alike).
     */
    const callerFor = (entry: CatalogEntry, req: IncomingMessage): Caller | Effect.Effect<Caller, unknown> => {
      const cookie = cookieValue(req.headers.cookie, sessionCookieName)
      const bearer = bearerOf(req.headers.authorization)
      const hasCookie = cookie !== undefined && cookie !== ""
      if (bearer === undefined || bearer === "") {
        if (!hasCookie) return anonymous
        return Effect.map(lookupSession(Redacted.make(cookie)), (session) => Option.getOrElse(session, (): Caller => anonymous))
      }
      return lookUpCaller(entry, cookie, bearer)
    }

    /**
     * Writes an answer read while it is sent (`StreamedJson`, the catalog): the headers with the
     * first piece, each next piece once the socket has written the one before, so the process holds
     * about one page per reader whatever the document's size. A failure before the first piece is
     * answered like any failure (the envelope); after it the connection is destroyed, so the client
     * sees a broken answer, never a short one that looks complete. A client that leaves stops the reading.
     */
    const respondStreamed = (req: IncomingMessage, res: ServerResponse, entry: CatalogEntry, answer: Answer, body: StreamedJson, started: number) => {
      const headers = () =>
        answerHeaders("chunked", entry.noStore, answer.facts.session === undefined ? undefined : sessionCookieHeader(answer.facts.session), undefined)
      // The next piece is read once the socket has written this one (its callback): a piece of
      // bytes may be written over by the next page (`JsonPiece`).
      const write = (piece: JsonPiece) =>
        Effect.async<void>((resume) => {
          if (!res.headersSent) res.writeHead(answer.status, headers())
          res.write(piece, () => resume(Effect.void))
        })
      const requestId = requestIdOf(req)
      const refs = callStartRefs(entry, requestId)
      const logged = () => accessLog.write(req.method ?? "", req.url ?? "", answer.status, started, entry.id, requestId)
      const left = () => {
        if (!res.writableFinished) cancel()
      }
      const cancel = Runtime.runCallback(runtime)(forEachPiece(body, write), {
        updateRefs: refs,
        onExit: (exit) => {
          res.off("close", left)
          if (Exit.isSuccess(exit)) {
            if (!res.headersSent) res.writeHead(answer.status, headers())
            res.end()
            return logged()
          }
          if (Exit.isInterrupted(exit)) return logged()
          Runtime.runCallback(runtime)(answerOfCause(exit.cause, answer.facts, { operationId: entry.id }), {
            updateRefs: refs,
            onExit: (failed) => {
              if (!Exit.isSuccess(failed)) return
              if (!res.headersSent) return respond(req, res, entry, failed.value, started)
              res.destroy()
              logged()
            }
          })
        }
      })
      res.once("close", left)
    }

    const respond = (req: IncomingMessage, res: ServerResponse, entry: CatalogEntry, answer: Answer, started: number): void => {
      // The registry gave the chunks its services (Operations.invoke with `streamed`).
      if (answer.body instanceof StreamedJson) return respondStreamed(req, res, entry, answer, answer.body as StreamedJson, started)
      const { facts, status } = answer
      const body = answer.body === undefined || status === 204
        ? undefined
        : answer.body instanceof EncodedJson ? answer.body.bytes : jsonBody(answer.body)
      writeAnswer(
        res,
        status,
        body,
        entry.noStore || status >= 400,
        facts.session === undefined ? undefined : sessionCookieHeader(facts.session),
        facts.retryAfterSeconds !== undefined && status === 429 ? String(facts.retryAfterSeconds) : undefined
      )
      accessLog.write(req.method ?? "", req.url ?? "", status, started, entry.id, requestIdOf(req))
    }

    const run = (req: IncomingMessage, res: ServerResponse, entry: CatalogEntry, input: RawInput, started: number) => {
      const options = { clientAddress: clientAddressOf(req, settings.trustProxy), streamed: true }
      const invoke = (caller: Caller) =>
        isCrossSiteChange(req, caller, publicOrigin) ? Effect.succeed(forbiddenOrigin) : operations.invoke(entry.id, caller, input, options)
      const caller = callerFor(entry, req)
      const program = Effect.isEffect(caller)
        ? Effect.flatMap(caller, invoke).pipe(
          // A credential lookup that fails (the database) is answered the same way as an operation's failure.
          Effect.catchAllCause((cause) => answerOfCause(cause, {}, { operationId: entry.id }))
        )
        : invoke(caller)
      // Every log line of the call (a defect's, the database's) names the request (RequestId.ts):
      // the fiber starts with it and with its operation (`callStartRefs`).
      const requestId = requestIdOf(req)
      Runtime.runCallback(runtime)(tracing ? withRequestSpan(req, entry, program, requestId) : program, {
        updateRefs: callStartRefs(entry, requestId),
        onExit: (exit) => Exit.isSuccess(exit) && respond(req, res, entry, exit.value, started)
      })
    }

    /**
     * Answers a refusal before the body is read. The connection stays open and node drops the body,
     * unless the client waits for `100 Continue` (it may then send the body or not: the connection
     * cannot be reused) or the refusal is 413 (the body is not worth reading): then it closes.
     */
    const refuseUnread = (
      req: IncomingMessage,
      res: ServerResponse,
      expectsContinue: boolean,
      cls: { readonly status: number; readonly code: string },
      message: string,
      headers: Record<string, string> = {}
    ) => {
      if (expectsContinue || cls.status === PayloadTooLarge.status) {
        answerAndClose(req, res, cls.status, JSON.stringify(envelope(cls, message)), 2 * maxBodyBytes)
      } else {
        writeEnvelope(res, cls, message, headers)
        req.resume()
      }
    }

    /** A refusal once the body is being read: while more of it is still to come, the connection closes as for `refuseUnread`. */
    const refuseRead = (req: IncomingMessage, res: ServerResponse, cls: { readonly status: number; readonly code: string }, message: string) => {
      if (req.complete) writeEnvelope(res, cls, message)
      else answerAndClose(req, res, cls.status, JSON.stringify(envelope(cls, message)), 2 * maxBodyBytes)
    }

    /**
     * Handles a catalog operation; `false` when the request is not one (the caller falls back).
     * `expectsContinue`: the client sent `Expect: 100-continue` and waits (node's `checkContinue`);
     * `100 Continue` is written only once nothing refuses the request before its body.
     */
    return (req: IncomingMessage, res: ServerResponse, expectsContinue = false): boolean => {
      const started = performance.now()
      const url = req.url ?? "/"
      const at = url.indexOf("?")
      const path = at < 0 ? url : url.slice(0, at)
      // HEAD is GET without the body (node writes none for a HEAD request): the same operation,
      // status and headers, as every GET route of the host answers it.
      const method = req.method === "HEAD" || req.method === undefined ? "GET" : req.method
      const match = routes.match(method, path)
      if (match === undefined) {
        if (routes.isOther(method, path)) return false
        const allowed = routes.allowedMethods(path)
        const asked = req.method ?? "GET"
        if (allowed.length > 0) refuseUnread(req, res, expectsContinue, MethodNotAllowed, `${asked} is not allowed on ${path}`, { allow: allowed.join(", ") })
        else refuseUnread(req, res, expectsContinue, NotFound, `No operation at ${asked} ${path}`)
        accessLog.write(asked, url, allowed.length > 0 ? 405 : 404, started, undefined, requestIdOf(req))
        return true
      }
      const { entry } = match
      const limits = bodyLimits.get(entry.id)
      // An operation that takes no body still reads what is sent (and drops it): the least bound.
      const maxBytes = limits?.maxBytes ?? Math.min(minBodyBytes, maxBodyBytes)
      const declared = Number(req.headers["content-length"] ?? "0")
      if (Number.isFinite(declared) && declared > maxBytes) {
        refuseUnread(req, res, expectsContinue, PayloadTooLarge, `The request body exceeds ${maxBytes} bytes, the most ${entry.id} takes`)
        accessLog.write(req.method ?? "GET", url, PayloadTooLarge.status, started, entry.id, requestIdOf(req))
        return true
      }
      if (entry.sameOrigin && req.headers.origin !== publicOrigin) {
        // Before the body is read or anything is looked up: nothing changes for a foreign page.
        refuseUnread(req, res, expectsContinue, ForbiddenOrigin, "This request must come from the service's own pages")
        accessLog.write(req.method ?? "GET", url, ForbiddenOrigin.status, started, entry.id, requestIdOf(req))
        return true
      }
      const query = queryOf(at < 0 ? "" : url.slice(at + 1))
      if (limits === undefined) {
        if (expectsContinue) res.writeContinue()
        // A chunked body it does not need is dropped up to the bound, then the connection closes.
        let dropped = 0
        req.on("data", (chunk: Buffer) => {
          dropped += chunk.length
          if (dropped > maxBytes) req.socket.destroy()
        })
        req.resume()
        run(req, res, entry, { path: match.path, urlParams: query }, started)
        return true
      }
      if (refusesMediaType(req)) {
        refuseUnread(req, res, expectsContinue, UnsupportedMediaType, "Send the request body as JSON (Content-Type: application/json)")
        accessLog.write(req.method ?? "GET", url, UnsupportedMediaType.status, started, entry.id, requestIdOf(req))
        return true
      }
      if (expectsContinue) res.writeContinue()
      const malformed = entry.invalidInput["*"] ?? InvalidRequest
      void readBody(req, limits).then((read) => {
        if (read._tag === "Aborted") return
        if (read._tag === "TooLarge" || read._tag === "Refused") {
          const refusal = read._tag === "TooLarge"
            ? { cls: PayloadTooLarge, message: `The request body exceeds ${maxBytes} bytes, the most ${entry.id} takes` }
            : { cls: malformed, message: `The request body is refused before parsing: ${read.problem}` }
          refuseRead(req, res, refusal.cls, refusal.message)
          accessLog.write(req.method ?? "GET", url, refusal.cls.status, started, entry.id, requestIdOf(req))
          return
        }
        let payload: unknown
        try {
          payload = JSON.parse(read.bytes.toString("utf8"))
        } catch {
          writeEnvelope(res, malformed, "The request body is not valid JSON")
          accessLog.write(req.method ?? "GET", url, malformed.status, started, entry.id, requestIdOf(req))
          return
        }
        run(req, res, entry, { path: match.path, urlParams: query, payload }, started)
      })
      return true
    }
  })

