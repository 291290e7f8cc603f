import { Effect } from "effect"
import type { Actor, SessionActor } from "../kernel/Authentication.js"
import { WebhooksApi } from "./WebhooksApi.js"
import { SessionRequired } from "../keys/KeyErrors.js"
import { implement } from "../operations/Implementation.js"
import { listWebhookDeliveries, recoverWebhookDeliveries, replayWebhookDelivery, sendTestDelivery } from "./WebhookDeliveries.js"
import {
  approveWebhookEndpoint,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint
} from "./WebhookEndpoints.js"

const sessionOf = (actor: Actor): Effect.Effect<SessionActor, SessionRequired> =>
  actor.via === "session"
    ? Effect.succeed(actor)
    : Effect.fail(new SessionRequired({ message: "The owner approves a webhook URL in a browser session, on its approvalUrl" }))

/** The webhook operations over the webhooks area's commands. */
export const WebhooksOperations = implement(WebhooksApi)({
  "webhooks.list": (_, actor) => listWebhookEndpoints(actor),
  "webhooks.create": ({ payload }, actor) => createWebhookEndpoint(actor, payload),
  "webhooks.update": ({ path, payload }, actor) => updateWebhookEndpoint(actor, path.uuid, payload),
  "webhooks.delete": ({ path }, actor) => deleteWebhookEndpoint(actor, path.uuid),
  "webhooks.approve": ({ path, payload }, actor) => Effect.flatMap(sessionOf(actor), (session) => approveWebhookEndpoint(session, path.uuid, payload)),
  "webhooks.test": ({ path, payload }, actor) => sendTestDelivery(actor, path.uuid, payload),
  "webhooks.rotate": ({ path, payload }, actor) => rotateWebhookSecret(actor, path.uuid, payload),
  "webhooks.deliveries": ({ path, urlParams }, actor) => listWebhookDeliveries(actor, path.uuid, urlParams),
  "webhooks.replay": ({ path, payload }, actor) => replayWebhookDelivery(actor, path.uuid, payload),
  "webhooks.recover": ({ path, payload }, actor) => recoverWebhookDeliveries(actor, path.uuid, payload)
})
