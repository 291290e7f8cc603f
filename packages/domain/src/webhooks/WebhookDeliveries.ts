import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { InvalidRequest, InvalidState, NotFound, type RequestConflict } from "../api/ApiError.js"
import type { Actor } from "../api/Authentication.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { ownEndpoint } from "./WebhookEndpoints.js"
import {
  type DeliveryStatus,
  type WebhookAttempt,
  type WebhookDelivery,
  WebhookDeliveryResult,
  webhookLimits,
  WebhookRecoverResult
} from "./WebhookEndpoint.js"

/** The event type of test deliveries (spec `webhook.test`). */
export const testEventType = "webhook.test"

interface DeliveryRow {
  readonly uuid: string
  readonly endpoint_uuid: string
  readonly kind: "event" | "test"
  readonly event_uuid: string
  readonly event_type: string
  readonly status: DeliveryStatus
  readonly attempt_count: number
  readonly next_attempt_at: Date | null
  readonly cancel_reason: string | null
  readonly created_at: Date
  readonly created_key: string
  readonly finished_at: Date | null
}

interface AttemptRow {
  readonly uuid: string
  readonly delivery_uuid: string
  readonly attempted_at: Date
  readonly duration_ms: number
  readonly url: string
  readonly status_code: number | null
  readonly response_excerpt: string
  readonly error: string | null
  readonly succeeded: boolean
}

/** `delivering` is a pending delivery a worker holds a lease on right now. */
const deliveryColumns = `d.uuid, d.endpoint_uuid, d.kind, d.event_uuid, d.event_type,
  CASE WHEN d.status = 'pending' AND d.lease_until >= now() THEN 'delivering' ELSE d.status END AS status,
  d.attempt_count, d.next_attempt_at, d.cancel_reason, d.created_at, d.created_at::text AS created_key, d.finished_at`

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
  ...(row.cancel_reason === null ? {} : { cancelReason: row.cancel_reason }),
  createdAt: row.created_at,
  ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
  attempts: attempts.map(attemptView)
})

/** The rows with their real attempts (the 100 newest of each, oldest first). */
const withAttempts = (rows: ReadonlyArray<DeliveryRow>) =>
  Effect.gen(function*() {
    if (rows.length === 0) return []
    const sql = yield* SqlClient.SqlClient
    const attempts = yield* sql<AttemptRow>`SELECT uuid, delivery_uuid, attempted_at, duration_ms, url, status_code,
        response_excerpt, error, succeeded
      FROM (SELECT a.*, row_number() OVER (PARTITION BY a.delivery_uuid ORDER BY a.attempted_at DESC) AS n
        FROM webhook_attempts a WHERE ${sql.in("a.delivery_uuid", rows.map((row) => row.uuid))}) a
      WHERE a.n <= 100 ORDER BY a.attempted_at, a.uuid`
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
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<DeliveryRow>`SELECT ${sql.literal(deliveryColumns)} FROM webhook_deliveries d WHERE d.uuid = ${uuid}`
    const [delivery] = yield* withAttempts(rows)
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
      const sql = yield* SqlClient.SqlClient
      const endpoint = yield* ownEndpoint(actor, uuid, { lock: true })
      if (endpoint.state !== "awaiting_test" && endpoint.state !== "active") {
        return yield* new InvalidState({
          message: endpoint.state === "prepared"
            ? "The owner must approve the endpoint's URL first (approvalUrl)"
            : `The endpoint is ${endpoint.state}; resume it first (paused: false)`
        })
      }
      const [row] = yield* sql<{ uuid: string }>`INSERT INTO webhook_deliveries
          (endpoint_uuid, kind, event_uuid, event_type, config_version, next_attempt_at)
        VALUES (${uuid}, 'test', ${crypto.randomUUID()}, ${testEventType}, ${endpoint.config_version}, now())
        RETURNING uuid`
      return { delivery: yield* deliveryByUuid(row!.uuid) }
    })
  )

export interface DeliveryQuery {
  readonly status?: DeliveryStatus | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

const statusFilter = (sql: SqlClient.SqlClient, status: DeliveryStatus | undefined) => {
  switch (status) {
    case undefined:
      return sql`TRUE`
    case "pending":
      return sql`d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until < now())`
    case "delivering":
      return sql`d.status = 'pending' AND d.lease_until >= now()`
    default:
      return sql`d.status = ${status}`
  }
}

/** A page of an endpoint's deliveries, newest first, with their attempts (no ownership check: callers do it). */
const deliveryPage = (uuid: string, query: DeliveryQuery) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limit = query.limit ?? 20
    const after = yield* decodeCursor(query.cursor)
    const rows = yield* sql<DeliveryRow>`SELECT ${sql.literal(deliveryColumns)} FROM webhook_deliveries d
      WHERE d.endpoint_uuid = ${uuid} AND ${statusFilter(sql, query.status)}
      ${Option.isSome(after) ? sql`AND (d.created_at, d.uuid) < (${after.value.key}::timestamptz, ${after.value.uuid}::uuid)` : sql``}
      ORDER BY d.created_at DESC, d.uuid DESC LIMIT ${limit + 1}`
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
    const sql = yield* SqlClient.SqlClient
    const [endpoint] = yield* sql<{ url: string; state: string; deleted: boolean }>`SELECT url, state, deleted_at IS NOT NULL AS deleted
      FROM webhook_endpoints WHERE uuid = ${uuid}`
    if (endpoint === undefined) return Option.none()
    return Option.some({ endpoint, ...(yield* deliveryPage(uuid, query)) })
  })

/** Restarts a delivery's retry schedule from an immediate attempt. */
const requeue = (sql: SqlClient.SqlClient, where: ReturnType<SqlClient.SqlClient["and"]>, configVersion: number) =>
  sql<{ uuid: string }>`UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), round_attempts = 0,
      config_version = ${configVersion}, cancel_reason = NULL, finished_at = NULL, lease_until = NULL, lease_token = NULL,
      updated_at = now()
    WHERE ${where} RETURNING d.uuid`

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
      const sql = yield* SqlClient.SqlClient
      const [found] = yield* sql<{ endpoint_uuid: string; kind: "event" | "test"; status: string }>`
        SELECT d.endpoint_uuid, d.kind, d.status FROM webhook_deliveries d
        JOIN webhook_endpoints w ON w.uuid = d.endpoint_uuid AND w.profile_uuid = ${actor.profileUuid} AND w.deleted_at IS NULL
        WHERE d.uuid = ${deliveryUuid}`
      if (found === undefined) return yield* new NotFound({ message: "No such webhook delivery of the acting profile" })
      const endpoint = yield* ownEndpoint(actor, found.endpoint_uuid, { lock: true })
      const usable = found.kind === "test" ? endpoint.state === "active" || endpoint.state === "awaiting_test" : endpoint.state === "active"
      if (!usable) return yield* new InvalidState({ message: `The endpoint is ${endpoint.state}; it cannot receive this delivery now` })
      const requeued = yield* requeue(
        sql,
        sql.and([sql`d.uuid = ${deliveryUuid}`, sql`d.status <> 'pending'`]),
        endpoint.config_version
      )
      if (requeued.length === 0) return yield* new InvalidState({ message: "The delivery is still queued or being sent" })
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
        const sql = yield* SqlClient.SqlClient
        const endpoint = yield* ownEndpoint(actor, uuid, { lock: true })
        if (endpoint.state !== "active") {
          return yield* new InvalidState({ message: `The endpoint is ${endpoint.state}; recovery needs an active endpoint` })
        }
        const requeued = yield* requeue(
          sql,
          sql.and([
            sql`d.endpoint_uuid = ${uuid}`,
            sql`d.kind = 'event'`,
            sql`d.status IN ('failed', 'cancelled')`,
            sql`d.created_at >= ${input.since}`
          ]),
          endpoint.config_version
        )
        return { queued: requeued.length }
      })
    )
  })

/**
 * Retention (spec: delivery history and request logs are kept 7 days, cleaned hourly): attempts
 * older than 7 days, and finished deliveries whose last change is older than that. Unfinished
 * deliveries stay until they finish.
 */
export const cleanWebhookHistory: Effect.Effect<{ readonly attempts: number; readonly deliveries: number }, SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const days = webhookLimits.historyDays
    const [attempts] = yield* sql<{ n: number }>`WITH gone AS (
        DELETE FROM webhook_attempts WHERE attempted_at < now() - make_interval(days => ${days}) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`
    const [deliveries] = yield* sql<{ n: number }>`WITH gone AS (
        DELETE FROM webhook_deliveries
        WHERE status <> 'pending' AND coalesce(finished_at, updated_at) < now() - make_interval(days => ${days}) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`
    return { attempts: attempts?.n ?? 0, deliveries: deliveries?.n ?? 0 }
  })
