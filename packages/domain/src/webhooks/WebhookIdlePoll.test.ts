import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Marketplace, openMarketplace } from "../../test/marketplace.js"
import { hasWebhookWork, leaseDueDeliveries } from "./WebhookDeliveryRepository.js"

/**
 * The webhook worker's idle poll (`hasWebhookWork`): one statement that says whether a delivery
 * cycle could find anything. It may say yes when a cycle finds nothing; it must never say no when
 * a cycle would lease a delivery or fan events out. Its own database: the poll reads every endpoint.
 */

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("webhook_idle_poll")
})
afterAll(async () => {
  await m?.close()
})

const probe = () => m.runtime.runPromise(hasWebhookWork)
const lease = () => m.runtime.runPromise(leaseDueDeliveries({ free: 10, perEndpoint: 4, leaseSeconds: 30 }))
const lastPosition = async () => (await m.sql<{ last: string }>("SELECT last_position::text AS last FROM event_sequence"))[0]!.last

describe("the webhook worker's idle poll", () => {
  it("says no while nothing is due or behind, and yes exactly when a cycle has something to lease or fan out", async () => {
    expect(await probe()).toBe(false)
    // Caught up with the sequence: nothing to fan out.
    const { uuid: endpoint } = await m.webhookEndpoint(await lastPosition())
    expect(await probe()).toBe(false)

    const delivery = (due: string, leasedFor: string | null) =>
      m.sql(`INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version, next_attempt_at, lease_until, lease_token)
        VALUES ($1, 'event', $2, 'profile.updated', 1, now() + $3::interval, now() + $4::interval, CASE WHEN $4::interval IS NULL THEN NULL ELSE gen_random_uuid() END)`,
        endpoint, randomUUID(), due, leasedFor)
    // A retry scheduled for later, and an attempt in a worker's hands: nothing for this cycle.
    await delivery("1 hour", null)
    await delivery("-1 minute", "30 seconds")
    expect(await probe()).toBe(false)
    expect(await lease()).toEqual([])

    // An attempt whose worker died (its lease ran out): due again.
    await delivery("-1 minute", "-1 second")
    expect(await probe()).toBe(true)
    const leased = await lease()
    expect(leased).toHaveLength(1)
    expect(await probe()).toBe(false)

    // A paused endpoint's due delivery is not leased, and the poll does not look at it either.
    await delivery("-1 second", null)
    await m.sql("UPDATE webhook_endpoints SET paused_at = now() WHERE uuid = $1", endpoint)
    expect(await probe()).toBe(false)
    expect(await lease()).toEqual([])
    await m.sql("UPDATE webhook_endpoints SET paused_at = NULL WHERE uuid = $1", endpoint)
    expect(await probe()).toBe(true)
    expect(await lease()).toHaveLength(1)
    expect(await probe()).toBe(false)

    // A new event sequenced after the endpoint's position: a fan-out to make.
    await m.sql("UPDATE webhook_endpoints SET after_position = after_position - 1 WHERE uuid = $1", endpoint)
    expect(await probe()).toBe(true)
  })
})
