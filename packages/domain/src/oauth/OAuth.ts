import { Schema } from "effect"
import { DateTime, strict } from "../kernel/Common.js"
import { ProfileType } from "../profiles/Profile.js"

/**
 * Lifetimes of the MCP authorization server (docs/decisions.md "MCP authorization"): a consent
 * request and a code live minutes, an access token a quarter of an hour, a refresh token (rotated on
 * every use) a month.
 */
export const oauthLimits = {
  requestSeconds: 10 * 60,
  codeSeconds: 60,
  accessTokenSeconds: 15 * 60,
  refreshTokenSeconds: 30 * 24 * 3600,
  /** A client ID metadata document is fetched again after this long. */
  clientMetadataSeconds: 24 * 3600,
  redirectUrisMax: 10,
  clientNameMax: 100
} as const

/** Who asks, as the consent page shows it. */
export const OAuthClientView = Schema.Struct({
  clientId: Schema.String,
  name: Schema.String,
  kind: Schema.Literal("registered", "metadata_document").annotations({
    description: "registered: it registered itself here (its name is its own claim); metadata_document: its client id is the https address of its own metadata document"
  }),
  clientUri: Schema.optional(Schema.String)
}).annotations({ identifier: "OAuthClientView" })

/** A pending authorization request of an agent, for the person to allow or deny. */
export const AuthorizationRequestView = Schema.Struct({
  uuid: Schema.UUID,
  client: OAuthClientView,
  redirectOrigin: Schema.String.annotations({ description: "Where the answer goes back to: the redirect address's origin" }),
  scopes: Schema.Array(Schema.String),
  resource: Schema.String,
  profile: Schema.Struct({ uuid: Schema.UUID, name: Schema.String, type: ProfileType }).annotations({
    description: "The profile the agent will act as: the session's acting profile"
  }),
  state: Schema.Literal("pending", "allowed", "denied", "expired"),
  expiresAt: DateTime
}).annotations({ identifier: "AuthorizationRequestView" })
export type AuthorizationRequestView = typeof AuthorizationRequestView.Type

export const AuthorizationRequestResult = Schema.Struct({ request: AuthorizationRequestView }).annotations({ identifier: "AuthorizationRequestResult" })

export const AuthorizationDecision = Schema.Struct({
  decision: Schema.Literal("allow", "deny")
}).annotations({ identifier: "AuthorizationDecision", ...strict })

export const AuthorizationDecisionResult = Schema.Struct({
  redirectUrl: Schema.String.annotations({ description: "Where the browser goes now: the agent's redirect address with the code (allowed) or access_denied" })
}).annotations({ identifier: "AuthorizationDecisionResult" })

/** A connected agent as the person lists it beside their keys. */
export const ConnectedAgent = Schema.Struct({
  uuid: Schema.UUID,
  client: OAuthClientView,
  profile: Schema.Struct({ uuid: Schema.UUID, name: Schema.String, type: ProfileType }),
  scopes: Schema.Array(Schema.String),
  connectedAt: DateTime,
  lastUsedAt: Schema.optional(DateTime),
  revokedAt: Schema.optional(DateTime)
}).annotations({ identifier: "ConnectedAgent" })
export type ConnectedAgent = typeof ConnectedAgent.Type

export const ConnectedAgentList = Schema.Struct({ items: Schema.Array(ConnectedAgent) }).annotations({ identifier: "ConnectedAgentList" })
export const ConnectedAgentResult = Schema.Struct({ agent: ConnectedAgent }).annotations({ identifier: "ConnectedAgentResult" })

export const OAuthRequestPath = Schema.Struct({ uuid: Schema.UUID })

/**
 * A refusal of the OAuth endpoints (RFC 6749 §5.2, RFC 7591 §3.2.2): `error` is the protocol's
 * code (`invalid_grant`, `invalid_request`, `invalid_client`, `invalid_scope`, `invalid_target`,
 * `unsupported_grant_type`, `invalid_redirect_uri`, `invalid_client_metadata`). Not a catalog
 * error: the host answers it in the protocol's own JSON.
 */
export class OAuthRefusal extends Schema.TaggedError<OAuthRefusal>()("OAuthRefusal", {
  error: Schema.String,
  message: Schema.String
}) {}
