import { HttpApiGroup, OpenApi } from "@effect/platform"
import { InvalidState, NotFound, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"
import {
  AuthorizationDecision,
  AuthorizationDecisionResult,
  AuthorizationRequestResult,
  ConnectedAgentList,
  ConnectedAgentResult,
  OAuthRequestPath
} from "./OAuth.js"

/**
 * The person's side of MCP authorization (operations of ours): the consent page reads an agent's
 * authorization request and decides it; connected agents are listed and disconnected beside the
 * keys. Browser session only, as keys are managed. The protocol endpoints themselves
 * (/oauth/authorize, /oauth/token, /oauth/register, /oauth/revoke, the metadata documents) speak
 * OAuth's own forms and JSON and are served by the host (AuthorizationServer.ts).
 */
const manage = { extension: true, sessionOnly: true, sameOrigin: true } as const

export const OAuthApi = HttpApiGroup.make("oauth", { topLevel: true })
  .add(
    authenticated("GET", "oauthRequests.get", "/api/v1/oauth/requests/:uuid", {
      extension: true,
      sessionOnly: true,
      summary: "An agent's authorization request: which client asks for which scopes, for the consent page"
    }, [wire(NotFound)]).setPath(OAuthRequestPath).addSuccess(AuthorizationRequestResult)
  )
  .add(
    authenticated("POST", "oauthRequests.decide", "/api/v1/oauth/requests/:uuid/decide", {
      ...manage,
      summary: "Allow or deny an agent's authorization request, once; the answer is where the browser goes next"
    }, [wire(NotFound), wire(InvalidState)]).setPath(OAuthRequestPath).setPayload(AuthorizationDecision).addSuccess(AuthorizationDecisionResult)
  )
  .add(
    authenticated("GET", "agents.list", "/api/v1/agents", {
      extension: true,
      sessionOnly: true,
      summary: "The account's connected agents (signed in through OAuth), live and recently disconnected"
    }).addSuccess(ConnectedAgentList)
  )
  .add(
    authenticated("POST", "agents.revoke", "/api/v1/agents/:uuid/revoke", {
      ...manage,
      summary: "Disconnect an agent at once: its tokens stop and what it prepared or started stops"
    }, [wire(NotFound)]).setPath(OAuthRequestPath).addSuccess(ConnectedAgentResult)
  )
  .annotate(OpenApi.Description, "Agents connected by signing in (MCP authorization, OAuth 2.1)")
