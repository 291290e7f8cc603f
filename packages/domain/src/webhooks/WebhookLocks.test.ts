import { SqlClient } from "@effect/sql"
import { Cause, Deferred, Effect, Exit, Fiber } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../../testing/progress.js"
import { type Marketplace, openMarketplace } from "../../test/marketplace.js"
import { only } from "../../test/learning.js"
import { cancelPendingDeliveries, leaseDueDeliveries, lockEndpointsBehind, queueEventDelivery } from "./WebhookDeliveryRepository.js"
import { recordOutcomes } from "./WebhookDispatch.js"
import { findOwnEndpoint } from "./WebhookEndpointRepository.js"
import { updateWebhookEndpoint } from "./WebhookEndpoints.js"
import { WebhookSettings } from "./WebhookSettings.js"

/**
 * The webhook tables' lock order (docs/decisions.md "Lock order") on real Postgres, interleaved
 * deterministically: an endpoint before its deliveries for the owner and the worker alike, and
 * locks that only guard other columns (`FOR NO KEY UPDATE`) let a delivery be inserted meanwhile.
 */

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("webhook_locks")
})
afterAll(async () => {
  await m?.close()
})


/** A leased event delivery's attempt answered 500: the worker's outcome, due again in a minute. */
const answered500 = (deliveryUuid: string, leaseToken: string, endpointUuid: string, options: { readonly endpointFailing: boolean }) => ({
  deliveryUuid,
  leaseToken,
  endpointUuid,
  kind: "event" as const,
  configVersion: 1,
  result: "retry" as const,
  retryAt: new Date(Date.now() + 60_000),
  attempt: { attemptedAt: new Date(), url: "https://receiver.example/hook", result: { statusCode: 500, excerpt: "", durationMs: 3 } },
  endpointFailing: options.endpointFailing
})

const lockWaiters = async () =>
  only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).n

/** A failure's SQLSTATE (40P01: deadlock detected; 55P03: lock timeout) and cause, for the assertion's message. */
const causeOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return ""
  const error = Cause.squash(exit.cause) as { readonly cause?: { readonly code?: string } }
  return `${error.cause?.code ?? ""} ${Cause.pretty(exit.cause)}`
}

describe("webhook lock order", () => {
  it("a worker recording a failed attempt while the owner pauses the endpoint: the endpoint first for both, no deadlock", async () => {
    const { owner, uuid } = await m.webhookEndpoint()
    // A delivery the worker leased, whose lease ran out while the attempt was out (a slow receiver): the owner's cancel reaches it too.
    const token = randomUUID()
    const [delivery] = await m.sql<{ uuid: string }>(`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version,
        next_attempt_at, lease_until, lease_token)
      VALUES ($1, 'event', $2, 'profile.updated', 1, now(), now() - interval '1 second', $3) RETURNING uuid`, uuid, randomUUID(), token)
    const outcome = await m.runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const held = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      // The owner's pause: the endpoint locked, then its pending deliveries cancelled (WebhookEndpoints.ts).
      const ownerSide = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* findOwnEndpoint(owner.profileUuid, uuid, { lock: true })
        yield* Deferred.succeed(held, undefined)
        yield* Deferred.await(go)
        return yield* cancelPendingDeliveries(uuid, "endpoint paused")
      })))
      yield* Deferred.await(held)
      // The worker: a 500 starts the endpoint's failing streak, and the delivery is due again.
      const workerSide = yield* Effect.fork(sql.withTransaction(recordOutcomes([answered500(delivery!.uuid, token, uuid, { endpointFailing: false })])))
      yield* Effect.promise(() => eventually(async () => (await lockWaiters()) >= 1, Boolean, "the worker to wait for the owner", { everyMs: 20 }))
      yield* Deferred.succeed(go, undefined)
      return { owner: yield* Fiber.await(ownerSide), worker: yield* Fiber.await(workerSide) }
    }))
    expect(Exit.isSuccess(outcome.owner), causeOf(outcome.owner)).toBe(true)
    expect(Exit.isSuccess(outcome.worker), causeOf(outcome.worker)).toBe(true)
    const [endpoint] = await m.sql<{ failing: boolean }>("SELECT failing_since IS NOT NULL AS failing FROM webhook_endpoints WHERE uuid = $1", uuid)
    expect(endpoint!.failing).toBe(true)
    const [attempts] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_uuid = $1", delivery!.uuid)
    expect(attempts!.n).toBe(1)
  })

  it("an attempt out while the owner pauses, recorded before the pause commits: the delivery ends cancelled, not pending behind a paused endpoint", async () => {
    const { owner, uuid } = await m.webhookEndpoint()
    // Its failing streak already started: recording another failure takes no lock on the endpoint.
    await m.sql("UPDATE webhook_endpoints SET failing_since = now() WHERE uuid = $1", uuid)
    const token = randomUUID()
    const [delivery] = await m.sql<{ uuid: string }>(`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version,
        next_attempt_at, lease_until, lease_token)
      VALUES ($1, 'event', $2, 'profile.updated', 1, now(), now() + interval '1 minute', $3) RETURNING uuid`, uuid, randomUUID(), token)
    const [revision] = await m.sql<{ revision: number }>("SELECT revision FROM webhook_endpoints WHERE uuid = $1", uuid)
    const outcome = await m.runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const paused = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      // The owner's pause (webhooks.update), done but not yet committed: the attempt is out, so its delivery is not cancelled now.
      const ownerSide = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        const updated = yield* updateWebhookEndpoint(owner, uuid, { requestUuid: randomUUID(), expectedRevision: revision!.revision, paused: true })
          .pipe(Effect.provideService(WebhookSettings, { publicOrigin: "https://birzha.test", allowHttpLoopback: false }))
        yield* Deferred.succeed(paused, undefined)
        yield* Deferred.await(go)
        return updated.endpoint.state
      })))
      yield* Effect.raceFirst(Deferred.await(paused), Fiber.join(ownerSide))
      // The attempt comes back 500: the worker records a retry while the pause is still uncommitted.
      const workerSide = yield* Effect.fork(sql.withTransaction(recordOutcomes([answered500(delivery!.uuid, token, uuid, { endpointFailing: true })])))
      // The worker either waits for the owner (then reads the pause) or is done before the commit.
      yield* Effect.promise(() => eventually(async () => (await lockWaiters()) >= 1 || workerSide.unsafePoll() !== null, Boolean, "the worker to wait or finish", { everyMs: 20 }))
      yield* Deferred.succeed(go, undefined)
      return { owner: yield* Fiber.await(ownerSide), worker: yield* Fiber.await(workerSide) }
    }))
    expect(Exit.isSuccess(outcome.owner), causeOf(outcome.owner)).toBe(true)
    expect(Exit.isSuccess(outcome.worker), causeOf(outcome.worker)).toBe(true)
    const [row] = await m.sql<{ status: string; cancel_reason: string | null; next: boolean; finished: boolean }>(
      "SELECT status, cancel_reason, next_attempt_at IS NOT NULL AS next, finished_at IS NOT NULL AS finished FROM webhook_deliveries WHERE uuid = $1",
      delivery!.uuid
    )
    expect(row).toEqual({ status: "cancelled", cancel_reason: "endpoint paused", next: false, finished: true })
  })

  it("a worker disabling an endpoint (410) does not wait for a delivery of it another worker is recording: no crosswise wait", async () => {
    const { uuid } = await m.webhookEndpoint()
    const insert = (token: string) =>
      m.sql<{ uuid: string }>(`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version,
          next_attempt_at, lease_until, lease_token)
        VALUES ($1, 'event', $2, 'profile.updated', 1, now(), now() + interval '1 minute', $3) RETURNING uuid`, uuid, randomUUID(), token)
    const goneToken = randomUUID()
    const [gone] = await insert(goneToken)
    const [other] = await insert(randomUUID())
    const outcome = await m.runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const held = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      // Another worker's uncommitted record of the other delivery (it holds that row).
      const otherWorker = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE webhook_deliveries SET updated_at = now() WHERE uuid = ${other!.uuid}`
        yield* Deferred.succeed(held, undefined)
        yield* Deferred.await(go)
      })))
      yield* Deferred.await(held)
      // This worker's 410: the endpoint disabled and its pending deliveries cancelled, within a bound on waiting.
      const recorded = yield* Effect.exit(sql.withTransaction(Effect.zipRight(
        sql`SET LOCAL lock_timeout = '10s'`,
        recordOutcomes([{ ...answered500(gone!.uuid, goneToken, uuid, { endpointFailing: false }), result: "failed", disable: "gone" }])
      )))
      yield* Deferred.succeed(go, undefined)
      yield* Fiber.join(otherWorker)
      return recorded
    }))
    expect(Exit.isSuccess(outcome), causeOf(outcome)).toBe(true)
    const rows = await m.sql<{ uuid: string; status: string }>("SELECT uuid, status FROM webhook_deliveries WHERE endpoint_uuid = $1 ORDER BY uuid", uuid)
    expect(new Map(rows.map((row) => [row.uuid, row.status]))).toEqual(new Map([[gone!.uuid, "failed"], [other!.uuid, "pending"]]))
    const [endpoint] = await m.sql<{ state: string }>("SELECT state FROM webhook_endpoints WHERE uuid = $1", uuid)
    expect(endpoint!.state).toBe("disabled")
  })

  it("a delivery whose worker died during a cancelled attempt is a new attempt once leased again: its failure is retried", async () => {
    const { uuid } = await m.webhookEndpoint()
    // Paused while the attempt was out, the worker killed, the endpoint resumed: pending, the lease run out, the reason left.
    const [delivery] = await m.sql<{ uuid: string }>(`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version,
        next_attempt_at, lease_until, lease_token, cancel_reason)
      VALUES ($1, 'event', $2, 'profile.updated', 1, now() - interval '1 hour', now() - interval '1 second', $3, 'endpoint paused') RETURNING uuid`,
      uuid, randomUUID(), randomUUID())
    const leased = await m.runtime.runPromise(leaseDueDeliveries({ free: 50, perEndpoint: 4, leaseSeconds: 60 }))
    const mine = leased.find((claimed) => claimed.uuid === delivery!.uuid)
    expect(mine?.uuid).toBe(delivery!.uuid)
    await m.runtime.runPromise(SqlClient.SqlClient.pipe(Effect.flatMap((sql) =>
      sql.withTransaction(recordOutcomes([answered500(delivery!.uuid, mine!.lease_token, uuid, { endpointFailing: false })])))))
    const [row] = await m.sql<{ status: string; cancel_reason: string | null; next: boolean }>(
      "SELECT status, cancel_reason, next_attempt_at IS NOT NULL AS next FROM webhook_deliveries WHERE uuid = $1", delivery!.uuid)
    expect(row).toEqual({ status: "pending", cancel_reason: null, next: true })
  })

  it("a delivery an automation rule queues is inserted while a worker's fan-out holds the endpoint", async () => {
    const { uuid } = await m.webhookEndpoint()
    const result = await m.runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const held = yield* Deferred.make<ReadonlyArray<string>>()
      const go = yield* Deferred.make<void>()
      const fanOut = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        const endpoints = yield* lockEndpointsBehind
        yield* Deferred.succeed(held, endpoints.map((endpoint) => endpoint.uuid))
        yield* Deferred.await(go)
      })))
      const locked = yield* Deferred.await(held)
      // The rule's insert (its foreign key check takes a key-share lock on the endpoint) with a generous limit on
      // waiting: a fan-out's FOR UPDATE made it wait for the whole fan-out transaction.
      const queued = yield* Effect.exit(sql.withTransaction(Effect.zipRight(
        sql`SET LOCAL lock_timeout = '10s'`,
        queueEventDelivery(uuid, { uuid: randomUUID(), type: "profile.updated", position: "1" })
      )))
      yield* Deferred.succeed(go, undefined)
      yield* Fiber.join(fanOut)
      return { locked, queued }
    }))
    expect(result.locked).toContain(uuid)
    expect(Exit.isSuccess(result.queued), causeOf(result.queued)).toBe(true)
  })
})
