import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either } from "effect"
import { eventVisibleTo } from "../events/EventVisibility.js"
import { expandTypePatterns } from "../events/TypePattern.js"
import {
  type ClaimedDelivery,
  createEventDeliveries,
  type DeliveryKind,
  hasWebhookWork,
  insertAttempts,
  lockEndpointsBehind,
  leaseDueDeliveries,
  type LeaseLimits,
  recordDeliveryResults,
  cancelPendingDeliveries
} from "./WebhookDeliveryRepository.js"
import type { DisabledReason } from "./WebhookEndpoint.js"
import {
  type DisabledEndpoint,
  disableEndpoints,
  endFailingStreaks,
  lockEndpointsToChange,
  startFailingStreaks,
  verifyTestedEndpoints
} from "./WebhookEndpointRepository.js"

/**
 * The webhooks area's service for the worker's dispatcher: leasing deliveries and recording what
 * became of them, endpoint state included (a 2xx test verifies, a 410 or a 5-day failing streak
 * disables). The dispatcher sends; every row it changes is changed here.
 */
export type { ClaimedDelivery, DisabledEndpoint, LeaseLimits }

/** What became of one leased delivery. */
export interface DeliveryOutcome {
  readonly deliveryUuid: string
  readonly leaseToken: string
  readonly endpointUuid: string
  readonly kind: DeliveryKind
  /** The endpoint configuration the delivery was queued for (a test verifies exactly that one). */
  readonly configVersion: number
  readonly result: "succeeded" | "retry" | "failed" | "cancelled"
  readonly retryAt?: Date
  readonly cancelReason?: string
  readonly attempt?: {
    readonly attemptedAt: Date
    readonly url: string
    readonly result: {
      readonly statusCode?: number
      readonly excerpt: string
      readonly error?: string
      readonly address?: string
      readonly durationMs: number
    }
  }
  readonly disable?: DisabledReason
  /** The endpoint had a failing streak when this delivery was leased (a 2xx must end it). */
  readonly endpointFailing: boolean
}

/** Leases due deliveries (retries, replays, tests, leases of a dead worker), oldest due first. */
export const leaseDue = leaseDueDeliveries

/** Whether a delivery cycle could find anything (the idle poll: one statement, no transaction). */
export const hasDeliveryWork = hasWebhookWork

/**
 * Creates the deliveries of newly sequenced events for active endpoints behind the last position
 * (each endpoint row locked with `SKIP LOCKED`, so workers share them), leased at once, as many as
 * the endpoint's and the caller's free slots: a fresh event goes out in the same round trip,
 * without a separate lease. Returns the leased deliveries and whether more remains to fan out.
 */
export const fanOutEvents = (
  limits: LeaseLimits
): Effect.Effect<{ readonly leased: ReadonlyArray<ClaimedDelivery>; readonly more: boolean }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const endpoints = yield* lockEndpointsBehind
    const leased: Array<ClaimedDelivery> = []
    let more = false
    let slots = limits.free
    for (const endpoint of endpoints) {
      // As many events as can go out now, each leased at once (no later lease). An endpoint with
      // no free slot keeps its events in the outbox until it has one: an endpoint that is slow
      // (or down) never makes work for the others, and a backlog costs nothing while it waits.
      const lease = Math.max(0, Math.min(slots, limits.perEndpoint - endpoint.in_flight))
      if (lease === 0) continue
      const after = BigInt(endpoint.after_position)
      const mark = BigInt(endpoint.last_position)
      const upto = after + BigInt(lease) < mark ? after + BigInt(lease) : mark
      if (upto < mark) more = true
      const types = expandTypePatterns(endpoint.event_types)
      const rows = yield* createEventDeliveries(
        endpoint,
        { after: after.toString(), upto: upto.toString(), lease, leaseSeconds: limits.leaseSeconds },
        (sql) =>
          sql.and([
            Either.isRight(types) && types.right.length > 0 ? sql.in("e.type", types.right) : sql`FALSE`,
            eventVisibleTo(sql, endpoint.profile_uuid)
          ])
      )
      for (const row of rows) {
        leased.push({
          uuid: row.uuid,
          lease_token: row.lease_token,
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

const unique = (values: ReadonlyArray<string>) => [...new Set(values)]

/**
 * Writes the outcomes of finished attempts: the attempts, the deliveries (leases released), and
 * what they mean for their endpoints: a 2xx ends a failing streak, an event attempt without one
 * starts or extends it, a 410 disables the endpoint at once and a streak of
 * `failingDaysBeforeDisable` disables it (its pending deliveries cancelled), a 2xx test verifies
 * the configuration it tested. Returns the endpoints disabled now, for their owners' notice.
 *
 * The endpoints it changes are locked first, all at once and in uuid order, before their
 * deliveries: the lock order of docs/decisions.md ("Lock order"), so two workers recording
 * overlapping batches, or a worker and an owner's command, never wait on each other crosswise.
 */
export const recordOutcomes = (
  batch: ReadonlyArray<DeliveryOutcome>
): Effect.Effect<ReadonlyArray<DisabledEndpoint>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const succeeded = new Set(batch.filter((o) => o.result === "succeeded").map((o) => o.endpointUuid))
    const failing = unique(batch.filter((o) => o.kind === "event" && o.attempt !== undefined && o.result !== "succeeded")
      .map((o) => o.endpointUuid)).filter((uuid) => !succeeded.has(uuid))
    // Only endpoints that were failing when leased can have a streak to end: no statement in the common case.
    const ending = unique(batch.filter((o) => o.result === "succeeded" && o.endpointFailing).map((o) => o.endpointUuid))
    const gone = unique(batch.filter((o) => o.disable === "gone").map((o) => o.endpointUuid))
    const tested = batch.filter((o) => o.kind === "test" && o.result === "succeeded")
      .map((o) => ({ uuid: o.endpointUuid, configVersion: o.configVersion }))
    const locked = yield* lockEndpointsToChange({ ending, failing, gone, tested })
    const only = <A>(items: ReadonlyArray<A>, uuidOf: (item: A) => string) => items.filter((item) => locked.has(uuidOf(item)))
    const same = (uuid: string) => uuid

    yield* insertAttempts(batch.flatMap((o) =>
      o.attempt === undefined ? [] : [{
        deliveryUuid: o.deliveryUuid,
        endpointUuid: o.endpointUuid,
        attemptedAt: o.attempt.attemptedAt,
        durationMs: o.attempt.result.durationMs,
        url: o.attempt.url,
        address: o.attempt.result.address ?? null,
        statusCode: o.attempt.result.statusCode ?? null,
        responseExcerpt: o.attempt.result.excerpt,
        error: o.attempt.result.error ?? null,
        succeeded: o.result === "succeeded"
      }]
    ))
    yield* recordDeliveryResults(batch.map((o) => ({
      deliveryUuid: o.deliveryUuid,
      leaseToken: o.leaseToken,
      result: o.result,
      retryAt: o.retryAt ?? null,
      cancelReason: o.cancelReason ?? null,
      attempted: o.attempt !== undefined
    })))

    // Each change only of the endpoints locked above (one that started to qualify since is left to a later batch).
    yield* endFailingStreaks(only(ending, same))
    yield* startFailingStreaks(only(failing, same))
    const disabled = [
      ...(yield* disableEndpoints(only(gone, same), "gone")),
      ...(yield* disableEndpoints(only(failing, same), "failing"))
    ]
    for (const endpoint of disabled) yield* cancelPendingDeliveries(endpoint.uuid, "endpoint disabled", { skipLocked: true })
    yield* verifyTestedEndpoints(only(tested, (t) => t.uuid))
    return disabled
  })
