import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/**
 * The one wire shape of every error the service answers with: `{"error":{"code","message"}}`.
 * `correlationId` appears only on 500 answers, so an operator can find the logged defect.
 */
export const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    correlationId: Schema.optional(Schema.String)
  })
})
export type ErrorEnvelope = typeof ErrorEnvelope.Type

/** An error class of the domain: a tagged error carrying its HTTP status and stable code. */
export interface ApiErrorClass<Self extends { readonly message: string }> {
  new(props: { readonly message: string }): Self
  readonly status: number
  readonly code: string
}

/**
 * The HTTP encoding of a domain error: the envelope with the class's own literal code, so a
 * client decodes the envelope back into the same typed error (several codes may share a status).
 */
export const wire = <Self extends { readonly message: string }>(
  cls: ApiErrorClass<Self> & Schema.Schema<Self, any, never>
): Schema.Schema<Self, { readonly error: { readonly code: string; readonly message: string } }> =>
  Schema.transform(
    Schema.Struct({ error: Schema.Struct({ code: Schema.Literal(cls.code), message: Schema.String }) }),
    Schema.typeSchema(cls),
    {
      strict: true,
      decode: (envelope) => new cls({ message: envelope.error.message }),
      encode: (error) => ({ error: { code: cls.code, message: error.message } })
    }
  ).annotations({
    ...HttpApiSchema.annotations({ status: cls.status }),
    identifier: cls.code.split("_").map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("") + "Error",
    description: `Error envelope with code ${cls.code}`
  })

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String
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
  message: Schema.String
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
  message: Schema.String
}) {
  static readonly status = 429
  static readonly code = "rate_limited"
}

export class InvalidEmail extends Schema.TaggedError<InvalidEmail>()("InvalidEmail", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_email"
}

/** Wrong, expired, used or exhausted sign-in code: one answer for all, revealing nothing. */
export class InvalidCode extends Schema.TaggedError<InvalidCode>()("InvalidCode", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_code"
}

/** Missing, malformed, expired, superseded or consumed sign-in link: one answer for all. */
export class InvalidLink extends Schema.TaggedError<InvalidLink>()("InvalidLink", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_link"
}

/** Invalid task fields, an unsupported attachment or a malformed task body (spec); nothing is saved. */
export class InvalidTask extends Schema.TaggedError<InvalidTask>()("InvalidTask", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_task"
}

/** A media draft that refers to files which are not ready files of the same profile and purpose; nothing is saved. */
export class InvalidPublication extends Schema.TaggedError<InvalidPublication>()("InvalidPublication", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_publication"
}

/** The record's state does not allow this command now (submit an approved publication, edit a rejected one...). */
export class InvalidState extends Schema.TaggedError<InvalidState>()("InvalidState", {
  message: Schema.String
}) {
  static readonly status = 409
  static readonly code = "invalid_state"
}

/** An events cursor older than 30 days (spec: 410): read the current entities again and start a new cursor. */
export class ResyncRequired extends Schema.TaggedError<ResyncRequired>()("ResyncRequired", {
  message: Schema.String
}) {
  static readonly status = 410
  static readonly code = "resync_required"
}

/** Builds the envelope for answers produced outside a declared operation (router, body limits, defects). */
export const envelope = (
  cls: { readonly code: string },
  message: string,
  correlationId?: string
): ErrorEnvelope => ({
  error: correlationId === undefined
    ? { code: cls.code, message }
    : { code: cls.code, message, correlationId }
})
