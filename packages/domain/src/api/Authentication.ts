import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context } from "effect"
import type { ProfileType } from "../profiles/Profile.js"
import { Unauthenticated, wire } from "./ApiError.js"

/** Who is acting: the account, the profile it acts as, and how it proved it. */
export interface Actor {
  readonly accountUuid: string
  readonly email: string
  readonly profileUuid: string
  readonly profileName: string
  readonly profileType: ProfileType
  readonly via: "session"
  /** The session (for logout and the AuthSession answer). */
  readonly sessionUuid: string
  readonly expiresAt: Date
}

export class CurrentActor extends Context.Tag("@birzha/domain/CurrentActor")<CurrentActor, Actor>() {}

/** The browser session cookie (spec: `__Host-<service>_session`). */
export const sessionCookieName = "__Host-birzha_session"

export const sessionSecurity = HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookieName }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The session cookie set by sign-in (verify or link); Secure, HttpOnly, SameSite=Lax, 30 days."
  )
)

/**
 * Marks an operation as needing a caller: the catalog reads `access: authenticated` from the
 * presence of this middleware, so declaring and enforcing are one act. Absent, expired or revoked
 * sessions, and sessions of deleted accounts or profiles, answer 401 `unauthenticated`.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@birzha/domain/api/Authentication", {
  failure: wire(Unauthenticated),
  provides: CurrentActor,
  security: { session: sessionSecurity }
}) {}
