import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import type { CursorPosition } from "../store/Cursor.js"
import { Int8Text, rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"
import { DeliveryStatus, webhookLimits } from "./WebhookEndpoint.js"
import { EndpointRow, moveEndpointPosition } from "./WebhookEndpointRepository.js"

/**
 * The `webhook_deliveries` and `webhook_attempts` tables (a delivery and its attempts are one
 * aggregate): their rows, read and written only here, by the owner's commands
 * (WebhookDeliveries.ts) and the worker's bookkeeping (WebhookDispatch.ts).
 */
export const DeliveryKind = Schema.Literal("event", "test")
export type DeliveryKind = typeof DeliveryKind.Type

/** A delivery as its owner reads it; `delivering` is a pending delivery a worker holds a lease on right now. */
export const DeliveryRow = Schema.Struct({
  uuid: Schema.String,
  endpoint_uuid: Schema.String,
  kind: DeliveryKind,
  event_uuid: Schema.String,
  event_type: Schema.String,
  status: DeliveryStatus,
  attempt_count: Schema.Int,
  next_attempt_at: Schema.NullOr(Timestamp),
  cancel_reason: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  /** `created_at::text`: the exact keyset position */
  created_key: Schema.String,
  finished_at: Schema.NullOr(Timestamp)
})
export type DeliveryRow = typeof DeliveryRow.Type

const deliveryColumns = selectList(DeliveryRow, "d", {
  status: "CASE WHEN d.status = 'pending' AND d.lease_until >= now() THEN 'delivering' ELSE d.status END",
  created_key: "d.created_at::text"
})
const decodeDeliveries = rowsDecoder(DeliveryRow)

export const AttemptRow = Schema.Struct({
  uuid: Schema.String,
  delivery_uuid: Schema.String,
  attempted_at: Timestamp,
  duration_ms: Schema.Int,
  url: Schema.String,
  status_code: Schema.NullOr(Schema.Int),
  response_excerpt: Schema.String,
  error: Schema.NullOr(Schema.String),
  succeeded: Schema.Boolean
})
export type AttemptRow = typeof AttemptRow.Type

const attemptColumns = selectList(AttemptRow, "a")
const decodeAttempts = rowsDecoder(AttemptRow)

const Uuid = Schema.Struct({ uuid: Schema.String })
const decodeUuids = rowsDecoder(Uuid)

/** Queues a test message, due now. Returns its uuid. */
export const insertTestDelivery = (
  endpointUuid: string,
  eventType: string,
  configVersion: number
): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* decodeUuids(
      yield* sql`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version, next_attempt_at)
        VALUES (${endpointUuid}, 'test', ${crypto.randomUUID()}, ${eventType}, ${configVersion}, now())
        RETURNING uuid`
    )
    return row === undefined ? yield* Effect.dieMessage("webhook_deliveries: the insert returned no row") : row.uuid
  })

export const findDelivery = (uuid: string): Effect.Effect<Option.Option<DeliveryRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* decodeDeliveries(yield* sql`SELECT ${sql.literal(deliveryColumns)} FROM webhook_deliveries d WHERE d.uuid = ${uuid}`)
    return Option.fromNullable(rows[0])
  })

/** Which deliveries a page lists: every one, or those of one status (`delivering`: leased right now). */
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

/** An endpoint's deliveries, newest first, after a keyset position; `limit` rows at most. */
export const listEndpointDeliveries = (
  endpointUuid: string,
  query: { readonly status: DeliveryStatus | undefined; readonly after: Option.Option<CursorPosition>; readonly limit: number }
): Effect.Effect<ReadonlyArray<DeliveryRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeDeliveries(
      yield* sql`SELECT ${sql.literal(deliveryColumns)} FROM webhook_deliveries d
        WHERE d.endpoint_uuid = ${endpointUuid} AND ${statusFilter(sql, query.status)}
        ${
        Option.isSome(query.after)
          ? sql`AND (d.created_at, d.uuid) < (${query.after.value.key}::timestamptz, ${query.after.value.uuid}::uuid)`
          : sql``
      }
        ORDER BY d.created_at DESC, d.uuid DESC LIMIT ${query.limit}`
    )
  })

/** The attempts of deliveries: the 100 newest of each, oldest first. */
export const attemptsOfDeliveries = (
  deliveryUuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<AttemptRow>, SqlError, SqlClient.SqlClient> =>
  deliveryUuids.length === 0 ? Effect.succeed([]) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeAttempts(
      yield* sql`SELECT ${sql.literal(attemptColumns)}
        FROM (SELECT a.*, row_number() OVER (PARTITION BY a.delivery_uuid ORDER BY a.attempted_at DESC) AS n
          FROM webhook_attempts a WHERE ${sql.in("a.delivery_uuid", deliveryUuids)}) a
        WHERE a.n <= 100 ORDER BY a.attempted_at, a.uuid`
    )
  })

const DeliveryTarget = Schema.Struct({ endpoint_uuid: Schema.String, kind: DeliveryKind, status: Schema.String })
const decodeTarget = rowsDecoder(DeliveryTarget)

/** A delivery to a live endpoint of the profile: its endpoint, kind and stored status. */
export const findOwnDelivery = (
  profileUuid: string,
  deliveryUuid: string
): Effect.Effect<Option.Option<typeof DeliveryTarget.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* decodeTarget(
      yield* sql`SELECT d.endpoint_uuid, d.kind, d.status FROM webhook_deliveries d
        JOIN webhook_endpoints w ON w.uuid = d.endpoint_uuid AND w.profile_uuid = ${profileUuid} AND w.deleted_at IS NULL
        WHERE d.uuid = ${deliveryUuid}`
    )
    return Option.fromNullable(rows[0])
  })

/** Restarts the retry schedule of the deliveries `where` selects from an immediate attempt; returns their uuids. */
const requeue = (where: (sql: SqlClient.SqlClient) => ReturnType<SqlClient.SqlClient["and"]>, configVersion: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* decodeUuids(
      yield* sql`UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), round_attempts = 0,
          config_version = ${configVersion}, cancel_reason = NULL, finished_at = NULL, lease_until = NULL, lease_token = NULL,
          updated_at = now()
        WHERE ${where(sql)} RETURNING d.uuid`
    )
    return rows.length
  })

/** Sends a finished delivery again; 0 when it is not finished. */
export const requeueFinishedDelivery = (deliveryUuid: string, configVersion: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  requeue((sql) => sql.and([sql`d.uuid = ${deliveryUuid}`, sql`d.status <> 'pending'`]), configVersion)

/** Sends again every failed or cancelled event delivery of an endpoint created at or after `since`; returns how many. */
export const requeueFailedEventDeliveries = (
  endpointUuid: string,
  since: Date,
  configVersion: number
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  requeue((sql) =>
    sql.and([
      sql`d.endpoint_uuid = ${endpointUuid}`,
      sql`d.kind = 'event'`,
      sql`d.status IN ('failed', 'cancelled')`,
      sql`d.created_at >= ${since}`
    ]), configVersion)

const decodeStatuses = rowsDecoder(Schema.Struct({ status: DeliveryStatus }))

/**
 * Pending attempts of the endpoint end as `cancelled` (spec: pause and disable cancel pending
 * attempts). One a worker is sending right now finishes its request (it cannot be recalled) and is
 * not retried: it keeps its lease and gets the reason, which `recordDeliveryResults` turns into
 * `cancelled` instead of a retry. Writing that row (not only the free ones) matters when the
 * attempt comes back before this transaction commits: the worker's statement then waits for the
 * row and reads the reason, where reading the endpoint would still have shown it active.
 *
 * `skipLocked` is for a worker disabling endpoints while it holds its own batch's deliveries: it
 * leaves the rows another transaction holds (another worker recording its batch) instead of
 * waiting for them, since that worker may be waiting for this one's rows in turn. Such a row is
 * recorded as that worker's statement saw the endpoint. Returns how many were cancelled now.
 */
export const cancelPendingDeliveries = (
  endpointUuid: string,
  reason: string,
  options: { readonly skipLocked?: boolean } = {}
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const free = sql`(lease_until IS NULL OR lease_until < now())`
    const lockable = options.skipLocked === true
      ? sql`AND uuid IN (SELECT uuid FROM webhook_deliveries WHERE endpoint_uuid = ${endpointUuid} AND status = 'pending'
          FOR NO KEY UPDATE SKIP LOCKED)`
      : sql``
    const rows = yield* Effect.flatMap(sql`UPDATE webhook_deliveries SET cancel_reason = ${reason},
        status = CASE WHEN ${free} THEN 'cancelled' ELSE status END,
        next_attempt_at = CASE WHEN ${free} THEN NULL ELSE next_attempt_at END,
        finished_at = CASE WHEN ${free} THEN now() END, updated_at = now()
      WHERE endpoint_uuid = ${endpointUuid} AND status = 'pending' ${lockable}
      RETURNING status`, decodeStatuses)
    return rows.filter((row) => row.status === "cancelled").length
  })

const Gone = Schema.Struct({ n: Schema.Int })
const decodeGone = rowDecoder(Gone)

/**
 * Retention: attempts older than `historyDays`, and finished deliveries whose last change is
 * older than that. Unfinished deliveries stay until they finish.
 */
export const deleteOldDeliveryHistory: Effect.Effect<{ readonly attempts: number; readonly deliveries: number }, SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const days = webhookLimits.historyDays
    const [attempts] = yield* sql`WITH gone AS (
        DELETE FROM webhook_attempts WHERE attempted_at < now() - make_interval(days => ${days}) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`
    const [deliveries] = yield* sql`WITH gone AS (
        DELETE FROM webhook_deliveries
        WHERE status <> 'pending' AND coalesce(finished_at, updated_at) < now() - make_interval(days => ${days}) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`
    return { attempts: (yield* decodeGone(attempts)).n, deliveries: (yield* decodeGone(deliveries)).n }
  })

// ---- the worker's bookkeeping (through WebhookDispatch.ts) ----------------------------------

/** A leased delivery with what sending it needs of its endpoint (read in the same statement). */
export const ClaimedDelivery = Schema.Struct({
  uuid: Schema.String,
  lease_token: Schema.String,
  endpoint_uuid: Schema.String,
  kind: DeliveryKind,
  event_uuid: Schema.String,
  event_type: Schema.String,
  round_attempts: Schema.Int,
  config_version: Schema.Int,
  ...EndpointRow.pick("url", "profile_uuid", "payload_mode", "secret_sealed", "previous_secret_sealed", "previous_secret_expires_at")
    .fields,
  endpoint_config_version: Schema.Int,
  /** The endpoint had a failing streak when this delivery was claimed (a 2xx must end it). */
  failing: Schema.Boolean
})
export type ClaimedDelivery = typeof ClaimedDelivery.Type

const claimedColumns = selectList(ClaimedDelivery, "d", {
  url: "w.url",
  profile_uuid: "w.profile_uuid",
  payload_mode: "w.payload_mode",
  secret_sealed: "w.secret_sealed",
  previous_secret_sealed: "w.previous_secret_sealed",
  previous_secret_expires_at: "w.previous_secret_expires_at",
  endpoint_config_version: "w.config_version",
  failing: "w.failing_since IS NOT NULL"
})
const decodeClaimed = rowsDecoder(ClaimedDelivery)

/** An endpoint whose owner profile and account are live (alias `w`). */
const liveOwner = `EXISTS (SELECT 1 FROM profiles op JOIN accounts oa ON oa.uuid = op.account_uuid
  WHERE op.uuid = w.profile_uuid AND op.deleted_at IS NULL AND oa.deleted_at IS NULL)`

export interface LeaseLimits {
  /** Deliveries this call may lease at most. */
  readonly free: number
  /** Attempts in flight to one endpoint at most, over every worker. */
  readonly perEndpoint: number
  readonly leaseSeconds: number
}

/**
 * Leases due deliveries (retries, replays, tests, deliveries whose lease ran out) with
 * `FOR NO KEY UPDATE SKIP LOCKED` (the lease columns are no key: attempts referencing a delivery
 * need not wait), oldest due first, at most `perEndpoint` in flight per endpoint. A reason left by
 * `cancelPendingDeliveries` on an attempt that was never recorded (its worker died) is dropped:
 * the endpoint is active again, and this is a new attempt.
 */
export const leaseDueDeliveries = (limits: LeaseLimits): Effect.Effect<ReadonlyArray<ClaimedDelivery>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeClaimed(
      yield* sql`WITH picked AS (
          SELECT c.uuid FROM webhook_endpoints w CROSS JOIN LATERAL (
            SELECT d.uuid, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_uuid = w.uuid AND d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.lease_until IS NULL OR d.lease_until < now())
              AND (d.kind = 'test' OR w.state = 'active')
            ORDER BY d.next_attempt_at
            LIMIT greatest(0, ${limits.perEndpoint} - (SELECT count(*) FROM webhook_deliveries x
              WHERE x.endpoint_uuid = w.uuid AND x.status = 'pending' AND x.lease_token IS NOT NULL AND x.lease_until >= now()))
            FOR NO KEY UPDATE OF d SKIP LOCKED
          ) c
          WHERE w.deleted_at IS NULL AND w.state IN ('active', 'awaiting_test') AND ${sql.literal(liveOwner)}
          ORDER BY c.next_attempt_at
          LIMIT ${limits.free}
        )
        UPDATE webhook_deliveries d SET lease_until = now() + make_interval(secs => ${limits.leaseSeconds}), lease_token = gen_random_uuid(),
          cancel_reason = NULL
        FROM picked, webhook_endpoints w
        WHERE d.uuid = picked.uuid AND w.uuid = d.endpoint_uuid
        RETURNING ${sql.literal(claimedColumns)}`
    )
  })

/** An active endpoint behind the last sequenced position, with its attempts in flight. */
export const FanOutEndpoint = Schema.Struct({
  ...EndpointRow.pick(
    "uuid",
    "profile_uuid",
    "event_types",
    "config_version",
    "url",
    "payload_mode",
    "secret_sealed",
    "previous_secret_sealed",
    "previous_secret_expires_at"
  ).fields,
  after_position: Int8Text,
  last_position: Int8Text,
  failing: Schema.Boolean,
  in_flight: Schema.Int
})
export type FanOutEndpoint = typeof FanOutEndpoint.Type

const fanOutColumns = selectList(FanOutEndpoint, "w", {
  after_position: "w.after_position::text",
  last_position: "s.last_position::text",
  failing: "w.failing_since IS NOT NULL",
  in_flight: `(SELECT count(*) FROM webhook_deliveries x WHERE x.endpoint_uuid = w.uuid AND x.status = 'pending'
    AND x.lease_token IS NOT NULL AND x.lease_until >= now())::int`
})
const decodeFanOut = rowsDecoder(FanOutEndpoint)

const decodeWork = rowsDecoder(Schema.Struct({ work: Schema.Boolean }))

/**
 * Whether a delivery cycle could find anything: an active endpoint behind the last position, or a
 * pending delivery due and not in a worker's hands on a live endpoint. One statement outside a
 * transaction, no lock — the idle poll, so a worker with nothing to deliver runs one statement a
 * tick instead of a transaction of five. Broader than what a cycle leases (it ignores the owner's
 * account and the attempts in flight), never narrower. Each endpoint's deliveries are read
 * through their `(endpoint_uuid, next_attempt_at)` index, bounded by `now()`, as
 * `leaseDueDeliveries` reads them: a lateral subquery with `LIMIT 1`, which the planner cannot
 * turn into a semi-join over the whole index, so a backlog scheduled for later is not scanned.
 */
export const hasWebhookWork: Effect.Effect<boolean, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* decodeWork(
    yield* sql`SELECT EXISTS (
        SELECT 1 FROM webhook_endpoints w, event_sequence s
        WHERE w.state = 'active' AND w.deleted_at IS NULL AND w.after_position < s.last_position
      ) OR EXISTS (
        SELECT 1 FROM webhook_endpoints w CROSS JOIN LATERAL (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.endpoint_uuid = w.uuid AND d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.lease_until IS NULL OR d.lease_until < now())
          LIMIT 1
        ) due
        WHERE w.deleted_at IS NULL AND w.state IN ('active', 'awaiting_test')
      ) AS work`
  )
  return row?.work === true
})

/**
 * Up to 100 active endpoints behind the last position, locked with `SKIP LOCKED` so workers share
 * them: `FOR NO KEY UPDATE` (what the position's UPDATE takes anyway), so an automation rule's or
 * a test's INSERT INTO webhook_deliveries, whose foreign key check takes a key-share lock on the
 * endpoint, does not wait for the fan-out (and cannot deadlock with it on the unique key).
 */
export const lockEndpointsBehind: Effect.Effect<ReadonlyArray<FanOutEndpoint>, SqlError, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeFanOut(
      yield* sql`SELECT ${sql.literal(fanOutColumns)}
        FROM webhook_endpoints w, event_sequence s
        WHERE w.state = 'active' AND w.deleted_at IS NULL AND w.after_position < s.last_position AND ${sql.literal(liveOwner)}
        ORDER BY w.after_position LIMIT 100
        FOR NO KEY UPDATE OF w SKIP LOCKED`
    )
  }
)

const Created = Schema.Struct({ uuid: Schema.String, lease_token: Schema.String, event_uuid: Schema.String, event_type: Schema.String })
const decodeCreated = rowsDecoder(Created)

/**
 * Creates the endpoint's deliveries of the events in positions (after, upto] that `events` selects
 * (alias `e` over `outbox_events`), the first `lease` of them leased at once, and moves the
 * endpoint's position to `upto` in the same statement: a delivery row and its endpoint's position
 * move together. Returns the leased ones.
 */
export const createEventDeliveries = (
  endpoint: FanOutEndpoint,
  range: { readonly after: string; readonly upto: string; readonly lease: number; readonly leaseSeconds: number },
  events: (sql: SqlClient.SqlClient) => ReturnType<SqlClient.SqlClient["and"]>
): Effect.Effect<ReadonlyArray<typeof Created.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeCreated(
      yield* sql`
        WITH visible AS (
          SELECT e.uuid, e.type, e.position, row_number() OVER (ORDER BY e.position) AS n
          FROM outbox_events e
          WHERE e.position > ${range.after} AND e.position <= ${range.upto} AND ${events(sql)}
        ), created AS (
          INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, event_position, config_version,
            next_attempt_at, lease_until, lease_token)
          SELECT ${endpoint.uuid}, 'event', v.uuid, v.type, v.position, ${endpoint.config_version}, now(),
            CASE WHEN v.n <= ${range.lease} THEN now() + make_interval(secs => ${range.leaseSeconds}) END,
            CASE WHEN v.n <= ${range.lease} THEN gen_random_uuid() END
          FROM visible v ORDER BY v.position
          ON CONFLICT (endpoint_uuid, event_uuid) DO NOTHING
          RETURNING uuid, lease_token, event_uuid, event_type
        ), moved AS (${moveEndpointPosition(sql, endpoint.uuid, range.upto)})
        SELECT uuid, lease_token, event_uuid, event_type FROM created WHERE lease_token IS NOT NULL`
    )
  })

export interface NewAttempt {
  readonly deliveryUuid: string
  readonly endpointUuid: string
  readonly attemptedAt: Date
  readonly durationMs: number
  readonly url: string
  readonly address: string | null
  readonly statusCode: number | null
  readonly responseExcerpt: string
  readonly error: string | null
  readonly succeeded: boolean
}

/** Records attempts, in one statement. */
export const insertAttempts = (attempts: ReadonlyArray<NewAttempt>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  attempts.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const rows = attempts.map((a) => ({
      delivery_uuid: a.deliveryUuid,
      endpoint_uuid: a.endpointUuid,
      attempted_at: a.attemptedAt.toISOString(),
      duration_ms: a.durationMs,
      url: a.url,
      address: a.address,
      status_code: a.statusCode,
      // Postgres text cannot hold NUL; an excerpt is for reading, so it is dropped there.
      response_excerpt: a.responseExcerpt.replace(/\u0000/g, ""),
      error: a.error,
      succeeded: a.succeeded
    }))
    return sql`INSERT INTO webhook_attempts (delivery_uuid, endpoint_uuid, attempted_at, duration_ms, url, address,
        status_code, response_excerpt, error, succeeded)
      SELECT a.delivery_uuid, a.endpoint_uuid, a.attempted_at, a.duration_ms, a.url, a.address, a.status_code,
        a.response_excerpt, a.error, a.succeeded
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS a(delivery_uuid uuid, endpoint_uuid uuid,
        attempted_at timestamptz, duration_ms integer, url text, address text, status_code integer,
        response_excerpt text, error text, succeeded boolean)`.pipe(Effect.asVoid)
  })

/** What became of a leased delivery. */
export interface DeliveryResult {
  readonly deliveryUuid: string
  readonly leaseToken: string
  readonly result: "succeeded" | "retry" | "failed" | "cancelled"
  readonly retryAt: Date | null
  readonly cancelReason: string | null
  readonly attempted: boolean
}

/**
 * Writes the results of leased deliveries (only while the lease is still theirs) and releases the
 * leases. A retry for an endpoint that is no longer active (paused, disabled, changed, deleted),
 * or of a delivery cancelled while its attempt was out (`cancelPendingDeliveries` left the reason),
 * is cancelled instead.
 */
export const recordDeliveryResults = (results: ReadonlyArray<DeliveryResult>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  results.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const updates = results.map((o) => ({
      uuid: o.deliveryUuid,
      token: o.leaseToken,
      result: o.result,
      retry_at: o.retryAt?.toISOString() ?? null,
      cancel_reason: o.cancelReason,
      attempted: o.attempted
    }))
    const retried = sql`o.result = 'retry' AND d.cancel_reason IS NULL AND w.state = 'active' AND w.deleted_at IS NULL`
    return sql`UPDATE webhook_deliveries d SET
        status = CASE
          WHEN o.result <> 'retry' THEN o.result
          WHEN ${retried} THEN 'pending'
          ELSE 'cancelled' END,
        next_attempt_at = CASE WHEN ${retried} THEN o.retry_at END,
        cancel_reason = CASE
          WHEN o.result = 'cancelled' THEN o.cancel_reason
          WHEN o.result = 'retry' AND d.cancel_reason IS NOT NULL THEN d.cancel_reason
          WHEN o.result = 'retry' AND w.deleted_at IS NOT NULL THEN 'endpoint deleted'
          WHEN o.result = 'retry' AND w.state <> 'active' THEN 'endpoint ' || w.state END,
        finished_at = CASE WHEN ${retried} THEN NULL ELSE now() END,
        attempt_count = d.attempt_count + o.attempted::int,
        round_attempts = d.round_attempts + o.attempted::int,
        lease_until = NULL, lease_token = NULL, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) AS o(uuid uuid, token uuid, result text,
        retry_at timestamptz, cancel_reason text, attempted boolean), webhook_endpoints w
      WHERE d.uuid = o.uuid AND d.lease_token = o.token AND w.uuid = d.endpoint_uuid`.pipe(Effect.asVoid)
  })

const QueuedUuid = Schema.Struct({ uuid: Schema.String })
const decodeQueued = rowDecoder(QueuedUuid)

/**
 * Queues one event for one endpoint outside the endpoint's own subscription (an automation rule's
 * `webhook.deliver`): one delivery per (endpoint, event), so a retry or an event the endpoint
 * also subscribes to is sent once. Returns the delivery's uuid.
 */
export const queueEventDelivery = (
  endpointUuid: string,
  event: { readonly uuid: string; readonly type: string; readonly position: string }
): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, event_position, config_version, next_attempt_at)
      SELECT w.uuid, 'event', ${event.uuid}, ${event.type}, ${event.position}, w.config_version, now()
      FROM webhook_endpoints w WHERE w.uuid = ${endpointUuid}
      ON CONFLICT (endpoint_uuid, event_uuid) DO NOTHING`
    const [row] = yield* sql`SELECT uuid FROM webhook_deliveries WHERE endpoint_uuid = ${endpointUuid} AND event_uuid = ${event.uuid}`
    return (yield* decodeQueued(row)).uuid
  })
