import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { keyedHash, sameHash, ServerSecret } from "../auth/ServerSecret.js"
import { InvalidState, NotFound } from "../kernel/ApiError.js"
import type { KeyActor, SessionActor } from "../kernel/Authentication.js"
import { insertAgentKey, revokeAgentKey, revokeKeys, touchLastUsed } from "../keys/KeyRepository.js"
import { grantableScopes, isGrantableScope } from "../keys/Scopes.js"
import { PublicOrigin } from "../operations/PublicOrigin.js"
import { type ClientResolver, resolveClient } from "./ClientMetadata.js"
import { type AuthorizationRequestView, type ConnectedAgent, oauthLimits, OAuthRefusal } from "./OAuth.js"
import {
  accessActorByHash,
  type AgentRow,
  agentsOfAccount,
  decideRequest,
  findClient,
  findRequest,
  findToken,
  insertAgentClient,
  insertCode,
  insertRequest,
  insertToken,
  keyOfUsedCode,
  revokeToken,
  revokeTokensOfKey,
  setCodeKey,
  useCode,
  useRefreshToken
} from "./OAuthRepository.js"

/**
 * The service as the OAuth 2.1 authorization server of its own MCP resource (the MCP authorization
 * specification; RFC 8414, 9728, 8707, 7636, 7009, 7591). Transport-free: the host parses the
 * protocol's forms and answers its JSON (packages/http-host/src/handlers/OAuthRoutes.ts); the
 * consent and the connected agents are catalog operations (OAuthApi.ts).
 */

/** The MCP endpoint is the one protected resource; its canonical URI is what tokens are bound to. */
export const mcpResourceOf = (origin: string): string => `${origin}/mcp`
export const mcpResource = Effect.map(PublicOrigin, mcpResourceOf)

/**
 * What an agent is offered when it asks for no scope, and what the MCP endpoint's 401 names
 * (`scope`, which the MCP clients ask for first): the work of a person's agent, as the keys' "agent"
 * preset (packages/web/src/pages/IntegrationsPage/keyPresets.ts) and the default tool set serve it.
 */
export const defaultAgentScopes: ReadonlyArray<string> = [
  "profiles:read", "tasks:read", "tasks:write", "tasks:submit", "services:read", "services:write", "services:submit",
  "responses:read", "responses:write", "offers:read", "offers:write", "deals:read", "deals:write",
  "threads:read", "threads:write", "files:read", "files:write", "events:read"
].filter((scope) => grantableScopes.includes(scope)).sort()

const purposes = { code: "oauth_code", access: "oauth_access", refresh: "oauth_refresh" } as const

/** `birzha_ac_` codes, `birzha_at_` access and `birzha_rt_` refresh tokens: 256 random bits each, recognisable by scanners. */
const newSecret = (prefix: "ac" | "at" | "rt") => `birzha_${prefix}_${randomBytes(32).toString("base64url")}`

const hashOf = (purpose: keyof typeof purposes, raw: string) => Effect.map(ServerSecret, (secret) => keyedHash(secret, purposes[purpose], raw))

const refuse = (error: string, message: string) => Effect.fail(new OAuthRefusal({ error, message }))

/** RFC 7636: 43 to 128 unreserved characters; the challenge is the verifier's SHA-256 in base64url. */
const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/
const challengePattern = /^[A-Za-z0-9_-]{43}$/
const challengeOf = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

/** `scope` as space-separated names, each one a key may hold; none asked: the default. */
const scopesOf = (scope: string | undefined): ReadonlyArray<string> | string => {
  const asked = [...new Set((scope ?? "").split(" ").filter((name) => name !== ""))]
  if (asked.length === 0) return defaultAgentScopes
  const unknown = asked.filter((name) => !isGrantableScope(name))
  return unknown.length === 0 ? asked.sort() : `not a scope an agent may hold: ${unknown.join(", ")}`
}

export type AuthorizeOutcome =
  /** Shown to the person, never sent to an address we cannot trust (unknown client, unregistered redirect). */
  | { readonly _tag: "Problem"; readonly message: string }
  /** Where the browser goes: the consent page, or the client's redirect address with an error. */
  | { readonly _tag: "Redirect"; readonly location: string }

const withParams = (base: string, params: Record<string, string | undefined>) => {
  const url = new URL(base)
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value)
  return url.toString()
}

/**
 * GET /oauth/authorize: checks the client and its redirect address first (a problem there is shown,
 * never redirected), then the rest (PKCE S256 only, the resource, the scopes; refused to the client's
 * redirect address), and keeps the request for the person's decision on the consent page.
 */
export const oauthAuthorize = (
  params: Readonly<Record<string, string | undefined>>,
  resolver: ClientResolver
): Effect.Effect<AuthorizeOutcome, SqlError, SqlClient.SqlClient | PublicOrigin> =>
  Effect.gen(function*() {
    const origin = yield* PublicOrigin
    const clientId = params["client_id"]
    if (clientId === undefined || clientId === "") return { _tag: "Problem", message: "client_id is missing" } as const
    // Only the client's refusal is shown; a database failure stays one.
    const client = yield* resolveClient(clientId, resolver).pipe(
      Effect.map(Either.right),
      Effect.catchTag("OAuthRefusal", (refusal) => Effect.succeed(Either.left(refusal)))
    )
    if (client._tag === "Left") return { _tag: "Problem", message: `The client ${clientId} is not known: ${client.left.message}` } as const
    const redirectUris = client.right.redirect_uris
    const redirectUri = params["redirect_uri"] ?? (redirectUris.length === 1 ? redirectUris[0] : undefined)
    if (redirectUri === undefined || !redirectUris.includes(redirectUri)) {
      return { _tag: "Problem", message: "redirect_uri is not one the client registered" } as const
    }
    const state = params["state"]
    const back = (error: string, description: string) =>
      ({ _tag: "Redirect", location: withParams(redirectUri, { error, error_description: description, state, iss: origin }) }) as const
    if (params["response_type"] !== "code") return back("unsupported_response_type", "response_type must be code")
    const challenge = params["code_challenge"]
    if (challenge === undefined) return back("invalid_request", "code_challenge is required (PKCE)")
    if (params["code_challenge_method"] !== "S256") return back("invalid_request", "code_challenge_method must be S256")
    if (!challengePattern.test(challenge)) return back("invalid_request", "code_challenge must be a base64url SHA-256 (43 characters)")
    const resource = mcpResourceOf(origin)
    if (params["resource"] !== undefined && params["resource"] !== resource) {
      return back("invalid_target", `resource must be ${resource}, the one resource this server protects`)
    }
    const scopes = scopesOf(params["scope"])
    if (typeof scopes === "string") return back("invalid_scope", scopes)
    const uuid = yield* insertRequest({
      clientId,
      redirectUri,
      scopes,
      resource,
      codeChallenge: challenge,
      state,
      seconds: oauthLimits.requestSeconds
    })
    return { _tag: "Redirect", location: `${origin}/oauth/consent/${uuid}` } as const
  })

const requestOf = (uuid: string, lock: boolean) =>
  Effect.flatMap(findRequest(uuid, lock), Option.match({
    onNone: () => Effect.fail(new NotFound({ message: `No authorization request ${uuid}` })),
    onSome: Effect.succeed
  }))

const clientView = (row: { readonly client_id: string; readonly kind: "registered" | "metadata_document"; readonly name: string; readonly client_uri: string | null }) => ({
  clientId: row.client_id,
  name: row.name,
  kind: row.kind,
  ...(row.client_uri === null ? {} : { clientUri: row.client_uri })
})

/** The request as the consent page shows it to a signed-in person, for their acting profile. */
export const authorizationRequest = (
  actor: SessionActor,
  uuid: string
): Effect.Effect<{ readonly request: AuthorizationRequestView }, NotFound | SqlError, SqlClient.SqlClient | PublicOrigin> =>
  Effect.gen(function*() {
    const row = yield* requestOf(uuid, false)
    const client = yield* findClient(row.client_id, oauthLimits.clientMetadataSeconds)
    if (Option.isNone(client)) return yield* new NotFound({ message: `No client ${row.client_id}` })
    return {
      request: {
        uuid: row.uuid,
        client: clientView(client.value),
        redirectOrigin: new URL(row.redirect_uri).origin,
        scopes: row.scopes,
        resource: row.resource,
        profile: { uuid: actor.profileUuid, name: actor.profileName, type: actor.profileType },
        state: row.decision === "allow" ? "allowed" : row.decision === "deny" ? "denied" : row.expired ? "expired" : "pending",
        expiresAt: row.expires_at
      }
    }
  })

/**
 * The person's decision, once: allowing makes a one-time code (a minute, bound to the client, the
 * redirect address, the PKCE challenge, the resource, the person's acting profile and the scopes);
 * denying sends `access_denied`. Either way the answer is where the browser goes next.
 */
export const decideAuthorization = (
  actor: SessionActor,
  uuid: string,
  decision: "allow" | "deny"
): Effect.Effect<{ readonly redirectUrl: string }, NotFound | InvalidState | SqlError, SqlClient.SqlClient | PublicOrigin | ServerSecret> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const origin = yield* PublicOrigin
    return yield* sql.withTransaction(Effect.gen(function*() {
      const row = yield* requestOf(uuid, true)
      if (row.decision !== null) return yield* new InvalidState({ message: "This authorization request was decided already" })
      if (row.expired) return yield* new InvalidState({ message: "This authorization request expired; start the connection again from the agent" })
      yield* decideRequest(uuid, decision)
      const state = row.state ?? undefined
      if (decision === "deny") {
        return { redirectUrl: withParams(row.redirect_uri, { error: "access_denied", error_description: "The person denied access", state, iss: origin }) }
      }
      const code = newSecret("ac")
      yield* insertCode({
        hash: yield* hashOf("code", code),
        requestUuid: uuid,
        clientId: row.client_id,
        accountUuid: actor.accountUuid,
        profileUuid: actor.profileUuid,
        scopes: row.scopes,
        redirectUri: row.redirect_uri,
        resource: row.resource,
        codeChallenge: row.code_challenge,
        seconds: oauthLimits.codeSeconds
      })
      return { redirectUrl: withParams(row.redirect_uri, { code, state, iss: origin }) }
    }))
  })

/** The token endpoint's answer (RFC 6749 §5.1). */
export interface TokenAnswer {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope: string
}

const issueTokens = (keyUuid: string, clientId: string, resource: string, scopes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const access = newSecret("at")
    const refresh = newSecret("rt")
    yield* insertToken({ hash: yield* hashOf("access", access), kind: "access", keyUuid, clientId, resource, seconds: oauthLimits.accessTokenSeconds })
    yield* insertToken({ hash: yield* hashOf("refresh", refresh), kind: "refresh", keyUuid, clientId, resource, seconds: oauthLimits.refreshTokenSeconds })
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: oauthLimits.accessTokenSeconds,
      refresh_token: refresh,
      scope: scopes.join(" ")
    } satisfies TokenAnswer
  })

/** Disconnects an agent: its key (what it started stops) and every token it holds. */
const disconnect = (keyUuid: string) => Effect.zipRight(revokeAgentKey(keyUuid), revokeTokensOfKey(keyUuid))

/**
 * `grant_type=authorization_code`: the code is used once whatever follows (a wrong verifier burns
 * it); a code presented again disconnects what its first use made (OAuth 2.1 §4.1.3).
 */
const exchangeCode = (form: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function*() {
    const code = form["code"]
    const verifier = form["code_verifier"]
    if (code === undefined || verifier === undefined) return yield* refuse("invalid_request", "code and code_verifier are required")
    const hash = yield* hashOf("code", code)
    const found = yield* useCode(hash)
    if (Option.isNone(found)) {
      const replayed = yield* keyOfUsedCode(hash)
      if (Option.isSome(replayed) && replayed.value !== null) yield* disconnect(replayed.value)
      return yield* refuse("invalid_grant", "The code is unknown, or was used already")
    }
    const row = found.value
    if (row.expired) return yield* refuse("invalid_grant", "The code expired")
    if (form["client_id"] !== row.client_id) return yield* refuse("invalid_grant", "The code was issued to another client")
    if (form["redirect_uri"] !== row.redirect_uri) return yield* refuse("invalid_grant", "redirect_uri differs from the authorization request's")
    if (form["resource"] !== undefined && form["resource"] !== row.resource) return yield* refuse("invalid_target", `resource must be ${row.resource}`)
    if (!verifierPattern.test(verifier) || !sameHash(challengeOf(verifier), row.code_challenge)) {
      return yield* refuse("invalid_grant", "code_verifier does not match the code_challenge")
    }
    const client = yield* findClient(row.client_id, oauthLimits.clientMetadataSeconds)
    if (Option.isNone(client)) return yield* refuse("invalid_client", "The client is not known")
    const keyUuid = yield* insertAgentKey({ accountUuid: row.account_uuid, profileUuid: row.profile_uuid, name: client.value.name, scopes: row.scopes })
    yield* insertAgentClient(keyUuid, row.client_id)
    yield* setCodeKey(hash, keyUuid)
    return yield* issueTokens(keyUuid, row.client_id, row.resource, row.scopes)
  })

/**
 * `grant_type=refresh_token`: each refresh token works once and is replaced (rotation); one
 * presented again means it leaked, so the whole connection is disconnected (reuse detection).
 */
const refreshTokens = (form: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function*() {
    const token = form["refresh_token"]
    if (token === undefined) return yield* refuse("invalid_request", "refresh_token is required")
    const hash = yield* hashOf("refresh", token)
    const used = yield* useRefreshToken(hash)
    if (Option.isNone(used)) {
      const known = yield* findToken(hash)
      if (Option.isSome(known)) yield* disconnect(known.value.key_uuid)
      return yield* refuse("invalid_grant", "The refresh token is unknown, revoked or used already")
    }
    const row = used.value
    if (row.expired) return yield* refuse("invalid_grant", "The refresh token expired")
    if (form["client_id"] !== row.client_id) return yield* refuse("invalid_grant", "The refresh token was issued to another client")
    if (form["resource"] !== undefined && form["resource"] !== row.resource) return yield* refuse("invalid_target", `resource must be ${row.resource}`)
    return yield* issueTokens(row.key_uuid, row.client_id, row.resource, row.scopes)
  })

/**
 * POST /oauth/token, in one transaction that commits a refusal's effects too: the spent code, the
 * disconnected family (the refusal is carried out of the transaction as a value, then failed).
 */
export const oauthToken = (
  form: Readonly<Record<string, string | undefined>>
): Effect.Effect<TokenAnswer, OAuthRefusal | SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const committed = (grant: Effect.Effect<TokenAnswer, OAuthRefusal | SqlError, SqlClient.SqlClient | ServerSecret>) =>
      Effect.flatten(sql.withTransaction(grant.pipe(
        Effect.map(Either.right),
        Effect.catchTag("OAuthRefusal", (refusal) => Effect.succeed(Either.left(refusal)))
      )))
    switch (form["grant_type"]) {
      case "authorization_code":
        return committed(exchangeCode(form))
      case "refresh_token":
        return committed(refreshTokens(form))
      default:
        return refuse("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
    }
  })

/**
 * POST /oauth/revoke (RFC 7009): a refresh token disconnects its connection, an access token stops
 * alone; an unknown token is no error.
 */
export const oauthRevoke = (form: Readonly<Record<string, string | undefined>>): Effect.Effect<void, SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const raw = form["token"]
    if (raw === undefined) return
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      for (const kind of ["refresh", "access"] as const) {
        const hash = yield* hashOf(kind, raw)
        const found = yield* findToken(hash)
        if (Option.isNone(found) || found.value.kind !== kind) continue
        if (form["client_id"] !== undefined && form["client_id"] !== found.value.client_id) return
        if (kind === "refresh") yield* disconnect(found.value.key_uuid)
        else yield* revokeToken(hash)
        return
      }
    }))
  })

const lastUsedResolutionSeconds = 3600

/** The actor behind an access token at the MCP endpoint: a key of the connection's scopes, MCP only. */
export const actorForAccessToken = (
  raw: Redacted.Redacted<string>
): Effect.Effect<Option.Option<KeyActor>, SqlError, SqlClient.SqlClient | ServerSecret | PublicOrigin> =>
  Effect.gen(function*() {
    const value = Redacted.value(raw)
    if (!value.startsWith("birzha_at_")) return Option.none()
    const found = yield* accessActorByHash(yield* hashOf("access", value), yield* mcpResource, lastUsedResolutionSeconds)
    if (Option.isNone(found)) return Option.none()
    const row = found.value
    if (row.stale) yield* Effect.flatMap(SqlClient.SqlClient, (sql) => touchLastUsed(sql, row.key_uuid))
    return Option.some<KeyActor>({
      accountUuid: row.account_uuid,
      email: row.email,
      profileUuid: row.profile_uuid,
      profileName: row.name,
      profileType: row.type,
      expiresAt: row.token_expires_at,
      via: "mcp",
      keyUuid: row.key_uuid,
      keyName: row.key_name,
      keyKind: "agent",
      scopes: row.scopes,
      httpEnabled: false,
      mcpEnabled: true
    })
  })

/** Disconnected agents stay listed this long, as revoked keys do. */
const revokedKeptDays = 30

const agentOf = (row: AgentRow): ConnectedAgent => ({
  uuid: row.uuid,
  client: clientView({ client_id: row.client_id, kind: row.client_kind, name: row.client_name, client_uri: row.client_uri }),
  profile: { uuid: row.profile_uuid, name: row.profile_name, type: row.profile_type },
  scopes: row.scopes,
  connectedAt: row.created_at,
  ...(row.last_used_at === null ? {} : { lastUsedAt: row.last_used_at }),
  ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at })
})

export const listAgents = (actor: SessionActor): Effect.Effect<{ readonly items: ReadonlyArray<ConnectedAgent> }, SqlError, SqlClient.SqlClient> =>
  Effect.map(agentsOfAccount(actor.accountUuid, revokedKeptDays), (rows) => ({ items: rows.map(agentOf) }))

/** Disconnects one of the account's agents at once: its next call is 401, what it prepared stops. */
export const disconnectAgent = (
  actor: SessionActor,
  uuid: string
): Effect.Effect<{ readonly agent: ConnectedAgent }, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const found = yield* agentsOfAccount(actor.accountUuid, revokedKeptDays, uuid)
      if (found.length === 0) return yield* new NotFound({ message: `No connected agent ${uuid} of this account` })
      yield* revokeKeys(actor.accountUuid, uuid)
      yield* revokeTokensOfKey(uuid)
      return { agent: agentOf((yield* agentsOfAccount(actor.accountUuid, revokedKeptDays, uuid))[0]!) }
    }))
  })
