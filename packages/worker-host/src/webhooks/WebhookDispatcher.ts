import { Mailer, webhookDisabledEmail } from "@birzha/domain/internal"
import {
  type ClaimedDelivery,
  type DeliveryOutcome,
  type DisabledEndpoint,
  fanOutEvents,
  hasDeliveryWork,
  leaseDue,
  openSecret,
  recordOutcomes,
  ServerSecret,
  signatureHeader,
  signingKey
} from "@birzha/domain/internal"
import { eventCauses, jobSpan, rowsDecoder, type TraceCause } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Duration, Effect, FiberSet, Queue, Schema, type Scope } from "effect"
import type { WorkerJob } from "../WorkerLoop.js"
import { recordWebhookAttempt } from "../WorkerMetrics.js"
import { makeAddressGuard, type Resolver } from "./AddressGuard.js"
import { honoursRetryAfter, maxRetryAfter, nextRetryDelay, retryAfterMillis } from "./RetrySchedule.js"
import { eventBody, testBody, visibleEnvelopes, type WireEnvelope } from "./WebhookPayload.js"
import { type AttemptResult, makeWebhookSender } from "./WebhookSender.js"

const decodeOwner = rowsDecoder(Schema.Struct({ email: Schema.String }))

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

/** What became of one claimed delivery; written in batches by the webhooks area (`recordOutcomes`). */
type Outcome = DeliveryOutcome

/** Attempts in flight to one endpoint at most, over all workers, by default. */
export const defaultPerEndpoint = 192

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
 * 1. records the outcomes of finished attempts (the endpoints it changes locked first, in uuid
 *    order: docs/decisions.md "Lock order");
 * 2. claims due deliveries (retries, replays, tests, deliveries whose lease ran out) with
 *    `FOR NO KEY UPDATE SKIP LOCKED`, oldest due first;
 * 3. fans out: for each active endpoint behind the last sequenced position (locked with
 *    `FOR NO KEY UPDATE SKIP LOCKED`, so several workers share them and a rule's delivery insert
 *    does not wait) and with free slots, creates a
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

    const signingKeys = (delivery: ClaimedDelivery, now: number): ReadonlyArray<Buffer> => [
      keyOf(delivery.endpoint_uuid, delivery.secret_sealed),
      ...(delivery.previous_secret_sealed !== null && delivery.previous_secret_expires_at !== null &&
          delivery.previous_secret_expires_at.getTime() > now
        ? [keyOf(delivery.endpoint_uuid, delivery.previous_secret_sealed)]
        : [])
    ]

    // ---- 2. claim and fan out (the webhooks area's WebhookDispatch) -------------------------

    const limits = (free: number) => ({ free, perEndpoint, leaseSeconds })

    // ---- 4. send ----------------------------------------------------------------------------

    const outcomeOf = (
      delivery: ClaimedDelivery,
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

    const attempt = (delivery: ClaimedDelivery, envelope: WireEnvelope | undefined): Effect.Effect<Outcome, SqlError> =>
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
        const classified = classifyAttempt(delivery.kind, delivery.round_attempts, result, finished, Math.random())
        recordWebhookAttempt(classified.result, finished - now)
        return outcomeOf(delivery, { ...classified, attempt: { attemptedAt: new Date(now), result, url: delivery.url } })
      })

    /** Rights at send time (the events each endpoint's profile may see now, one query per profile), then one fiber per attempt. */
    const send = (claimed: ReadonlyArray<ClaimedDelivery>): Effect.Effect<void, SqlError> =>
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
        // The requests the events came from: each attempt joins its event's trace and names its request in its logs.
        const causes: ReadonlyMap<string, TraceCause> = yield* withSql(
          eventCauses([...new Set(claimed.filter((delivery) => delivery.kind === "event").map((delivery) => delivery.event_uuid))])
        )
        for (const delivery of claimed) {
          const envelope = delivery.kind === "event" ? envelopes.get(`${delivery.profile_uuid}|${delivery.event_uuid}`) : undefined
          yield* FiberSet.run(
            fibers,
            // Forked from an uninterruptible run: made interruptible so a stopping worker can end it.
            Effect.interruptible(attempt(delivery, envelope)).pipe(
              Effect.tap((outcome) =>
                Effect.annotateCurrentSpan({
                  "birzha.webhook.result": outcome.result,
                  ...(outcome.attempt?.result.statusCode === undefined ? {} : { "http.response.status_code": outcome.attempt.result.statusCode })
                })
              ),
              Effect.catchAllCause((cause) =>
                // A defect or a database failure while preparing: the lease runs out and the delivery is tried again.
                Effect.logError("webhook attempt failed before sending", cause).pipe(Effect.as(undefined))
              ),
              jobSpan("webhooks.attempt", {
                attributes: {
                  "birzha.webhook.endpoint_uuid": delivery.endpoint_uuid,
                  "birzha.webhook.delivery_uuid": delivery.uuid,
                  "birzha.webhook.kind": delivery.kind,
                  "birzha.event.type": delivery.event_type,
                  "birzha.webhook.attempt": delivery.round_attempts + 1
                },
                cause: causes.get(delivery.event_uuid)
              }),
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

    /** Tells each owner whose endpoint was just disabled (after the commit; a mail failure is logged, not retried). */
    const notify = (disabled: ReadonlyArray<DisabledEndpoint>) =>
      Effect.forEach(disabled, (endpoint) =>
        Effect.gen(function*() {
          yield* Effect.logWarning("webhook endpoint disabled").pipe(
            Effect.annotateLogs({ endpoint: endpoint.uuid, reason: endpoint.disabled_reason })
          )
          const [owner] = yield* Effect.flatMap(
            sql`SELECT a.email FROM profiles p JOIN accounts a ON a.uuid = p.account_uuid
            WHERE p.uuid = ${endpoint.profile_uuid} AND a.deleted_at IS NULL`,
            decodeOwner
          )
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
        const { claimed, disabled, more } = yield* bookkeeping(withSql(Effect.gen(function*() {
          const disabled = batch.length === 0 ? [] : yield* recordOutcomes(batch)
          if (!options.claim) return { claimed: [], disabled, more: false }
          // Due deliveries first (retries, replays, tests, leases of a dead worker), then new events.
          const due = free <= 0 ? [] : yield* leaseDue(limits(free))
          const fresh = yield* fanOutEvents(limits(free - due.length))
          return { claimed: [...due, ...fresh.leased], disabled, more: fresh.more }
        }))).pipe(Effect.tapError(() => Effect.sync(() => unwritten.unshift(...batch))))
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
      // Nothing of this process's to write or wait for, and nothing in the database to do: one
      // statement instead of a cycle's transaction (the poll of an idle worker).
      if (finished.length === 0 && unwritten.length === 0 && inFlight.count === 0 && !(yield* withSql(hasDeliveryWork))) return
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
export const whenReady = <A>(ready: Effect.Effect<boolean> | undefined, run: Effect.Effect<A>): Effect.Effect<A | undefined> => {
  let known = ready === undefined
  return Effect.gen(function*() {
    if (!known) {
      if (!(yield* ready ?? Effect.succeed(true))) return undefined
      known = true
    }
    return yield* run
  })
}

/**
 * A job's run with a quiet failure mode: the first failure (database down, not migrated yet) is
 * logged once, then runs are skipped with a back-off up to 5 s, and the recovery logged. Answers
 * the run's value, or `undefined` when it failed or was skipped.
 */
export const withFailureBackoff = <A, E>(label: string, run: Effect.Effect<A, E>): Effect.Effect<A | undefined> => {
  let failing: { since: number; retryAt: number; delay: number } | undefined
  return Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const state = failing
    if (state !== undefined && now < state.retryAt) return undefined
    return yield* run.pipe(
      Effect.matchCauseEffect({
        onSuccess: (value) => {
          failing = undefined
          return (state === undefined ? Effect.void : Effect.logInfo(`${label} recovered`).pipe(Effect.annotateLogs({ failedForMs: now - state.since })))
            .pipe(Effect.as<A | undefined>(value))
        },
        onFailure: (cause) => {
          const delay = Math.min(5_000, state === undefined ? 200 : state.delay * 2)
          failing = { since: state?.since ?? now, retryAt: now + delay, delay }
          return (state === undefined ? Effect.logWarning(`${label} failed; retrying`, Cause.squash(cause)) : Effect.void).pipe(Effect.as(undefined))
        }
      })
    )
  })
}
