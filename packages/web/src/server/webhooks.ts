import { type BirzhaClient, NotFound } from "@birzha/client"
import { Effect, type Either } from "effect"
import { plain, uuidPattern } from "../components/json.js"
import type { PageData, WebhookDeliveryView, WebhookEndpointView } from "../model.js"
import type { Refusal, ServerApi } from "./api.js"

/** Endpoints a profile may have (webhookLimits.endpointsPerProfile in packages/domain/src/webhooks/WebhookEndpoint.ts). */
export const webhookEndpointLimit = 20

/** Deliveries the endpoint's page shows at once (webhooks.deliveries takes at most 100). */
export const webhookDeliveriesShown = 50

/** The acting profile's endpoint by uuid, read from its list (the API has no single read of one). */
export const ownWebhook = (client: BirzhaClient, uuid: string) =>
  Effect.flatMap(client["webhooks.list"](), (list) => {
    const found = uuidPattern.test(uuid) ? list.items.find((item) => item.uuid === uuid.toLowerCase()) : undefined
    return found === undefined
      ? Effect.fail(new NotFound({ message: "The acting profile has no such webhook" }))
      : Effect.succeed(plain(found) as WebhookEndpointView)
  })

/**
 * The webhook pages' data: `/settings/webhooks` (the profile's endpoints and the event catalog to
 * pick from) and `/settings/webhooks/{uuid}` (one endpoint with its latest deliveries and their
 * attempts). `undefined`: not one of these paths.
 */
export const loadWebhooks = (api: ServerApi, path: string, cookie: string): Promise<Either.Either<PageData, Refusal>> | undefined => {
  const run = (program: (client: BirzhaClient) => Effect.Effect<PageData, unknown>) => api.run(program, cookie)
  if (path === "/settings/webhooks") {
    return run((client) =>
      Effect.all({ list: client["webhooks.list"](), catalog: client["events.catalog"]() }, { concurrency: "unbounded" }).pipe(
        Effect.map(({ catalog, list }): PageData => ({
          page: "webhooks",
          endpoints: list.items.map((item) => plain(item) as WebhookEndpointView),
          catalog: catalog.types.map((entry) => ({ type: entry.type, aggregateKind: entry.aggregateKind, sample: JSON.stringify(plain(entry.sample), null, 2) })),
          limit: webhookEndpointLimit
        }))
      ))
  }
  const prefix = "/settings/webhooks/"
  if (path.startsWith(prefix) && !path.slice(prefix.length).includes("/")) {
    const uuid = path.slice(prefix.length)
    return run((client) =>
      Effect.flatMap(ownWebhook(client, uuid), (endpoint) =>
        Effect.map(client["webhooks.deliveries"]({ path: { uuid: endpoint.uuid }, urlParams: { limit: webhookDeliveriesShown } }), (page): PageData => ({
          page: "webhook",
          endpoint,
          deliveries: page.items.map((item) => plain(item) as WebhookDeliveryView)
        }))))
  }
  return undefined
}
