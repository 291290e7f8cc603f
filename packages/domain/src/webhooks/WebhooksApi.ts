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
import { Authentication } from "../kernel/Authentication.js"
import { operation } from "../kernel/Operation.js"

const EndpointPath = Schema.Struct({ uuid: Schema.UUID })

/**
 * Webhook endpoints (spec "Events and webhooks"): prepared → the owner approves the exact URL
 * (a browser session, on the approval page or `webhooks.approve`) → awaiting test → a test
 * answered 2xx → active. Changing the URL, event types or payload mode starts over; pause and
 * disable cancel pending attempts. Commands that change what is sent where need human approval
 * for bearer keys (`x-approval`).
 */
export const WebhooksApi = HttpApiGroup.make("webhooks", { topLevel: true })
  .add(
    operation("GET", "webhooks.list", "/api/v1/webhook-endpoints", {
      scopes: ["webhooks:read"],
      summary: "The acting profile's webhook endpoints"
    })
      .middleware(Authentication)
      .addSuccess(WebhookEndpointList)
  )
  .add(
    operation("POST", "webhooks.create", "/api/v1/webhook-endpoints", {
      scopes: ["webhooks:write"],
      approval: true,
      summary: "Prepare an endpoint; the answer shows its signing secret once, and approvalUrl where the owner approves the exact URL"
    })
      .middleware(Authentication)
      .setPayload(WebhookCreate)
      .addSuccess(WebhookEndpointWithSecret)
      .addError(wire(Forbidden))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("PATCH", "webhooks.update", "/api/v1/webhook-endpoints/:uuid", {
      scopes: ["webhooks:write"],
      approval: true,
      summary: "Change an endpoint at expectedRevision; a new URL, events or payload mode needs a new approval and test; paused pauses or resumes"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .setPayload(WebhookUpdate)
      .addSuccess(WebhookEndpointResult)
      .addError(wire(NotFound))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("DELETE", "webhooks.delete", "/api/v1/webhook-endpoints/:uuid", {
      scopes: ["webhooks:write"],
      approval: true,
      summary: "Delete an endpoint; pending attempts are cancelled"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(wire(NotFound))
  )
  .add(
    operation("POST", "webhooks.approve", "/api/v1/webhook-endpoints/:uuid/approve", {
      scopes: ["webhooks:write"],
      sessionOnly: true,
      sameOrigin: true,
      summary: "The owner, in a browser session, approves the endpoint's exact URL: prepared → awaiting_test"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .setPayload(WebhookApprove)
      .addSuccess(WebhookEndpointResult)
      .addError(wire(NotFound))
      .addError(wire(RevisionConflict))
      .addError(wire(InvalidState))
      .addError(wire(SessionRequired))
  )
  .add(
    operation("POST", "webhooks.test", "/api/v1/webhook-endpoints/:uuid/test", {
      scopes: ["webhooks:write"],
      summary: "Queue a webhook.test delivery (one attempt); a 2xx answer makes an awaiting_test endpoint active"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .setPayload(WebhookCommand)
      .addSuccess(WebhookDeliveryResult)
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "webhooks.rotate", "/api/v1/webhook-endpoints/:uuid/rotate", {
      scopes: ["webhooks:write"],
      approval: true,
      summary: "A new signing secret, shown once; the previous one keeps signing for 24 hours"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .setPayload(WebhookCommand)
      .addSuccess(WebhookEndpointWithSecret)
      .addError(wire(NotFound))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "webhooks.deliveries", "/api/v1/webhook-endpoints/:uuid/deliveries", {
      scopes: ["webhooks:read"],
      summary: "Deliveries of an endpoint, newest first, unfinished ones included, each with its real attempts (kept 7 days)"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .setUrlParams(WebhookDeliveryQuery)
      .addSuccess(WebhookDeliveryPage)
      .addError(wire(NotFound))
  )
  .add(
    operation("POST", "webhooks.replay", "/api/v1/webhook-endpoints/deliveries/:uuid/replay", {
      scopes: ["webhooks:write"],
      approval: true,
      summary: "Send one finished delivery again, with the same webhook-id and a fresh retry schedule"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .setPayload(WebhookCommand)
      .addSuccess(WebhookDeliveryResult)
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "webhooks.recover", "/api/v1/webhook-endpoints/:uuid/recover", {
      extension: true,
      scopes: ["webhooks:write"],
      approval: true,
      summary: "Send again every failed or cancelled event delivery of an active endpoint created since a time"
    })
      .middleware(Authentication)
      .setPath(EndpointPath)
      .setPayload(WebhookRecover)
      .addSuccess(WebhookRecoverResult)
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Signed webhooks (Standard Webhooks): endpoints, approval, tests, secrets and delivery history")
