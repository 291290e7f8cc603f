import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { InvalidRequest, InvalidState, NotFound, type RequestConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import {
  type AttemptRow,
  attemptsOfDeliveries,
  deleteOldDeliveryHistory,
  type DeliveryRow,
  findDelivery,
  findOwnDelivery,
  insertTestDelivery,
  listEndpointDeliveries,
  requeueFailedEventDeliveries,
  requeueFinishedDelivery
} from "./WebhookDeliveryRepository.js"
import { findEndpointSummary } from "./WebhookEndpointRepository.js"
import { ownEndpoint } from "./WebhookEndpoints.js"
import {
  type DeliveryStatus,
  type WebhookAttempt,
  type WebhookDelivery,
  WebhookDeliveryResult,
  WebhookRecoverResult
} from "./WebhookEndpoint.js"

/** The event type of test deliveries (spec `webhook.test`). */
export const testEventType = "webhook.test"

const attemptView = (row: AttemptRow): WebhookAttempt => ({
  uuid: row.uuid,
  attemptedAt: row.attempted_at,
  durationMs: row.duration_ms,
  url: row.url,
  ...(row.status_code === null ? {} : { statusCode: row.status_code }),
  responseExcerpt: row.response_excerpt,
  ...(row.error === null ? {} : { error: row.error }),
  succeeded: row.succeeded
})

const deliveryView = (row: DeliveryRow, attempts: ReadonlyArray<AttemptRow>): WebhookDelivery => ({
  uuid: row.uuid,
  endpointUuid: row.endpoint_uuid,
  kind: row.kind,
  eventUuid: row.event_uuid,
  eventType: row.event_type,
  status: row.status,
  attemptCount: row.attempt_count,
  ...(row.next_attempt_at === null || (row.status !== "pending" && row.status !== "delivering") ? {} : { nextAttemptAt: row.next_attempt_at }),
  // A delivery cancelled while its attempt is out keeps its reason until the attempt is recorded.
  ...(row.cancel_reason === null || row.status !== "cancelled" ? {} : { cancelReason: row.cancel_reason }),
  createdAt: row.created_at,
  ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
  attempts: attempts.map(attemptView)
})

/** The rows with their real attempts (the 100 newest of each, oldest first). */
const withAttempts = (rows: ReadonlyArray<DeliveryRow>) =>
  Effect.gen(function*() {
    const attempts = yield* attemptsOfDeliveries(rows.map((row) => row.uuid))
    const byDelivery = new Map<string, Array<AttemptRow>>()
    for (const attempt of attempts) {
      const list = byDelivery.get(attempt.delivery_uuid) ?? []
      list.push(attempt)
      byDelivery.set(attempt.delivery_uuid, list)
    }
    return rows.map((row) => deliveryView(row, byDelivery.get(row.uuid) ?? []))
  })

const deliveryByUuid = (uuid: string) =>
  Effect.gen(function*() {
    const row = yield* findDelivery(uuid)
    if (Option.isNone(row)) return yield* Effect.dieMessage("webhook delivery vanished inside its transaction")
    const [delivery] = yield* withAttempts([row.value])
    return delivery!
  })

/**
 * `webhooks.test`: queues a `webhook.test` message for the worker. One attempt, no retries: a 2xx
 * makes an `awaiting_test` endpoint `active`; otherwise the owner tests again.
 */
export const sendTestDelivery = (
  actor: Actor,
  uuid: string,
  input: { readonly requestUuid: string }
): Effect.Effect<{ readonly delivery: WebhookDelivery }, NotFound | InvalidState | RequestConflict | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { scope: actor.profileUuid, operationId: "webhooks.test", requestUuid: input.requestUuid, request: { uuid, ...input }, result: WebhookDeliveryResult },
    Effect.gen(function*() {
      const endpoint = yield* ownEndpoint(actor, uuid, { lock: true })
      if (endpoint.state !== "awaiting_test" && endpoint.state !== "active") {
        return yield* new InvalidState({
          message: endpoint.state === "prepared"
            ? "The owner must approve the endpoint's URL first (approvalUrl)"
            : `The endpoint is ${endpoint.state}; resume it first (paused: false)`
        })
      }
      return { delivery: yield* deliveryByUuid(yield* insertTestDelivery(uuid, testEventType, endpoint.config_version)) }
    })
  )

export interface DeliveryQuery {
  readonly status?: DeliveryStatus | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/** A page of an endpoint's deliveries, newest first, with their attempts (no ownership check: callers do it). */
const deliveryPage = (uuid: string, query: DeliveryQuery) =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = yield* decodeCursor(query.cursor)
    const rows = yield* listEndpointDeliveries(uuid, { status: query.status, after, limit: limit + 1 })
    const page = pageOf(rows, limit, (row) => ({ key: row.created_key, uuid: row.uuid }), (row) => row)
    return { items: yield* withAttempts(page.items), ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) }
  })

/** `webhooks.deliveries`: newest first, unfinished ones included, each with its real attempts. */
export const listWebhookDeliveries = (actor: Actor, uuid: string, query: DeliveryQuery) =>
  Effect.gen(function*() {
    yield* ownEndpoint(actor, uuid, { lock: false })
    return yield* deliveryPage(uuid, query)
  })

/**
 * For the operator (`birzha webhooks deliveries`): any endpoint's deliveries, deleted endpoints
 * included, with the endpoint's URL and state; none when there is no such endpoint.
 */
export const operatorDeliveries = (uuid: string, query: DeliveryQuery) =>
  Effect.gen(function*() {
    const endpoint = yield* findEndpointSummary(uuid)
    if (Option.isNone(endpoint)) return Option.none()
    return Option.some({ endpoint: endpoint.value, ...(yield* deliveryPage(uuid, query)) })
  })

/**
 * `webhooks.replay`: sends one finished delivery again (same `webhook-id`), with a fresh retry
 * schedule. Event deliveries need an active endpoint; a test delivery an approved one.
 */
export const replayWebhookDelivery = (
  actor: Actor,
  deliveryUuid: string,
  input: { readonly requestUuid: string }
): Effect.Effect<{ readonly delivery: WebhookDelivery }, NotFound | InvalidState | RequestConflict | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { scope: actor.profileUuid, operationId: "webhooks.replay", requestUuid: input.requestUuid, request: { deliveryUuid, ...input }, result: WebhookDeliveryResult },
    Effect.gen(function*() {
      const own = yield* findOwnDelivery(actor.profileUuid, deliveryUuid)
      if (Option.isNone(own)) return yield* new NotFound({ message: "No such webhook delivery of the acting profile" })
      const found = own.value
      const endpoint = yield* ownEndpoint(actor, found.endpoint_uuid, { lock: true })
      const usable = found.kind === "test" ? endpoint.state === "active" || endpoint.state === "awaiting_test" : endpoint.state === "active"
      if (!usable) return yield* new InvalidState({ message: `The endpoint is ${endpoint.state}; it cannot receive this delivery now` })
      const requeued = yield* requeueFinishedDelivery(deliveryUuid, endpoint.config_version)
      if (requeued === 0) return yield* new InvalidState({ message: "The delivery is still queued or being sent" })
      return { delivery: yield* deliveryByUuid(deliveryUuid) }
    })
  )

/**
 * `webhooks.recover` (ours): sends again every failed or cancelled event delivery of an active
 * endpoint created at or after `since` (Svix "recover"). Returns how many were queued.
 */
export const recoverWebhookDeliveries = (
  actor: Actor,
  uuid: string,
  input: { readonly requestUuid: string; readonly since: Date }
): Effect.Effect<typeof WebhookRecoverResult.Type, NotFound | InvalidState | InvalidRequest | RequestConflict | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (Number.isNaN(input.since.getTime())) return yield* new InvalidRequest({ message: "since: expected a date-time" })
    return yield* idempotent(
      { scope: actor.profileUuid, operationId: "webhooks.recover", requestUuid: input.requestUuid, request: { uuid, ...input }, result: WebhookRecoverResult },
      Effect.gen(function*() {
        const endpoint = yield* ownEndpoint(actor, uuid, { lock: true })
        if (endpoint.state !== "active") {
          return yield* new InvalidState({ message: `The endpoint is ${endpoint.state}; recovery needs an active endpoint` })
        }
        return { queued: yield* requeueFailedEventDeliveries(uuid, input.since, endpoint.config_version) }
      })
    )
  })

/**
 * Retention (spec: delivery history and request logs are kept 7 days, cleaned hourly): attempts
 * older than 7 days, and finished deliveries whose last change is older than that. Unfinished
 * deliveries stay until they finish.
 */
export const cleanWebhookHistory: Effect.Effect<{ readonly attempts: number; readonly deliveries: number }, SqlError, SqlClient.SqlClient> =
  deleteOldDeliveryHistory
