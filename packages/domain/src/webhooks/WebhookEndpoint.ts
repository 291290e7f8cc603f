import { Schema } from "effect"
import { DateTime, maxChars, meanings, minChars, optionalField, PageLimit, RequestUuid, strict } from "../kernel/Common.js"

/** Bounds of ours (the spec shows no fields of webhook endpoints and deliveries; docs/decisions.md, Webhooks). */
export const webhookLimits = {
  endpointsPerProfile: 20,
  urlLength: 2048,
  descriptionLength: 500,
  typePatterns: 100,
  /** Spec: the old secret keeps signing this long after a rotation. */
  previousSecretHours: 24,
  /** Random bytes of a signing secret (Standard Webhooks: 24 to 64). */
  secretBytes: 32,
  /** Spec: delivery history and request logs are kept 7 days. */
  historyDays: 7,
  /** Bytes of a receiver's answer kept in an attempt. */
  responseExcerptBytes: 1024,
  /** Spec: `current` payloads carry the representation only up to 1 MiB. */
  resourceBytes: 1024 * 1024,
  /** An endpoint whose attempts kept failing, with no 2xx, this long is disabled and its owner told. */
  failingDaysBeforeDisable: 5
} as const

/**
 * Where an endpoint is in the spec's state table. Derived from facts, never set directly:
 * `disabled` (by the service: the receiver answered 410 or kept failing) over `paused` (by the
 * owner) over `prepared` (the URL waits for the owner's approval) over `awaiting_test` (approved,
 * no test answered 2xx yet) over `active`.
 */
export const WebhookState = Schema.Literal("prepared", "awaiting_test", "active", "paused", "disabled")
  .annotations({ identifier: "WebhookState" })
export type WebhookState = typeof WebhookState.Type

/** Spec payload modes: `reference` (objectUuid and status) or `current` (plus the record as read at the attempt). */
export const PayloadMode = Schema.Literal("reference", "current").annotations({ identifier: "WebhookPayloadMode" })
export type PayloadMode = typeof PayloadMode.Type

/** Why the service disabled an endpoint: the receiver answered 410 Gone, or its attempts failed for 5 days. */
export const DisabledReason = Schema.Literal("gone", "failing").annotations({ identifier: "WebhookDisabledReason" })
export type DisabledReason = typeof DisabledReason.Type

export const WebhookUrl = Schema.String.pipe(
  minChars(1),
  maxChars(webhookLimits.urlLength, { message: () => `a webhook URL has at most ${webhookLimits.urlLength} characters` })
).annotations({
  description: "The receiver: an https:// URL of a public host, without credentials or fragment; the owner approves it exactly as stored",
  jsonSchema: { type: "string", format: "uri", maxLength: webhookLimits.urlLength }
})

/** Event types, `*` standing for any characters (`publication.*`, `*`), as `events.list` takes them. */
export const EventTypePatterns = Schema.Array(Schema.String.pipe(Schema.pattern(/^[a-z_.*]{1,100}$/))).pipe(
  Schema.minItems(1),
  Schema.maxItems(webhookLimits.typePatterns)
).annotations({ description: "Event types the endpoint receives; `*` stands for any characters (`publication.*`, `*`)" })

const Description = Schema.String.pipe(maxChars(webhookLimits.descriptionLength))

/** A webhook endpoint as its owner sees it. The signing secret is never part of it. */
export const WebhookEndpoint = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  url: Schema.String,
  description: Schema.String,
  eventTypes: Schema.Array(Schema.String),
  payloadMode: PayloadMode,
  state: WebhookState,
  /** While `prepared`: the page where the owner approves the exact URL. */
  approvalUrl: Schema.optional(Schema.String),
  approvedAt: Schema.optional(DateTime),
  /** When a test delivery to the current URL was answered 2xx. */
  verifiedAt: Schema.optional(DateTime),
  pausedAt: Schema.optional(DateTime),
  disabledAt: Schema.optional(DateTime),
  disabledReason: Schema.optional(DisabledReason),
  /** The first failed attempt since the last 2xx, while attempts keep failing. */
  failingSince: Schema.optional(DateTime),
  secretRotatedAt: Schema.optional(DateTime),
  /** Until then the secret before the last rotation still signs (a second `v1,` signature). */
  previousSecretExpiresAt: Schema.optional(DateTime),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const WebhookEndpointResult = Schema.Struct({ endpoint: WebhookEndpoint })
  .annotations({ identifier: "WebhookEndpointResult" })

/** Create and rotate: the endpoint and its signing secret, shown this once (Standard Webhooks `whsec_…`). */
export const WebhookEndpointWithSecret = Schema.Struct({
  endpoint: WebhookEndpoint,
  secret: Schema.String.annotations({ description: "whsec_ followed by the base64 of 32 random bytes; shown only in this answer" })
}).annotations({ identifier: "WebhookEndpointWithSecret" })

export const WebhookEndpointList = Schema.Struct({ items: Schema.Array(WebhookEndpoint) })
  .annotations({ identifier: "WebhookEndpointList" })

export const WebhookCreate = Schema.Struct({
  requestUuid: RequestUuid,
  url: WebhookUrl,
  eventTypes: EventTypePatterns,
  payloadMode: Schema.optional(PayloadMode),
  description: Schema.optional(Description)
}).annotations({ identifier: "WebhookCreate", ...strict })

/**
 * A partial change at `expectedRevision`. A change of `url`, `eventTypes` or `payloadMode` needs a
 * new approval and a new test (spec); `paused: true` pauses, `paused: false` resumes a paused
 * endpoint or re-enables a disabled one (which then needs a new test).
 */
export const WebhookUpdate = Schema.Struct({
  requestUuid: RequestUuid,
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  url: Schema.optional(WebhookUrl),
  eventTypes: Schema.optional(EventTypePatterns),
  payloadMode: Schema.optional(PayloadMode),
  description: Schema.optional(Description),
  paused: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "WebhookUpdate", ...strict })

/** The owner approves exactly this URL at this revision; anything else changed since is a conflict. */
export const WebhookApprove = Schema.Struct({
  url: WebhookUrl,
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
}).annotations({ identifier: "WebhookApprove", ...strict })

export const WebhookCommand = Schema.Struct({ requestUuid: RequestUuid })
  .annotations({ identifier: "WebhookCommand", ...strict })

export const WebhookRecover = Schema.Struct({
  requestUuid: RequestUuid,
  since: DateTime.annotations({ description: "Re-send every failed or cancelled delivery of the endpoint created at or after this instant" })
}).annotations({ identifier: "WebhookRecover", ...strict })

export const WebhookRecoverResult = Schema.Struct({
  queued: Schema.Int.pipe(Schema.nonNegative())
}).annotations({ identifier: "WebhookRecoverResult" })

/**
 * Where a delivery is: `pending` (queued, waiting for its next attempt), `delivering` (a worker is
 * sending it now), then `succeeded` (answered 2xx), `failed` (retries exhausted, a failed test, or
 * 410) or `cancelled` (the endpoint was paused, disabled, changed or deleted, or the event is no
 * longer visible to the endpoint's profile).
 */
export const DeliveryStatus = Schema.Literal("pending", "delivering", "succeeded", "failed", "cancelled")
  .annotations({ identifier: "WebhookDeliveryStatus" })
export type DeliveryStatus = typeof DeliveryStatus.Type

/** One real HTTP attempt: what was sent where and what came back. A queued entry is not an attempt. */
export const WebhookAttempt = Schema.Struct({
  uuid: Schema.UUID,
  attemptedAt: DateTime,
  durationMs: Schema.Int.pipe(Schema.nonNegative()),
  url: Schema.String,
  /** The receiver's HTTP status; absent when no answer came (timeout, refused connection, SSRF guard). */
  statusCode: Schema.optional(Schema.Int),
  /** The first 1 KiB of the answer's body, as text. */
  responseExcerpt: Schema.String,
  error: Schema.optional(Schema.String),
  succeeded: Schema.Boolean
}).annotations({ identifier: "WebhookAttempt" })
export type WebhookAttempt = typeof WebhookAttempt.Type

export const WebhookDelivery = Schema.Struct({
  uuid: Schema.UUID,
  endpointUuid: Schema.UUID,
  kind: Schema.Literal("event", "test"),
  /** The `webhook-id` header: the event's uuid (for a test, the test message's own uuid). */
  eventUuid: Schema.UUID,
  eventType: Schema.String,
  status: DeliveryStatus,
  attemptCount: Schema.Int.pipe(Schema.nonNegative()),
  nextAttemptAt: Schema.optional(DateTime),
  cancelReason: Schema.optional(Schema.String),
  createdAt: DateTime,
  finishedAt: Schema.optional(DateTime),
  /** Real attempts, oldest first (at most the 100 newest). */
  attempts: Schema.Array(WebhookAttempt)
}).annotations({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

export const WebhookDeliveryResult = Schema.Struct({ delivery: WebhookDelivery })
  .annotations({ identifier: "WebhookDeliveryResult" })

export const WebhookDeliveryPage = Schema.Struct({
  items: Schema.Array(WebhookDelivery),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "WebhookDeliveryPage" })

export const WebhookDeliveryQuery = Schema.Struct({
  status: Schema.optional(DeliveryStatus),
  cursor: optionalField(Schema.String.pipe(maxChars(200)), meanings.cursor),
  limit: Schema.optional(PageLimit).annotations({
    description: "Deliveries per page, 1 to 100; 20 when absent"
  })
})
// No identifier: a named query schema is emitted as a $ref and its parameters are lost from OpenAPI.
