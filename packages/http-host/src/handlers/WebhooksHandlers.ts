import { type Actor, BirzhaApi, CurrentActor, type SessionActor, SessionRequired, WebhookSettings } from "@birzha/domain"
import {
  approveWebhookEndpoint,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  recoverWebhookDeliveries,
  replayWebhookDelivery,
  rotateWebhookSecret,
  sendTestDelivery,
  ServerSecret,
  updateWebhookEndpoint
} from "@birzha/domain/server"
import { booleanFlag } from "@birzha/infrastructure"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { HostSettings } from "../HostSettings.js"
import { noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

/** What webhook commands read from the host's settings; the approval page uses it too. */
export const WebhookSettingsLive = Layer.effect(
  WebhookSettings,
  Effect.gen(function*() {
    const { publicOrigin } = yield* HostSettings
    return { publicOrigin, allowHttpLoopback: yield* booleanFlag("BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK") }
  })
)

const sessionOf = (actor: Actor): Effect.Effect<SessionActor, SessionRequired> =>
  actor.via === "session"
    ? Effect.succeed(actor)
    : Effect.fail(new SessionRequired({ message: "The owner approves a webhook URL in a browser session, on its approvalUrl" }))

/** The webhook operations: thin adapters over `@birzha/domain`'s webhook commands. */
export const WebhooksHandlers = HttpApiBuilder.group(BirzhaApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const run = using(yield* Effect.context<SqlClient.SqlClient | ServerSecret | WebhookSettings>())
    return handlers
      .handle("webhooks.list", () =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(listWebhookEndpoints(yield* CurrentActor))
        }))
      .handle("webhooks.create", ({ payload }) =>
        Effect.gen(function*() {
          // The answer carries the signing secret: never kept by a cache.
          yield* noStore
          return yield* run(createWebhookEndpoint(yield* CurrentActor, payload))
        }))
      .handle("webhooks.update", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(updateWebhookEndpoint(yield* CurrentActor, path.uuid, payload))
        }))
      .handle("webhooks.delete", ({ path }) => Effect.flatMap(CurrentActor, (actor) => run(deleteWebhookEndpoint(actor, path.uuid))))
      .handle("webhooks.approve", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* noStore
          const actor = yield* Effect.flatMap(CurrentActor, sessionOf)
          return yield* run(approveWebhookEndpoint(actor, path.uuid, payload))
        }))
      .handle("webhooks.test", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(sendTestDelivery(yield* CurrentActor, path.uuid, payload))
        }))
      .handle("webhooks.rotate", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(rotateWebhookSecret(yield* CurrentActor, path.uuid, payload))
        }))
      .handle("webhooks.deliveries", ({ path, urlParams }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(listWebhookDeliveries(yield* CurrentActor, path.uuid, urlParams))
        }))
      .handle("webhooks.replay", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(replayWebhookDelivery(yield* CurrentActor, path.uuid, payload))
        }))
      .handle("webhooks.recover", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(recoverWebhookDeliveries(yield* CurrentActor, path.uuid, payload))
        }))
  })).pipe(Layer.provide(WebhookSettingsLive))
