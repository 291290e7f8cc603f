import { Mailer, WebhookSettings } from "@birzha/domain/internal"
import {
  accountForVerifiedEmail,
  approveWebhookEndpoint,
  createWebhookEndpoint,
  sendTestDelivery,
  ServerSecret
} from "@birzha/domain/internal"
import { appendEvent, runMigrations } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sessionActor } from "../../../../testing/actors.js"
import { type EmbeddedDataDir, embeddedDataDir } from "../../../../testing/pglite.js"
import { startReceiver } from "../../../../testing/webhookReceiver.js"
import { makePgliteClient } from "@birzha/infrastructure"
import { sequencePending } from "../events/Sequencer.js"
import { makeWebhookJob } from "./WebhookDispatcher.js"

/** PGlite's initdb, run once per test run for the template data directory. */
const initialise = (dir: string) => Effect.runPromise(Effect.scoped(makePgliteClient(dir)))
let data: EmbeddedDataDir
beforeAll(async () => {
  data = await embeddedDataDir("webhooks", initialise)
})
afterAll(() => data?.remove())

describe("webhooks on the embedded database", () => {
  it("approve, test, activate and deliver a signed event through PGlite, with the same SQL", async () => {
    const receiver = await startReceiver()
    try {
      const outcome = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const sql = yield* makePgliteClient(data.dir)
        const services = Layer.mergeAll(
          Layer.succeed(SqlClient.SqlClient, sql),
          Layer.succeed(ServerSecret, Redacted.make("e".repeat(32))),
          Layer.succeed(WebhookSettings, { publicOrigin: "http://localhost:8080", allowHttpLoopback: true }),
          Layer.succeed(Mailer, { send: () => Effect.void })
        )
        return yield* Effect.gen(function*() {
          yield* runMigrations
          const signedIn = yield* accountForVerifiedEmail("embedded.webhooks@example.com")
          const actor = sessionActor(signedIn, "embedded")
          const created = yield* createWebhookEndpoint(actor, { requestUuid: crypto.randomUUID(), url: receiver.url, eventTypes: ["profile.*"] })
          const uuid = created.endpoint.uuid
          yield* approveWebhookEndpoint(actor, uuid, { url: created.endpoint.url, expectedRevision: 1 })
          yield* sendTestDelivery(actor, uuid, { requestUuid: crypto.randomUUID() })
          const job = yield* makeWebhookJob({ allowHttpLoopback: true })
          const runUntil = (done: () => Effect.Effect<boolean, unknown>) =>
            Effect.gen(function*() {
              for (let i = 0; i < 200; i++) {
                yield* sequencePending(100)
                yield* job.run
                if (yield* done()) return
                yield* Effect.sleep("20 millis")
              }
              throw new Error("not done in time")
            })
          const stateOf = () => Effect.map(sql<{ state: string }>`SELECT state FROM webhook_endpoints WHERE uuid = ${uuid}`, (rows) => rows[0]?.state)
          yield* runUntil(() => Effect.map(stateOf(), (state) => state === "active"))
          const event = yield* sql.withTransaction(appendEvent({
            type: "profile.updated",
            aggregate: { kind: "profile", uuid: actor.profileUuid, revision: 2 },
            data: { objectUuid: actor.profileUuid, status: "updated" },
            context: { profileUuid: actor.profileUuid }
          }))
          yield* runUntil(() => Effect.succeed(receiver.ids().includes(event)))
          return { secret: created.secret, event }
        }).pipe(Effect.provide(services))
      })))
      expect(receiver.received).toHaveLength(2)
      const delivered = receiver.received[1]!
      const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(delivered.headers[h])]))
      expect(new Webhook(outcome.secret).verify(delivered.body, headers)).toMatchObject({ uuid: outcome.event, type: "profile.updated" })
    } finally {
      await receiver.stop()
    }
  })
})
