import { type DisabledReason, expandTypePatterns, Mailer, type PayloadMode, webhookDisabledEmail, webhookLimits } from "@birzha/domain"
import {
  cancelPendingDeliveries,
  eventVisibleTo,
  openSecret,
  ServerSecret,
  signatureHeader,
  signingKey
} from "@birzha/domain/server"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Duration, Effect, Either, FiberSet, Queue, type Scope } from "effect"
import type { WorkerJob } from "../WorkerLoop.js"
import { makeAddressGuard, type Resolver } from "./AddressGuard.js"
import { honoursRetryAfter, maxRetryAfter, nextRetryDelay, retryAfterMillis } from "./RetrySchedule.js"
import { eventBody, testBody, visibleEnvelopes, type WireEnvelope } from "./WebhookPayload.js"
import { type AttemptResult, makeWebhookSender } from "./WebhookSender.js"

export interface WebhookDispatcherOptions {
  /** `BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK`: receivers on loopback (http allowed there), for tests and development. */
  readonly allowHttpLoopback: boolean
  /** Pause between runs when there is nothing to do. */
  readonly every?: Duration.DurationInput
  /** Attempts in flight in this process at most (the global pool). */
  readonly concurrency?: number
  /** Attempts in flight to one endpoint at most, over every worker process (so one slow endpoint holds few slots). */
  readonly perEndpoint?: number
  /** Spec anchor (Svix): 15 s per attempt. */
  readonly timeout?: Duration.DurationInput
  /** How long a claim holds a delivery; an attempt never outlives it, so a dead worker's deliveries come back after it. */
  readonly lease?: Duration.DurationInput
  readonly resolver?: Resolver
  /** Whether the database is migrated: runs wait for it quietly. */
  readonly ready?: Effect.Effect<boolean> | undefined
}

/** A claimed delivery with what sending it needs of its endpoint (read in the same statement). */
interface Claimed {
  readonly uuid: string
  readonly lease_token: string
  readonly endpoint_uuid: string
  readonly kind: "event" | "test"
  readonly event_uuid: string
  readonly event_type: string
  readonly round_attempts: number
  readonly config_version: number
  readonly url: string
  readonly profile_uuid: string
  readonly payload_mode: PayloadMode
  readonly endpoint_config_version: number
  readonly secret_sealed: string
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: Date | null
  readonly failing: boolean
}

/** What became of one claimed delivery; written in batches. */
interface Outcome {
  readonly deliveryUuid: string
  readonly leaseToken: string
  readonly endpointUuid: string
  readonly kind: "event" | "test"
  readonly configVersion: number
  readonly result: "succeeded" | "retry" | "failed" | "cancelled"
  readonly retryAt?: Date
  readonly cancelReason?: string
  readonly attempt?: {
    readonly attemptedAt: Date
    readonly result: AttemptResult
    readonly url: string
  }
  readonly disable?: DisabledReason
  /** The endpoint had a failing streak when this delivery was claimed (a 2xx must end it). */
  readonly endpointFailing: boolean
}

/** Attempts in flight to one endpoint at most, over all workers, by default. */
export const defaultPerEndpoint = 192

/** An endpoint the service just disabled, for the owner's notice. */
interface Disabled {
  readonly uuid: string
  readonly url: string
  readonly profile_uuid: string
  readonly disabled_reason: DisabledReason
  readonly disabled_at: Date
}

const isSuccess = (status: number | undefined) => status !== undefined && status >= 200 && status < 300

/**
 * What an attempt's answer means for the delivery (Svix's rules): 2xx succeeded; 410 failed and
 * the endpoint is disabled; a test is tried once; anything else (3xx included, and no answer) is
 * retried on the schedule, later when a 429/502/504 says `Retry-After`, until the round is spent.
 */
export const classifyAttempt = (
  kind: "event" | "test",
  attemptsSoFar: number,
  result: AttemptResult,
  now: number,
  random: number
): Pick<Outcome, "result" | "retryAt" | "disable"> => {
  if (isSuccess(result.statusCode)) return { result: "succeeded" }
  if (result.statusCode === 410) return { result: "failed", disable: "gone" }
  if (kind === "test") return { result: "failed" }
  const delay = nextRetryDelay(attemptsSoFar + 1, random)
  if (delay === undefined) return { result: "failed" }
  const asked = result.statusCode !== undefined && honoursRetryAfter(result.statusCode)
    ? retryAfterMillis(result.retryAfter, now)
    : undefined
  const wait = asked === undefined ? delay : Math.min(Math.max(delay, asked), Duration.toMillis(maxRetryAfter))
  return { result: "retry", retryAt: new Date(now + wait) }
}

/**
 * Webhook delivery as a worker job. Each run repeats one cycle until there is nothing left to do
 * (or 250 ms passed); a cycle is one transaction (committed without waiting for the WAL flush, see
 * `bookkeeping`) that
 *
 * 1. records the outcomes of finished attempts;
 * 2. claims due deliveries (retries, replays, tests, deliveries whose lease ran out) with
 *    `FOR UPDATE SKIP LOCKED`, oldest due first;
 * 3. fans out: for each active endpoint behind the last sequenced position (locked with
 *    `FOR UPDATE SKIP LOCKED`, so several workers share them) and with free slots, creates a
 *    delivery, leased at once, for each of its next new events that matches its types and that its
 *    profile may see (as many events as it has free slots), and moves its position.
 *
 * Claims and leases respect at most `perEndpoint` attempts in flight per endpoint across all
 * workers and the free slots of this process's pool; a lease outlives any attempt, so a worker
 * killed mid-attempt loses nothing (the delivery is due again when its lease ends, and is sent
 * again with the same `webhook-id`). Then each leased delivery is sent in its own fiber: rights
 * re-checked, body built, signed with every valid secret, sent through the SSRF guard within 15 s.
 *
 * A slow endpoint only ever holds its own `perEndpoint` slots, so it never delays the others.
 */
export const makeWebhookJob = (
  options: WebhookDispatcherOptions
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient | ServerSecret | Mailer | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const serverSecret = yield* ServerSecret
    const mailer = yield* Mailer
    const concurrency = options.concurrency ?? 768
    const perEndpoint = options.perEndpoint ?? defaultPerEndpoint
    const timeoutMs = Duration.toMillis(options.timeout ?? Duration.seconds(15))
    const leaseSeconds = Math.ceil(Duration.toSeconds(options.lease ?? Duration.seconds(30)))
    const guard = makeAddressGuard({ allowLoopback: options.allowHttpLoopback, ...(options.resolver ? { resolver: options.resolver } : {}) })
    const sender = makeWebhookSender({ guard, allowHttpLoopback: options.allowHttpLoopback, timeoutMs, socketsPerDestination: perEndpoint })
    const fibers = yield* FiberSet.make()
    // Finished attempts, pushed by the attempt fibers; the doorbell only wakes the run (a lost ring loses nothing).
    const finished: Array<Outcome> = []
    const doorbell = yield* Queue.sliding<true>(1)
    // Outcomes taken from the queue but not yet written (kept across runs when a write fails).
    const unwritten: Array<Outcome> = []
    const inFlight = { count: 0 }
    const keys = new Map<string, Buffer>()

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)

    /**
     * The worker's own bookkeeping (fan-out, claims, outcomes) commits without waiting for the WAL
     * flush: a database crash can only undo its last few milliseconds, which means sending some
     * deliveries again with the same webhook-id (allowed), never losing one, since a delivery row
     * and its endpoint's position move in one transaction.
     */
    const bookkeeping = <A, E>(effect: Effect.Effect<A, E>) =>
      sql.withTransaction(Effect.zipRight(sql`SET LOCAL synchronous_commit = off`, effect))

    const keyOf = (endpointUuid: string, sealed: string): Buffer => {
      let key = keys.get(sealed)
      if (key === undefined) {
        key = signingKey(openSecret(serverSecret, endpointUuid, sealed))
        if (keys.size > 10_000) keys.clear()
        keys.set(sealed, key)
      }
      return key
    }

    const signingKeys = (delivery: Claimed, now: number): ReadonlyArray<Buffer> => [
      keyOf(delivery.endpoint_uuid, delivery.secret_sealed),
      ...(delivery.previous_secret_sealed !== null && delivery.previous_secret_expires_at !== null &&
          delivery.previous_secret_expires_at.getTime() > now
        ? [keyOf(delivery.endpoint_uuid, delivery.previous_secret_sealed)]
        : [])
    ]

    // ---- 2. fan-out -------------------------------------------------------------------------

    const liveOwner = `EXISTS (SELECT 1 FROM profiles op JOIN accounts oa ON oa.uuid = op.account_uuid
      WHERE op.uuid = w.profile_uuid AND op.deleted_at IS NULL AND oa.deleted_at IS NULL)`

    interface FanOutEndpoint {
      readonly uuid: string
      readonly profile_uuid: string
      readonly event_types: ReadonlyArray<string>
      readonly after_position: string
      readonly last_position: string
      readonly config_version: number
      readonly url: string
      readonly payload_mode: PayloadMode
      readonly secret_sealed: string
      readonly previous_secret_sealed: string | null
      readonly previous_secret_expires_at: Date | null
      readonly failing: boolean
      readonly in_flight: number
    }

    /**
     * Creates the deliveries of newly sequenced events for active endpoints behind the last
     * position (each endpoint row locked with `SKIP LOCKED`, so workers share them), leased at
     * once, as many as the endpoint's and this process's free slots: a fresh event goes out in the
     * same round trip, without a separate claim. Returns the leased deliveries and whether more
     * remains to fan out.
     */
    const fanOut = (free: number): Effect.Effect<{ readonly leased: ReadonlyArray<Claimed>; readonly more: boolean }, SqlError> =>
      Effect.gen(function*() {
        const endpoints = yield* sql<FanOutEndpoint>`
          SELECT w.uuid, w.profile_uuid, w.event_types, w.after_position::text AS after_position, s.last_position::text AS last_position,
            w.config_version, w.url, w.payload_mode, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at,
            w.failing_since IS NOT NULL AS failing,
            (SELECT count(*) FROM webhook_deliveries x WHERE x.endpoint_uuid = w.uuid AND x.status = 'pending'
              AND x.lease_token IS NOT NULL AND x.lease_until >= now())::int AS in_flight
          FROM webhook_endpoints w, event_sequence s
          WHERE w.state = 'active' AND w.deleted_at IS NULL AND w.after_position < s.last_position AND ${sql.literal(liveOwner)}
          ORDER BY w.after_position LIMIT 100
          FOR UPDATE OF w SKIP LOCKED`
        const leased: Array<Claimed> = []
        let more = false
        let slots = free
        for (const endpoint of endpoints) {
          // As many events as can go out now, each leased at once (no later claim). An endpoint with
          // no free slot keeps its events in the outbox until it has one: an endpoint that is slow
          // (or down) never makes work for the others, and a backlog costs nothing while it waits.
          const lease = Math.max(0, Math.min(slots, perEndpoint - endpoint.in_flight))
          if (lease === 0) continue
          const step = BigInt(lease)
          const after = BigInt(endpoint.after_position)
          const mark = BigInt(endpoint.last_position)
          const upto = after + step < mark ? after + step : mark
          if (upto < mark) more = true
          const types = expandTypePatterns(endpoint.event_types)
          const typeFilter = Either.isRight(types) && types.right.length > 0 ? sql.in("e.type", types.right) : sql`FALSE`
          const rows = yield* sql<{ uuid: string; lease_token: string | null; event_uuid: string; event_type: string }>`
            WITH visible AS (
              SELECT e.uuid, e.type, e.position, row_number() OVER (ORDER BY e.position) AS n
              FROM outbox_events e
              WHERE e.position > ${after.toString()} AND e.position <= ${upto.toString()} AND ${typeFilter}
                AND ${eventVisibleTo(sql, endpoint.profile_uuid)}
            ), created AS (
              INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, event_position, config_version,
                next_attempt_at, lease_until, lease_token)
              SELECT ${endpoint.uuid}, 'event', v.uuid, v.type, v.position, ${endpoint.config_version}, now(),
                CASE WHEN v.n <= ${lease} THEN now() + make_interval(secs => ${leaseSeconds}) END,
                CASE WHEN v.n <= ${lease} THEN gen_random_uuid() END
              FROM visible v ORDER BY v.position
              ON CONFLICT (endpoint_uuid, event_uuid) DO NOTHING
              RETURNING uuid, lease_token, event_uuid, event_type
            ), moved AS (
              UPDATE webhook_endpoints SET after_position = ${upto.toString()} WHERE uuid = ${endpoint.uuid}
            )
            SELECT uuid, lease_token, event_uuid, event_type FROM created WHERE lease_token IS NOT NULL`
          for (const row of rows) {
            leased.push({
              uuid: row.uuid,
              lease_token: row.lease_token!,
              endpoint_uuid: endpoint.uuid,
              kind: "event",
              event_uuid: row.event_uuid,
              event_type: row.event_type,
              round_attempts: 0,
              config_version: endpoint.config_version,
              url: endpoint.url,
              profile_uuid: endpoint.profile_uuid,
              payload_mode: endpoint.payload_mode,
              endpoint_config_version: endpoint.config_version,
              secret_sealed: endpoint.secret_sealed,
              previous_secret_sealed: endpoint.previous_secret_sealed,
              previous_secret_expires_at: endpoint.previous_secret_expires_at,
              failing: endpoint.failing
            })
          }
          slots -= rows.length
        }
        return { leased, more }
      })

    // ---- 3. claim ---------------------------------------------------------------------------

    const claim = (free: number): Effect.Effect<ReadonlyArray<Claimed>, SqlError> =>
      sql<Claimed>`WITH picked AS (
          SELECT c.uuid FROM webhook_endpoints w CROSS JOIN LATERAL (
            SELECT d.uuid, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_uuid = w.uuid AND d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.lease_until IS NULL OR d.lease_until < now())
              AND (d.kind = 'test' OR w.state = 'active')
            ORDER BY d.next_attempt_at
            LIMIT greatest(0, ${perEndpoint} - (SELECT count(*) FROM webhook_deliveries x
              WHERE x.endpoint_uuid = w.uuid AND x.status = 'pending' AND x.lease_token IS NOT NULL AND x.lease_until >= now()))
            FOR UPDATE OF d SKIP LOCKED
          ) c
          WHERE w.deleted_at IS NULL AND w.state IN ('active', 'awaiting_test') AND ${sql.literal(liveOwner)}
          ORDER BY c.next_attempt_at
          LIMIT ${free}
        )
        UPDATE webhook_deliveries d SET lease_until = now() + make_interval(secs => ${leaseSeconds}), lease_token = gen_random_uuid()
        FROM picked, webhook_endpoints w
        WHERE d.uuid = picked.uuid AND w.uuid = d.endpoint_uuid
        RETURNING d.uuid, d.lease_token, d.endpoint_uuid, d.kind, d.event_uuid, d.event_type, d.round_attempts, d.config_version,
          w.url, w.profile_uuid, w.payload_mode, w.config_version AS endpoint_config_version, w.secret_sealed,
          w.previous_secret_sealed, w.previous_secret_expires_at, w.failing_since IS NOT NULL AS failing`

    // ---- 4. send ----------------------------------------------------------------------------

    const outcomeOf = (
      delivery: Claimed,
      rest: Omit<Outcome, "deliveryUuid" | "leaseToken" | "endpointUuid" | "kind" | "configVersion" | "endpointFailing">
    ): Outcome => ({
      deliveryUuid: delivery.uuid,
      leaseToken: delivery.lease_token,
      endpointUuid: delivery.endpoint_uuid,
      kind: delivery.kind,
      configVersion: delivery.config_version,
      endpointFailing: delivery.failing,
      ...rest
    })

    const attempt = (delivery: Claimed, envelope: WireEnvelope | undefined): Effect.Effect<Outcome, SqlError> =>
      Effect.gen(function*() {
        if (delivery.kind === "test" && delivery.config_version !== delivery.endpoint_config_version) {
          return outcomeOf(delivery, { result: "cancelled", cancelReason: "the endpoint changed after the test was queued" })
        }
        if (delivery.kind === "event" && envelope === undefined) {
          return outcomeOf(delivery, { result: "cancelled", cancelReason: "the event is no longer visible to the endpoint's profile" })
        }
        const body = envelope === undefined
          ? testBody(delivery.event_uuid)
          : yield* withSql(eventBody(envelope, delivery.payload_mode, delivery.profile_uuid))
        const now = yield* Clock.currentTimeMillis
        const timestamp = Math.floor(now / 1000)
        const result = yield* sender.send({
          url: delivery.url,
          body,
          headers: {
            "content-type": "application/json",
            "user-agent": "Birzha-Webhooks/1",
            "webhook-id": delivery.event_uuid,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": signatureHeader(signingKeys(delivery, now), delivery.event_uuid, timestamp, body)
          }
        })
        const finished = yield* Clock.currentTimeMillis
        return outcomeOf(delivery, {
          ...classifyAttempt(delivery.kind, delivery.round_attempts, result, finished, Math.random()),
          attempt: { attemptedAt: new Date(now), result, url: delivery.url }
        })
      })

    /** Rights at send time (the events each endpoint's profile may see now, one query per profile), then one fiber per attempt. */
    const send = (claimed: ReadonlyArray<Claimed>): Effect.Effect<void, SqlError> =>
      Effect.gen(function*() {
        const envelopes = new Map<string, WireEnvelope>()
        const byProfile = new Map<string, Array<string>>()
        for (const delivery of claimed) {
          if (delivery.kind !== "event") continue
          const list = byProfile.get(delivery.profile_uuid) ?? []
          list.push(delivery.event_uuid)
          byProfile.set(delivery.profile_uuid, list)
        }
        for (const [profileUuid, uuids] of byProfile) {
          const visible = yield* withSql(visibleEnvelopes(profileUuid, uuids))
          for (const [uuid, envelope] of visible) envelopes.set(`${profileUuid}|${uuid}`, envelope)
        }
        for (const delivery of claimed) {
          const envelope = delivery.kind === "event" ? envelopes.get(`${delivery.profile_uuid}|${delivery.event_uuid}`) : undefined
          yield* FiberSet.run(
            fibers,
            // Forked from an uninterruptible run: made interruptible so a stopping worker can end it.
            Effect.interruptible(attempt(delivery, envelope)).pipe(
              Effect.catchAllCause((cause) =>
                // A defect or a database failure while preparing: the lease runs out and the delivery is tried again.
                Effect.logError("webhook attempt failed before sending", cause).pipe(Effect.as(undefined))
              ),
              Effect.flatMap((outcome) =>
                outcome === undefined ? Effect.void : Effect.zipRight(Effect.sync(() => finished.push(outcome)), Queue.offer(doorbell, true))
              ),
              Effect.ensuring(Effect.sync(() => {
                inFlight.count--
              }))
            )
          )
        }
      })

    // ---- 1. record --------------------------------------------------------------------------

    const record = (batch: ReadonlyArray<Outcome>): Effect.Effect<ReadonlyArray<Disabled>, SqlError> =>
      Effect.gen(function*() {
        const attempted = batch.filter((o) => o.attempt !== undefined)
        if (attempted.length > 0) {
          const rows = attempted.map((o) => ({
            delivery_uuid: o.deliveryUuid,
            endpoint_uuid: o.endpointUuid,
            attempted_at: o.attempt!.attemptedAt.toISOString(),
            duration_ms: o.attempt!.result.durationMs,
            url: o.attempt!.url,
            address: o.attempt!.result.address ?? null,
            status_code: o.attempt!.result.statusCode ?? null,
            // Postgres text cannot hold NUL; an excerpt is for reading, so it is dropped there.
            response_excerpt: o.attempt!.result.excerpt.replace(/\u0000/g, ""),
            error: o.attempt!.result.error ?? null,
            succeeded: o.result === "succeeded"
          }))
          yield* sql`INSERT INTO webhook_attempts (delivery_uuid, endpoint_uuid, attempted_at, duration_ms, url, address,
              status_code, response_excerpt, error, succeeded)
            SELECT a.delivery_uuid, a.endpoint_uuid, a.attempted_at, a.duration_ms, a.url, a.address, a.status_code,
              a.response_excerpt, a.error, a.succeeded
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS a(delivery_uuid uuid, endpoint_uuid uuid,
              attempted_at timestamptz, duration_ms integer, url text, address text, status_code integer,
              response_excerpt text, error text, succeeded boolean)`
        }
        const updates = batch.map((o) => ({
          uuid: o.deliveryUuid,
          token: o.leaseToken,
          result: o.result,
          retry_at: o.retryAt?.toISOString() ?? null,
          cancel_reason: o.cancelReason ?? null,
          attempted: o.attempt !== undefined
        }))
        // A retry of an endpoint that is no longer active (paused, disabled, changed, deleted) is cancelled instead.
        yield* sql`UPDATE webhook_deliveries d SET
            status = CASE
              WHEN o.result <> 'retry' THEN o.result
              WHEN w.state = 'active' AND w.deleted_at IS NULL THEN 'pending'
              ELSE 'cancelled' END,
            next_attempt_at = CASE WHEN o.result = 'retry' AND w.state = 'active' AND w.deleted_at IS NULL THEN o.retry_at END,
            cancel_reason = CASE
              WHEN o.result = 'cancelled' THEN o.cancel_reason
              WHEN o.result = 'retry' AND w.deleted_at IS NOT NULL THEN 'endpoint deleted'
              WHEN o.result = 'retry' AND w.state <> 'active' THEN 'endpoint ' || w.state END,
            finished_at = CASE WHEN o.result = 'retry' AND w.state = 'active' AND w.deleted_at IS NULL THEN NULL ELSE now() END,
            attempt_count = d.attempt_count + o.attempted::int,
            round_attempts = d.round_attempts + o.attempted::int,
            lease_until = NULL, lease_token = NULL, updated_at = now()
          FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) AS o(uuid uuid, token uuid, result text,
            retry_at timestamptz, cancel_reason text, attempted boolean), webhook_endpoints w
          WHERE d.uuid = o.uuid AND d.lease_token = o.token AND w.uuid = d.endpoint_uuid`

        // Endpoint bookkeeping: a 2xx ends a failing streak; an event attempt without one starts or extends it.
        const succeeded = new Set(batch.filter((o) => o.result === "succeeded").map((o) => o.endpointUuid))
        const failing = [...new Set(batch.filter((o) => o.kind === "event" && o.attempt !== undefined && o.result !== "succeeded")
          .map((o) => o.endpointUuid))].filter((uuid) => !succeeded.has(uuid))
        // Only endpoints that were failing when claimed can have a streak to end: no statement in the common case.
        const recovered = [...new Set(batch.filter((o) => o.result === "succeeded" && o.endpointFailing).map((o) => o.endpointUuid))]
        if (recovered.length > 0) {
          yield* sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE ${sql.in("uuid", recovered)} AND failing_since IS NOT NULL`
        }
        if (failing.length > 0) {
          yield* sql`UPDATE webhook_endpoints SET failing_since = now() WHERE ${sql.in("uuid", failing)} AND failing_since IS NULL`
        }
        const gone = [...new Set(batch.filter((o) => o.disable === "gone").map((o) => o.endpointUuid))]
        const disabled = [
          ...(gone.length === 0 ? [] : yield* sql<Disabled>`
            UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'gone', revision = revision + 1, updated_at = now()
            WHERE ${sql.in("uuid", gone)} AND disabled_at IS NULL AND deleted_at IS NULL
            RETURNING uuid, url, profile_uuid, disabled_reason, disabled_at`),
          ...(failing.length === 0 ? [] : yield* sql<Disabled>`
            UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'failing', revision = revision + 1, updated_at = now()
            WHERE ${sql.in("uuid", failing)} AND disabled_at IS NULL AND deleted_at IS NULL
              AND failing_since <= now() - make_interval(days => ${webhookLimits.failingDaysBeforeDisable})
            RETURNING uuid, url, profile_uuid, disabled_reason, disabled_at`)
        ]
        for (const endpoint of disabled) yield* withSql(cancelPendingDeliveries(endpoint.uuid, "endpoint disabled"))

        // A test answered 2xx activates the configuration it tested: from here on, new events go to it.
        const tested = batch.filter((o) => o.kind === "test" && o.result === "succeeded")
          .map((o) => ({ uuid: o.endpointUuid, config_version: o.configVersion }))
        if (tested.length > 0) {
          yield* sql`UPDATE webhook_endpoints w SET verified_at = now(),
              after_position = (SELECT last_position FROM event_sequence), revision = w.revision + 1, updated_at = now()
            FROM jsonb_to_recordset(${JSON.stringify(tested)}::jsonb) AS t(uuid uuid, config_version integer)
            WHERE w.uuid = t.uuid AND w.config_version = t.config_version AND w.approved_at IS NOT NULL
              AND w.verified_at IS NULL AND w.deleted_at IS NULL`
        }
        return disabled
      })

    /** Tells each owner whose endpoint was just disabled (after the commit; a mail failure is logged, not retried). */
    const notify = (disabled: ReadonlyArray<Disabled>) =>
      Effect.forEach(disabled, (endpoint) =>
        Effect.gen(function*() {
          yield* Effect.logWarning("webhook endpoint disabled").pipe(
            Effect.annotateLogs({ endpoint: endpoint.uuid, reason: endpoint.disabled_reason })
          )
          const [owner] = yield* sql<{ email: string }>`SELECT a.email FROM profiles p JOIN accounts a ON a.uuid = p.account_uuid
            WHERE p.uuid = ${endpoint.profile_uuid} AND a.deleted_at IS NULL`
          if (owner === undefined) return
          yield* mailer.send(webhookDisabledEmail({
            to: owner.email,
            endpointUuid: endpoint.uuid,
            url: endpoint.url,
            reason: endpoint.disabled_reason,
            at: endpoint.disabled_at
          }))
        }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("could not tell the owner of a disabled webhook", cause))))

    /**
     * One round trip of bookkeeping: the outcomes so far written and the next due deliveries claimed,
     * in one transaction. Returns how many outcomes were written and how many deliveries claimed.
     */
    const cycle = (options: { readonly claim: boolean }) =>
      Effect.gen(function*() {
        unwritten.push(...finished.splice(0))
        const batch = unwritten.splice(0, 1_000)
        const free = options.claim ? concurrency - inFlight.count : 0
        const { claimed, disabled, more } = yield* bookkeeping(Effect.gen(function*() {
          const disabled = batch.length === 0 ? [] : yield* record(batch)
          if (!options.claim) return { claimed: [], disabled, more: false }
          // Due deliveries first (retries, replays, tests, leases of a dead worker), then new events.
          const due = free <= 0 ? [] : yield* claim(free)
          const fresh = yield* fanOut(free - due.length)
          return { claimed: [...due, ...fresh.leased], disabled, more: fresh.more }
        })).pipe(Effect.tapError(() => Effect.sync(() => unwritten.unshift(...batch))))
        // Mail may take long (SMTP): it must not hold up deliveries.
        if (disabled.length > 0) yield* FiberSet.run(fibers, notify(disabled))
        inFlight.count += claimed.length
        if (claimed.length > 0) {
          yield* send(claimed).pipe(Effect.tapErrorCause(() => Effect.sync(() => {
            // Not sent: the leases run out and the deliveries are tried again.
            inFlight.count -= claimed.length
          })))
        }
        return { written: batch.length, claimed: claimed.length, more }
      })

    /** Cycles until there is nothing to do (or 250 ms passed). */
    const deliveryRun = Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      for (;;) {
        const { claimed, more, written } = yield* cycle({ claim: true })
        if ((yield* Clock.currentTimeMillis) - started > 250) return
        if (written === 0 && claimed === 0 && !more) {
          if (inFlight.count === 0) return
          // Attempts are out: wait a moment for one to finish, so its outcome is written and its slot refilled promptly.
          // Interruptible: the worker loop runs each run uninterruptibly, and a timeout cannot cut an uninterruptible wait short.
          yield* Effect.interruptible(Queue.take(doorbell)).pipe(Effect.timeoutOption(Duration.millis(10)))
        }
      }
    })

    // On shutdown: attempts in flight get a moment to finish and be written; the rest come back after their lease.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* FiberSet.awaitEmpty(fibers).pipe(Effect.timeoutOption(Duration.seconds(5)))
        yield* FiberSet.clear(fibers)
        yield* cycle({ claim: false }).pipe(Effect.ignore)
        yield* sender.close
      })
    )

    return {
      name: "webhooks",
      every: options.every ?? Duration.millis(10),
      run: whenReady(options.ready, withFailureBackoff("webhook delivery", deliveryRun))
    }
  })

/** Skips runs until `ready` says the database is migrated, then never asks again. */
export const whenReady = (ready: Effect.Effect<boolean> | undefined, run: Effect.Effect<void>): Effect.Effect<void> => {
  let known = ready === undefined
  return Effect.gen(function*() {
    if (!known) {
      if (!(yield* ready ?? Effect.succeed(true))) return
      known = true
    }
    yield* run
  })
}

/**
 * A job's run with a quiet failure mode: the first failure (database down, not migrated yet) is
 * logged once, then runs are skipped with a back-off up to 5 s, and the recovery logged.
 */
export const withFailureBackoff = <E>(label: string, run: Effect.Effect<unknown, E>): Effect.Effect<void> => {
  let failing: { since: number; retryAt: number; delay: number } | undefined
  return Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const state = failing
    if (state !== undefined && now < state.retryAt) return
    yield* run.pipe(
      Effect.matchCauseEffect({
        onSuccess: () => {
          failing = undefined
          return state === undefined ? Effect.void : Effect.logInfo(`${label} recovered`).pipe(Effect.annotateLogs({ failedForMs: now - state.since }))
        },
        onFailure: (cause) => {
          const delay = Math.min(5_000, state === undefined ? 200 : state.delay * 2)
          failing = { since: state?.since ?? now, retryAt: now + delay, delay }
          return state === undefined ? Effect.logWarning(`${label} failed; retrying`, Cause.squash(cause)) : Effect.void
        }
      })
    )
  })
}
