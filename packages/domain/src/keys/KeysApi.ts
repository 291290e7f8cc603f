import { HttpApiGroup, OpenApi } from "@effect/platform"
import { InvalidScope, ReauthenticationRequired } from "./KeyErrors.js"
import { KeyCreate, KeyList, KeyPath, KeyResult, KeyUpdate, KeyWithSecret, ScopeList } from "./Key.js"
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { Authentication } from "../kernel/Authentication.js"
import { operation } from "../kernel/Operation.js"

/**
 * Integration keys (bearer) and the scope list: operations of ours (the spec names the settings
 * page, not an API). Managing keys is for the owner in a browser session only (`sessionOnly`:
 * a key never manages keys) and, as every mutating browser request, needs the service's `Origin`.
 */
export const KeysApi = HttpApiGroup.make("keys", { topLevel: true })
  .add(
    operation("GET", "scopes.list", "/api/v1/scopes", {
      extension: true,
      summary: "Every scope name of the catalog, the operations needing it, and whether a key may hold it"
    })
      .addSuccess(ScopeList)
  )
  .add(
    operation("GET", "keys.list", "/api/v1/keys", {
      extension: true,
      sessionOnly: true,
      summary: "The account's keys (the personal key first); never their secrets"
    })
      .middleware(Authentication)
      .addSuccess(KeyList)
  )
  .add(
    operation("POST", "keys.create", "/api/v1/keys", {
      extension: true,
      sessionOnly: true,
      sameOrigin: true,
      summary: "Create an application or company key; the answer carries its secret, once (sign-in within 10 minutes)"
    })
      .middleware(Authentication)
      .setPayload(KeyCreate)
      .addSuccess(KeyWithSecret)
      .addError(wire(ReauthenticationRequired))
      .addError(wire(InvalidScope))
      .addError(wire(NotFound))
      .addError(wire(Forbidden))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("PUT", "keys.update", "/api/v1/keys/:uuid", {
      extension: true,
      sessionOnly: true,
      sameOrigin: true,
      summary: "Replace a key's name, scopes and HTTP/MCP access at expectedRevision"
    })
      .middleware(Authentication)
      .setPath(KeyPath)
      .setPayload(KeyUpdate)
      .addSuccess(KeyResult)
      .addError(wire(InvalidScope))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "keys.reissue", "/api/v1/keys/:uuid/reissue", {
      extension: true,
      sessionOnly: true,
      sameOrigin: true,
      summary: "Issue a new secret (shown once; sign-in within 10 minutes); the previous one stops working"
    })
      .middleware(Authentication)
      .setPath(KeyPath)
      .addSuccess(KeyWithSecret)
      .addError(wire(ReauthenticationRequired))
      .addError(wire(NotFound))
      .addError(wire(InvalidState))
  )
  .add(
    operation("POST", "keys.revoke", "/api/v1/keys/:uuid/revoke", {
      extension: true,
      sessionOnly: true,
      sameOrigin: true,
      summary: "Revoke a key at once and for good"
    })
      .middleware(Authentication)
      .setPath(KeyPath)
      .addSuccess(KeyResult)
      .addError(wire(NotFound))
  )
  .annotate(OpenApi.Description, "Integration keys for the HTTP API and MCP, and the scopes they can hold")
