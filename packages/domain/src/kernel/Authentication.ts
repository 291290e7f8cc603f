import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { ApprovalRequired, InsufficientScope, KeyHttpDisabled, KeyMcpDisabled, KeyRequired, SessionRequired } from "../keys/KeyErrors.js"
import type { KeyKind } from "../keys/Key.js"
import type { ProfileType } from "../profiles/Profile.js"
import { ForbiddenOrigin, Unauthenticated, wire } from "./ApiError.js"

interface ActorBase {
  readonly accountUuid: string
  readonly email: string
  readonly profileUuid: string
  readonly profileName: string
  readonly profileType: ProfileType
  /** When the session or the key's current secret stops working. */
  readonly expiresAt: Date
}

/** A browser session: it acts with every scope, on its own profile's records. */
export interface SessionActor extends ActorBase {
  readonly via: "session"
  /** The session (for logout, profiles.switch and the AuthSession answer). */
  readonly sessionUuid: string
}

/**
 * A bearer key (over HTTP `via: "key"`, inside an MCP tool call `via: "mcp"`): it acts as the one profile the key is
 * bound to, with only the key's scopes. Prepared commands and automation rules remember `keyUuid`
 * so revoking the key stops them.
 */
export interface KeyActor extends ActorBase {
  readonly via: "key" | "mcp"
  readonly keyUuid: string
  readonly keyName: string
  readonly keyKind: KeyKind
  readonly scopes: ReadonlyArray<string>
  readonly httpEnabled: boolean
  readonly mcpEnabled: boolean
}

/**
 * An automation rule acting for its owner's profile in the worker, with no request at all: the
 * rule's authority is the scopes it was created with (a session's rule: its owner's; a key's: the
 * key's), and it never passes the approval flow.
 */
export interface AutomationActor extends ActorBase {
  readonly via: "automation"
  readonly ruleUuid: string
  readonly executionUuid: string
  /** The key that created the rule, if a key did: revoking it stops the rule. */
  readonly keyUuid: string | null
  readonly scopes: ReadonlyArray<string>
}

/** Who is acting: the account, the profile it acts as, and how it proved it. */
export type Actor = SessionActor | KeyActor | AutomationActor

/** The operator at the database (the CLI): no account or profile; only operations marked `operator` accept it. */
export interface SystemCaller {
  readonly via: "system"
  /** Recorded where the operation records who acted (moderation decisions: `cli`). */
  readonly name: string
}

/** Nobody signed in: public operations only. */
export interface AnonymousCaller {
  readonly via: "anonymous"
}

/** Whoever calls `Operations.run`. */
export type Caller = Actor | SystemCaller | AnonymousCaller

export const anonymous: AnonymousCaller = { via: "anonymous" }

export const isActor = (caller: Caller): caller is Actor => caller.via !== "system" && caller.via !== "anonymous"

/** Whether the caller holds a scope: a session holds them all; a key or rule only its own. */
export const holdsScope = (actor: Actor, scope: string): boolean => actor.via === "session" || actor.scopes.includes(scope)

/**
 * Marks an operation the operator may run from the CLI (`SystemCaller`) besides its declared
 * callers; the catalog reads `operator` from its presence, and the implementation is typed to
 * accept a `SystemCaller` too. It does nothing over HTTP.
 */
export class OperatorAccess extends HttpApiMiddleware.Tag<OperatorAccess>()("@birzha/domain/api/OperatorAccess") {}

export class CurrentActor extends Context.Tag("@birzha/domain/CurrentActor")<CurrentActor, Actor>() {}

/** The browser session cookie (spec: `__Host-<service>_session`). */
export const sessionCookieName = "__Host-birzha_session"

export const sessionSecurity = HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookieName }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The session cookie set by sign-in (verify or link); Secure, HttpOnly, SameSite=Lax, 30 days."
  )
)

export const bearerSecurity = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "`Authorization: Bearer birzha_pk_…`: an integration key made on /settings/integrations. It acts as one " +
      "profile with the key's scopes only (the operation's `x-scopes`; every scope is listed in the document's " +
      "`x-scopes` and at GET /api/v1/scopes). Operations with `x-approval: true` need the approval flow; " +
      "`x-session-only` operations refuse keys."
  )
)

/**
 * Marks an operation as needing a caller: the catalog reads `access: authenticated` from the
 * presence of this middleware, so declaring and enforcing are one act. Either the session cookie
 * or a bearer key (spec rule 4). 401 `unauthenticated`: no usable session or key (absent,
 * expired, revoked, of a deleted account or profile). 403 for a key: `key_http_disabled`,
 * `key_mcp_disabled` (a tool call through /mcp),
 * `session_required`, `insufficient_scope`, `approval_required`. 403 `forbidden_origin`: a change
 * (any method but GET and HEAD) made with the session cookie whose `Origin` is not the service's
 * public origin, or absent (cross-site request forgery); bearer keys need no `Origin`.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@birzha/domain/api/Authentication", {
  failure: Schema.Union(
    wire(Unauthenticated),
    wire(KeyHttpDisabled),
    wire(KeyMcpDisabled),
    wire(SessionRequired),
    wire(InsufficientScope),
    wire(ApprovalRequired),
    wire(KeyRequired),
    wire(ForbiddenOrigin)
  ),
  provides: CurrentActor,
  // Tried in this order; the host answers a refused key's own 403 when no session rescues it.
  security: { bearer: bearerSecurity, session: sessionSecurity }
}) {}
