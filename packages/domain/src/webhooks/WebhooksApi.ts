import { HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  WebhookApprove,
  WebhookCommand,
  WebhookCreate,
  WebhookDeliveryPage,
  WebhookDeliveryQuery,
  WebhookDeliveryResult,
  WebhookEndpointList,
  WebhookEndpointResult,
  WebhookEndpointWithSecret,
  WebhookRecover,
  WebhookRecoverResult,
  WebhookUpdate
} from "./WebhookEndpoint.js"
import { SessionRequired } from "../keys/KeyErrors.js"
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"

const EndpointPath = Schema.Struct({ uuid: Schema.UUID })

const read = { scopes: ["webhooks:read"] }
const write = { scopes: ["webhooks:write"] }
/** Changes of what is sent where: a bearer key needs the owner's approval. */
const approved = { ...write, approval: true }

/**
 * Webhook endpoints (spec "Events and webhooks"): prepared → the owner approves the exact URL
 * (a browser session, on the approval page or `webhooks.approve`) → awaiting test → a test
 * answered 2xx → active. Changing the URL, event types or payload mode starts over; pause and
 * disable cancel pending attempts. Commands that change what is sent where need human approval
 * for bearer keys (`x-approval`).
 */
export const WebhooksApi = HttpApiGroup.make("webhooks", { topLevel: true })
  .add(authenticated("GET", "webhooks.list", "/api/v1/webhook-endpoints", { ...read, summary: "The acting profile's webhook endpoints" }).addSuccess(WebhookEndpointList))
  .add(
    authenticated("POST", "webhooks.create", "/api/v1/webhook-endpoints", {
      ...approved,
      summary: "Prepare an endpoint; the answer shows its signing secret once, and approvalUrl where the owner approves the exact URL"
    }, [wire(Forbidden), wire(RequestConflict)]).setPayload(WebhookCreate).addSuccess(WebhookEndpointWithSecret)
  )
  .add(
    authenticated("PATCH", "webhooks.update", "/api/v1/webhook-endpoints/:uuid", {
      ...approved,
      summary: "Change an endpoint at expectedRevision; a new URL, events or payload mode needs a new approval and test; paused pauses or resumes"
    }, [wire(NotFound), wire(RevisionConflict), wire(RequestConflict)])
      .setPath(EndpointPath)
      .setPayload(WebhookUpdate)
      .addSuccess(WebhookEndpointResult)
  )
  .add(
    authenticated("DELETE", "webhooks.delete", "/api/v1/webhook-endpoints/:uuid", {
      ...approved,
      summary: "Delete an endpoint; pending attempts are cancelled"
    }, [wire(NotFound)]).setPath(EndpointPath).addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    authenticated("POST", "webhooks.approve", "/api/v1/webhook-endpoints/:uuid/approve", {
      ...write,
      sessionOnly: true,
      sameOrigin: true,
      summary: "The owner, in a browser session, approves the endpoint's exact URL: prepared → awaiting_test"
    }, [wire(NotFound), wire(RevisionConflict), wire(InvalidState), wire(SessionRequired)])
      .setPath(EndpointPath)
      .setPayload(WebhookApprove)
      .addSuccess(WebhookEndpointResult)
  )
  .add(
    authenticated("POST", "webhooks.test", "/api/v1/webhook-endpoints/:uuid/test", {
      ...write,
      summary: "Queue a webhook.test delivery (one attempt); a 2xx answer makes an awaiting_test endpoint active"
    }, [wire(NotFound), wire(InvalidState), wire(RequestConflict)])
      .setPath(EndpointPath)
      .setPayload(WebhookCommand)
      .addSuccess(WebhookDeliveryResult)
  )
  .add(
    authenticated("POST", "webhooks.rotate", "/api/v1/webhook-endpoints/:uuid/rotate", {
      ...approved,
      summary: "A new signing secret, shown once; the previous one keeps signing for 24 hours"
    }, [wire(NotFound), wire(RequestConflict)])
      .setPath(EndpointPath)
      .setPayload(WebhookCommand)
      .addSuccess(WebhookEndpointWithSecret)
  )
  .add(
    authenticated("GET", "webhooks.deliveries", "/api/v1/webhook-endpoints/:uuid/deliveries", {
      ...read,
      summary: "Deliveries of an endpoint, newest first, unfinished ones included, each with its real attempts (kept 7 days)"
    }, [wire(NotFound)])
      .setPath(EndpointPath)
      .setUrlParams(WebhookDeliveryQuery)
      .addSuccess(WebhookDeliveryPage)
  )
  .add(
    authenticated("POST", "webhooks.replay", "/api/v1/webhook-endpoints/deliveries/:uuid/replay", {
      ...approved,
      summary: "Send one finished delivery again, with the same webhook-id and a fresh retry schedule"
    }, [wire(NotFound), wire(InvalidState), wire(RequestConflict)])
      .setPath(EndpointPath)
      .setPayload(WebhookCommand)
      .addSuccess(WebhookDeliveryResult)
  )
  .add(
    authenticated("POST", "webhooks.recover", "/api/v1/webhook-endpoints/:uuid/recover", {
      ...approved,
      extension: true,
      summary: "Send again every failed or cancelled event delivery of an active endpoint created since a time"
    }, [wire(NotFound), wire(InvalidState), wire(RequestConflict)])
      .setPath(EndpointPath)
      .setPayload(WebhookRecover)
      .addSuccess(WebhookRecoverResult)
  )
  .annotate(OpenApi.Description, "Signed webhooks (Standard Webhooks): endpoints, approval, tests, secrets and delivery history")
