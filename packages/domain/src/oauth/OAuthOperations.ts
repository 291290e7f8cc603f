import { Effect } from "effect"
import type { Actor, SessionActor } from "../kernel/Authentication.js"
import { SessionRequired } from "../keys/KeyErrors.js"
import { implement } from "../operations/Implementation.js"
import { authorizationRequest, decideAuthorization, disconnectAgent, listAgents } from "./AuthorizationServer.js"
import { OAuthApi } from "./OAuthApi.js"

/** Session-only in the catalog (the registry refuses keys); narrowed here for the types. */
const sessionOf = (actor: Actor): Effect.Effect<SessionActor, SessionRequired> =>
  actor.via === "session" ? Effect.succeed(actor) : Effect.fail(new SessionRequired({ message: "Agents are connected and managed in a browser session only" }))

export const OAuthOperations = implement(OAuthApi)({
  "oauthRequests.get": ({ path }, actor) => Effect.flatMap(sessionOf(actor), (session) => authorizationRequest(session, path.uuid)),
  "oauthRequests.decide": ({ path, payload }, actor) =>
    Effect.flatMap(sessionOf(actor), (session) => decideAuthorization(session, path.uuid, payload.decision)),
  "agents.list": (_, actor) => Effect.flatMap(sessionOf(actor), listAgents),
  "agents.revoke": ({ path }, actor) => Effect.flatMap(sessionOf(actor), (session) => disconnectAgent(session, path.uuid))
})
