import {
  type CatalogEntry,
  envelope,
  ForbiddenOrigin,
  InternalError,
  InvalidRequest,
  MethodNotAllowed,
  PayloadTooLarge,
  NotFound,
  ServiceUnavailable
} from "@birzha/domain"
import {
  HttpApiBuilder,
  HttpApiError,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { RouteTable } from "./RouteTable.js"

const describeIssues = (error: HttpApiError.HttpApiDecodeError): string => {
  const issues = error.issues.slice(0, 5).map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "request"
    return `${where}: ${issue.message}`
  })
  return issues.length > 0 ? issues.join("; ") : "The request does not match the operation's schema"
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { "cache-control": "no-store", ...headers } })

const isBodyLimit = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

const isDatabaseFailure = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError"

type Outcome =
  | { readonly _tag: "Respond"; readonly response: HttpServerResponse.HttpServerResponse }
  | { readonly _tag: "Refail"; readonly error: unknown }

/**
 * The API-level middleware: it wraps the router inside the app, before the framework encodes
 * declared errors, so whatever a declared error does not cover still answers with the one
 * envelope and never a stack or SQL:
 * - unknown route → 404, known path with another method → 405 with `Allow`;
 * - unreadable body → 400 `invalid_request`, oversized body → 413 (declared length checked first),
 *   a multipart body (no operation takes one) → 400 before it is parsed;
 * - a request failing its schema → the declared `invalid_request` error (not the framework's shape);
 * - a database failure → the declared 503 `unavailable`;
 * - a defect → 500 with a correlation id that the log line carries too.
 * Declared domain errors pass through untouched to be encoded by their own schemas.
 */
export const errorEnvelope = (routes: RouteTable, options: { readonly maxBodyBytes: number; readonly publicOrigin: string }) =>
  HttpApiBuilder.middleware((app) =>
    Effect.gen(function*() {
      const { maxBodyBytes, publicOrigin } = options
      const request = yield* HttpServerRequest.HttpServerRequest
      const declared = Number(request.headers["content-length"] ?? "0")
      if (Number.isFinite(declared) && declared > maxBodyBytes) {
        return tooLarge(maxBodyBytes)
      }
      const path = new URL(request.url, "http://host").pathname
      const operation = routes.operation(request.method, path)
      if (operation?.sameOrigin === true && request.headers["origin"] !== publicOrigin) {
        // Before the body is read or anything is looked up: nothing changes for a foreign page.
        return json(403, envelope(ForbiddenOrigin, "This request must come from the service's own pages"))
      }
      if (operation !== undefined && /^multipart\//i.test(request.headers["content-type"] ?? "")) {
        // No operation takes a multipart form (file bytes go to their upload address): refused before
        // the framework's multipart parser sees it, whose broken-boundary errors are not even typed.
        const malformed = operation.invalidInput["*"] ?? InvalidRequest
        return json(malformed.status, envelope(malformed, "Send the request body as JSON (Content-Type: application/json)"))
      }
      return yield* HttpIncomingMessage.withMaxBodySize(app, Option.some(maxBodyBytes)).pipe(
        Effect.catchAllCause((cause: Cause.Cause<unknown>) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
          const outcome = classify(request, routes, maxBodyBytes, cause, operation)
          if (outcome._tag === "Respond") return Effect.succeed(outcome.response)
          if (outcome.error !== undefined) return Effect.fail(outcome.error)
          const error = Cause.squash(cause)
          if (isDatabaseFailure(error)) {
            return Effect.logWarning("database unavailable", cause).pipe(
              Effect.zipRight(Effect.fail(new ServiceUnavailable({ message: "The service is temporarily unavailable" })))
            )
          }
          const correlationId = randomUUID()
          return Effect.logError("unexpected failure", cause).pipe(
            Effect.annotateLogs({ correlationId, method: request.method, url: request.url }),
            Effect.as(json(500, envelope(InternalError, "An unexpected error occurred", correlationId)))
          )
        }),
        // The middleware type says `never`, but declared errors travel on to be encoded.
        (effect) => effect as Effect.Effect<HttpServerResponse.HttpServerResponse, never, never>
      )
    })
  )

const tooLarge = (maxBodyBytes: number) =>
  json(413, envelope(PayloadTooLarge, `The request body exceeds ${maxBodyBytes} bytes`), { connection: "close" })

/** The top-level `kind` of a JSON body the operation already read (the platform keeps its text), if any. */
const bodyKind = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  // Only a JSON body: any other was not read as text, and reading it here would start a new read.
  if (!(request.headers["content-type"] ?? "").toLowerCase().includes("application/json")) return undefined
  try {
    const body: unknown = JSON.parse(Effect.runSync(request.text))
    return typeof body === "object" && body !== null && "kind" in body && typeof body.kind === "string" ? body.kind : undefined
  } catch {
    return undefined
  }
}

/**
 * The declared error a schema violation answers with: the operation may name its own for a field
 * (invalid_email, invalid_code, ...), for a body kind (`kind=task`: invalid_task) or for any field
 * (`*`); `invalid_request` otherwise. Shared by HTTP and the internal dispatch (MCP, approval commits).
 */
export const inputError = (
  operation: CatalogEntry | undefined,
  error: HttpApiError.HttpApiDecodeError,
  kind: () => string | undefined
) => {
  const fields = new Set(error.issues.map((issue) => String(issue.path[0] ?? "")))
  const invalidInput = operation?.invalidInput ?? {}
  const byKind = Object.keys(invalidInput).some((key) => key.startsWith("kind=")) ? invalidInput[`kind=${kind()}`] : undefined
  const named = [...fields].map((field) => invalidInput[field]).find((cls) => cls !== undefined) ?? byKind ?? invalidInput["*"]
  const message = describeIssues(error)
  return named !== undefined ? new named({ message }) : new InvalidRequest({ message })
}

/** What to do with a failure: answer here, re-fail with a declared error, or (undefined) treat as a defect. */
const classify = (
  request: HttpServerRequest.HttpServerRequest,
  routes: RouteTable,
  maxBodyBytes: number,
  cause: Cause.Cause<unknown>,
  operation: CatalogEntry | undefined
): Outcome | { readonly _tag: "Refail"; readonly error: undefined } => {
  // Framework errors may arrive as failures or as defects (the body reader dies on bad input).
  const failure = Cause.failureOption(cause)
  const error = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  if (error instanceof HttpServerError.RouteNotFound) {
    const path = new URL(request.url, "http://host").pathname
    const allowed = routes.allowedMethods(path)
    return {
      _tag: "Respond",
      response: allowed.length > 0
        ? json(405, envelope(MethodNotAllowed, `${request.method} is not allowed on ${path}`), { allow: allowed.join(", ") })
        : json(404, envelope(NotFound, `No operation at ${request.method} ${path}`))
    }
  }
  if (error instanceof HttpServerError.RequestError) {
    // An operation whose every input error has its own code (tasks: invalid_task) keeps it for a malformed body too.
    const malformed = operation?.invalidInput["*"] ?? InvalidRequest
    return {
      _tag: "Respond",
      response: isBodyLimit(error)
        ? tooLarge(maxBodyBytes)
        : json(malformed.status, envelope(malformed, "The request body is not valid JSON"))
    }
  }
  if (error instanceof HttpApiError.HttpApiDecodeError) {
    return { _tag: "Refail", error: inputError(operation, error, () => bodyKind(request)) }
  }
  if (isDatabaseFailure(error) || Option.isNone(failure)) return { _tag: "Refail", error: undefined }
  return { _tag: "Refail", error }
}
