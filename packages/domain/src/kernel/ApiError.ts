import { HttpApiSchema } from "@effect/platform"
import { Schema, Struct } from "effect"

/**
 * The optional members an error may carry beside `code` and `message`, so a client can act on a
 * refusal without parsing its text (as Stripe's `param` or RFC 9457's extension members do). The
 * vocabulary is fixed: an error class picks its members from here (`details`), never its own, and
 * a member appears only when the raise site knows it. A refusal about a record the caller cannot
 * read says nothing of it: a 404 stays bare.
 */
export const ErrorDetailFields = {
  resource: Schema.optional(Schema.String.annotations({
    description: "The kind of record the refusal is about (task, deal, enrollment, submission...)"
  })),
  uuid: Schema.optional(Schema.String.annotations({ description: "That record's uuid (only of a record the caller may read)" })),
  state: Schema.optional(Schema.String.annotations({ description: "The record's current state" })),
  allowed: Schema.optional(Schema.Array(Schema.String).annotations({
    description: "The states in which the refused operation is allowed (empty: in none, for this caller)"
  })),
  revision: Schema.optional(Schema.Int.annotations({ description: "The record's current revision: read it again, then retry with it" })),
  field: Schema.optional(Schema.String.annotations({
    description: "The input member that failed, as a dotted path within the body, query or path parameters (`files.0.name`)"
  })),
  rule: Schema.optional(Schema.String.annotations({
    description: "The rule the value broke: `required`, `not allowed`, a JSON Schema keyword and its value (`maxLength 160`), `type string`, `one of a, b`"
  })),
  operation: Schema.optional(Schema.String.annotations({ description: "The operation id whose policy refused the call" })),
  scopes: Schema.optional(Schema.Array(Schema.String).annotations({ description: "The scopes of which a key must hold one" })),
  limit: Schema.optional(Schema.Int.annotations({ description: "How many uses the limit allows per window" })),
  windowSeconds: Schema.optional(Schema.Int.annotations({ description: "The limit's window, in seconds" })),
  retryAfterSeconds: Schema.optional(Schema.Int.annotations({ description: "Seconds until a retry can succeed (the `Retry-After` header's value)" }))
}
export type ErrorDetailName = keyof typeof ErrorDetailFields
export const errorDetailNames = Object.keys(ErrorDetailFields) as ReadonlyArray<ErrorDetailName>

/** Some members of the vocabulary, for an error class's fields. */
export const details = <const Names extends ReadonlyArray<ErrorDetailName>>(...names: Names) => Struct.pick(ErrorDetailFields, ...names)

/** The members of each kind of refusal (one list, so every class of a kind says the same). */
export const stateDetails = details("resource", "uuid", "state", "allowed")
export const inputDetails = details("field", "rule")
export const limitDetails = details("limit", "windowSeconds", "retryAfterSeconds")
export const policyDetails = details("operation", "scopes")

/**
 * The one wire shape of every error the service answers with: `{"error":{"code","message"}}`, and
 * any of the optional members of `ErrorDetailFields` that explain it.
 * `correlationId` appears only on 500 answers, so an operator can find the logged defect.
 */
export const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    correlationId: Schema.optional(Schema.String),
    ...ErrorDetailFields
  })
}).annotations({ identifier: "ErrorEnvelope", description: "Every error answer: code and message, and the optional members that explain it" })
export type ErrorEnvelope = typeof ErrorEnvelope.Type
export type ErrorDetails = Omit<ErrorEnvelope["error"], "code" | "message" | "correlationId">

/** The members of the vocabulary an error value carries (those set on it). */
export const detailsOf = (error: unknown): ErrorDetails => {
  const found: Record<string, unknown> = {}
  if (typeof error !== "object" || error === null) return found
  for (const name of errorDetailNames) {
    const value: unknown = Reflect.get(error, name)
    if (value !== undefined) found[name] = value
  }
  return found
}

/** An error class of the domain: a tagged error carrying its HTTP status and stable code. */
export interface ApiErrorClass<Self extends { readonly message: string }> {
  new(props: { readonly message: string }): Self
  readonly status: number
  readonly code: string
  /** The class's schema fields: `_tag`, `message` and its members of `ErrorDetailFields`. */
  readonly fields: Schema.Struct.Fields
}

/**
 * One wire schema per class, shared by every endpoint that declares the class: the catalog names
 * the common ones (`NotFound`, `RequestConflict`, `InvalidState`) hundreds of times, and building
 * each anew was about a quarter of loading the declaration (the hosts' start, every page that loads
 * the browser's client). Schemas are immutable values, so one instance serves every union.
 */
const wired = new WeakMap<object, Schema.Schema.Any>()

/**
 * The HTTP encoding of a domain error: the envelope with the class's own literal code and its own
 * members of the vocabulary, so a client decodes the envelope back into the same typed error with
 * the same fields (several codes may share a status).
 */
export const wire = <Self extends { readonly message: string }>(
  cls: ApiErrorClass<Self> & Schema.Schema<Self, any, never>
): Schema.Schema<Self, { readonly error: { readonly code: string; readonly message: string } }> => {
  const made = wired.get(cls)
  if (made !== undefined) return made as Schema.Schema<Self, { readonly error: { readonly code: string; readonly message: string } }>
  const schema = wireOf(cls)
  wired.set(cls, schema)
  return schema
}

const wireOf = <Self extends { readonly message: string }>(
  cls: ApiErrorClass<Self> & Schema.Schema<Self, any, never>
): Schema.Schema<Self, { readonly error: { readonly code: string; readonly message: string } }> => {
  const { _tag: _, message: __, ...members } = cls.fields
  const construct = cls as unknown as new(props: { readonly message: string } & ErrorDetails) => Self
  return Schema.transform(
    Schema.Struct({ error: Schema.Struct({ code: Schema.Literal(cls.code), message: Schema.String, ...members }) }),
    Schema.typeSchema(cls),
    {
      strict: false,
      decode: (envelope) => {
        const { code: _, ...props } = envelope.error as { readonly code: string; readonly message: string } & ErrorDetails
        return new construct(props)
      },
      encode: (error) => ({ error: { code: cls.code, message: error.message, ...detailsOf(error) } })
    }
  ).annotations({
    ...HttpApiSchema.annotations({ status: cls.status }),
    identifier: cls.code.split("_").map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("") + "Error",
    description: `Error envelope with code ${cls.code}`
  })
}

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  ...inputDetails
}) {
  static readonly status = 400
  static readonly code = "invalid_request"
}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}) {
  static readonly status = 404
  static readonly code = "not_found"
}

export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  message: Schema.String
}) {
  static readonly status = 405
  static readonly code = "method_not_allowed"
}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String
}) {
  static readonly status = 413
  static readonly code = "payload_too_large"
}

/** A JSON operation's body sent as another media type (or with none): only `application/json` is read. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  message: Schema.String
}) {
  static readonly status = 415
  static readonly code = "unsupported_media_type"
}

/** The request line and headers, or the whole request, did not arrive in time (a slow or stalled client). */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  message: Schema.String
}) {
  static readonly status = 408
  static readonly code = "request_timeout"
}

/** The request line and headers exceed what the server reads (64 KiB). */
export class HeadersTooLarge extends Schema.TaggedError<HeadersTooLarge>()("HeadersTooLarge", {
  message: Schema.String
}) {
  static readonly status = 431
  static readonly code = "headers_too_large"
}

export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", {
  message: Schema.String
}) {
  static readonly status = 500
  static readonly code = "internal_error"
}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.String
}) {
  static readonly status = 503
  static readonly code = "unavailable"
}

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", {
  message: Schema.String
}) {
  static readonly status = 503
  static readonly code = "not_ready"
}

/** A stale `expectedRevision`: the caller must re-read the entity; nothing was changed. */
export class RevisionConflict extends Schema.TaggedError<RevisionConflict>()("RevisionConflict", {
  message: Schema.String,
  ...details("resource", "uuid", "revision")
}) {
  static readonly status = 409
  static readonly code = "revision_conflict"
}

/** The same `requestUuid` arrived with a different request body: a different command reused the key. */
export class RequestConflict extends Schema.TaggedError<RequestConflict>()("RequestConflict", {
  message: Schema.String
}) {
  static readonly status = 409
  static readonly code = "request_conflict"
}

/** No usable session or key: absent, expired, revoked, or its account or profile is deleted. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: Schema.String
}) {
  static readonly status = 401
  static readonly code = "unauthenticated"
}

/** Authenticated, but not allowed to do this. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {
  static readonly status = 403
  static readonly code = "forbidden"
}

/** A sign-in request whose `Origin` is not exactly `BIRZHA_PUBLIC_ORIGIN`; nothing was changed. */
export class ForbiddenOrigin extends Schema.TaggedError<ForbiddenOrigin>()("ForbiddenOrigin", {
  message: Schema.String
}) {
  static readonly status = 403
  static readonly code = "forbidden_origin"
}

/** The thing existed and is gone for good (a deleted account's sign-in link). */
export class Gone extends Schema.TaggedError<Gone>()("Gone", {
  message: Schema.String
}) {
  static readonly status = 410
  static readonly code = "gone"
}

/** A limit was reached; the answer carries `Retry-After` with the real remaining wait in seconds. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String,
  ...limitDetails
}) {
  static readonly status = 429
  static readonly code = "rate_limited"
}

export class InvalidEmail extends Schema.TaggedError<InvalidEmail>()("InvalidEmail", {
  message: Schema.String,
  ...inputDetails
}) {
  static readonly status = 400
  static readonly code = "invalid_email"
}

/** Wrong, expired, used or exhausted sign-in code: one answer for all, revealing nothing. */
export class InvalidCode extends Schema.TaggedError<InvalidCode>()("InvalidCode", {
  message: Schema.String,
  ...inputDetails
}) {
  static readonly status = 400
  static readonly code = "invalid_code"
}

/** Missing, malformed, expired, superseded or consumed sign-in link: one answer for all. */
export class InvalidLink extends Schema.TaggedError<InvalidLink>()("InvalidLink", {
  message: Schema.String,
  ...inputDetails
}) {
  static readonly status = 400
  static readonly code = "invalid_link"
}

/** Invalid task fields, an unsupported attachment or a malformed task body (spec); nothing is saved. */
export class InvalidTask extends Schema.TaggedError<InvalidTask>()("InvalidTask", {
  message: Schema.String,
  ...inputDetails
}) {
  static readonly status = 400
  static readonly code = "invalid_task"
}

/** A media draft that refers to files which are not ready files of the same profile and purpose; nothing is saved. */
export class InvalidPublication extends Schema.TaggedError<InvalidPublication>()("InvalidPublication", {
  message: Schema.String,
  ...inputDetails
}) {
  static readonly status = 400
  static readonly code = "invalid_publication"
}

/** The record's state does not allow this command now (submit an approved publication, edit a rejected one...). */
export class InvalidState extends Schema.TaggedError<InvalidState>()("InvalidState", {
  message: Schema.String,
  ...stateDetails
}) {
  static readonly status = 409
  static readonly code = "invalid_state"
}

/** What a refused state change says about its record: which one, in which state, and the states that allow the operation. */
export interface StateRefusal {
  /** The record's kind in snake_case (`task`, `deal`, `email_invitation`). */
  readonly resource: string
  readonly uuid?: string
  readonly state: string
  readonly allowed: ReadonlyArray<string>
  readonly operation: string
  /** The message, when the raise site says it better than the default. */
  readonly message?: string
}

/**
 * 409 `invalid_state` with its members, the one way every state machine refuses a move it does
 * not list (learning's `transitionTo`, the relations engine, the enrollment and submission
 * machines, publications): only ever about a record the caller may read.
 */
export const stateRefusal = (refusal: StateRefusal): InvalidState => {
  const allowed = [...new Set(refusal.allowed)]
  const article = /^[aeiou]/.test(refusal.state) ? "an" : "a"
  return new InvalidState({
    message: refusal.message ??
      `${refusal.operation} is not allowed on ${article} ${refusal.state} ${refusal.resource.replaceAll("_", " ")}` +
        (allowed.length > 0 ? `; it needs ${allowed.join(" or ")}` : ""),
    resource: refusal.resource,
    ...(refusal.uuid === undefined ? {} : { uuid: refusal.uuid }),
    state: refusal.state,
    allowed
  })
}

/** An events cursor older than 30 days (spec: 410): read the current entities again and start a new cursor. */
export class ResyncRequired extends Schema.TaggedError<ResyncRequired>()("ResyncRequired", {
  message: Schema.String
}) {
  static readonly status = 410
  static readonly code = "resync_required"
}

/**
 * Builds the envelope: for answers produced outside a declared operation (router, body limits,
 * defects), and for a domain error with the members it carries (`detailsOf`).
 */
export const envelope = (
  cls: { readonly code: string },
  message: string,
  correlationId?: string,
  members: ErrorDetails = {}
): ErrorEnvelope => ({
  error: correlationId === undefined
    ? { code: cls.code, message, ...members }
    : { code: cls.code, message, correlationId, ...members }
})
