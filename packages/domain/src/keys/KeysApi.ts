import { HttpApiGroup, OpenApi } from "@effect/platform"
import { InvalidScope, ReauthenticationRequired } from "./KeyErrors.js"
import { KeyCreate, KeyList, KeyPath, KeyResult, KeyUpdate, KeyWithSecret, ScopeList } from "./Key.js"
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { anyone, authenticated } from "../kernel/Operation.js"

/**
 * Integration keys (bearer) and the scope list: operations of ours (the spec names the settings
 * page, not an API). Managing keys is for the owner in a browser session only (`sessionOnly`:
 * a key never manages keys) and, as every mutating browser request, needs the service's `Origin`.
 */
const manage = { extension: true, sessionOnly: true, sameOrigin: true } as const

export const KeysApi = HttpApiGroup.make("keys", { topLevel: true })
  .add(
    anyone("GET", "scopes.list", "/api/v1/scopes", {
      extension: true,
      summary: "Every scope name of the catalog, the operations needing it, and whether a key may hold it"
    }).addSuccess(ScopeList)
  )
  .add(
    authenticated("GET", "keys.list", "/api/v1/keys", {
      extension: true,
      sessionOnly: true,
      summary: "The account's keys (the personal key first); never their secrets"
    }).addSuccess(KeyList)
  )
  .add(
    authenticated("POST", "keys.create", "/api/v1/keys", {
      ...manage,
      summary: "Create an application or company key; the answer carries its secret, once (sign-in within 10 minutes)"
    }, [wire(ReauthenticationRequired), wire(InvalidScope), wire(NotFound), wire(Forbidden), wire(InvalidState), wire(RequestConflict)])
      .setPayload(KeyCreate)
      .addSuccess(KeyWithSecret)
  )
  .add(
    authenticated("PUT", "keys.update", "/api/v1/keys/:uuid", {
      ...manage,
      summary: "Replace a key's name, scopes and HTTP/MCP access at expectedRevision"
    }, [wire(InvalidScope), wire(NotFound), wire(InvalidState), wire(RevisionConflict), wire(RequestConflict)])
      .setPath(KeyPath)
      .setPayload(KeyUpdate)
      .addSuccess(KeyResult)
  )
  .add(
    authenticated("POST", "keys.reissue", "/api/v1/keys/:uuid/reissue", {
      ...manage,
      summary: "Issue a new secret (shown once; sign-in within 10 minutes); the previous one stops working"
    }, [wire(ReauthenticationRequired), wire(NotFound), wire(InvalidState)]).setPath(KeyPath).addSuccess(KeyWithSecret)
  )
  .add(
    authenticated("POST", "keys.revoke", "/api/v1/keys/:uuid/revoke", { ...manage, summary: "Revoke a key at once and for good" }, [wire(NotFound)])
      .setPath(KeyPath)
      .addSuccess(KeyResult)
  )
  .annotate(OpenApi.Description, "Integration keys for the HTTP API and MCP, and the scopes they can hold")
