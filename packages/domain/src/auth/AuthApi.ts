import { HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { ForbiddenOrigin, Gone, InvalidCode, InvalidEmail, InvalidLink, RateLimited, wire } from "../kernel/ApiError.js"
import { Authentication } from "../kernel/Authentication.js"
import { DateTime, Email, strict } from "../kernel/Common.js"
import { operation } from "../kernel/Operation.js"

export const SignInStart = Schema.Struct({ email: Email }).annotations({ identifier: "SignInStart", ...strict })

export const SignInChallenge = Schema.Struct({
  challengeUuid: Schema.UUID,
  expiresAt: DateTime,
  resendAfterSeconds: Schema.Literal(60)
}).annotations({ identifier: "SignInChallenge" })

export const SignInVerify = Schema.Struct({
  challengeUuid: Schema.UUID,
  code: Schema.String.pipe(Schema.pattern(/^[0-9]{6}$/, { message: () => "expected six digits" }))
}).annotations({ identifier: "SignInVerify", ...strict })

export const SignInLink = Schema.Struct({
  challengeUuid: Schema.UUID,
  token: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{43}$/, { message: () => "expected the 43-character link token" }))
}).annotations({ identifier: "SignInLink", ...strict })

/** Spec: AuthSession, no additional properties. */
export const AuthSession = Schema.Struct({
  user: Schema.Struct({ uuid: Schema.UUID, email: Schema.String.annotations({ jsonSchema: { type: "string", format: "email" } }) }),
  profile: Schema.Struct({ uuid: Schema.UUID, name: Schema.String, type: ProfileType }),
  expiresAt: DateTime
}).annotations({ identifier: "AuthSession" })
export type AuthSession = typeof AuthSession.Type

const signInErrors = { origin: wire(ForbiddenOrigin), limited: wire(RateLimited) }

export const AuthApi = HttpApiGroup.make("auth", { topLevel: true })
  .add(
    operation("POST", "auth.email.start", "/api/v1/auth/email/start", {
      specId: null,
      sameOrigin: true,
      // A browser's sign-in step, never a key's: not an MCP tool, 403 session_required for a key.
      sessionOnly: true,
      invalidInput: { email: InvalidEmail },
      summary: "Email a six-digit code and a one-time sign-in link"
    })
      .setPayload(SignInStart)
      .addSuccess(SignInChallenge)
      .addError(wire(InvalidEmail))
      .addError(signInErrors.origin)
      .addError(signInErrors.limited)
  )
  .add(
    operation("POST", "auth.email.verify", "/api/v1/auth/email/verify", {
      specId: null,
      sameOrigin: true,
      // A browser's sign-in step, never a key's: not an MCP tool, 403 session_required for a key.
      sessionOnly: true,
      invalidInput: { code: InvalidCode },
      summary: "Sign in with the emailed code; sets the session cookie"
    })
      .setPayload(SignInVerify)
      .addSuccess(AuthSession)
      .addError(wire(InvalidCode))
      .addError(signInErrors.origin)
      .addError(signInErrors.limited)
  )
  .add(
    operation("POST", "auth.email.link", "/api/v1/auth/email/link", {
      specId: null,
      sameOrigin: true,
      // A browser's sign-in step, never a key's: not an MCP tool, 403 session_required for a key.
      sessionOnly: true,
      invalidInput: { "*": InvalidLink },
      summary: "Sign in with the emailed link's token (posted after a click on the link page); sets the session cookie"
    })
      .setPayload(SignInLink)
      .addSuccess(AuthSession)
      .addError(wire(InvalidLink))
      .addError(wire(Gone))
      .addError(signInErrors.origin)
      .addError(signInErrors.limited)
  )
  .add(
    operation("POST", "auth.logout", "/api/v1/auth/logout", {
      specId: null,
      sameOrigin: true,
      // A browser's sign-in step, never a key's: not an MCP tool, 403 session_required for a key.
      sessionOnly: true,
      summary: "End the session and clear its cookie; 204 also without a session"
    })
      .addSuccess(HttpApiSchema.NoContent)
      .addError(signInErrors.origin)
  )
  .add(
    operation("GET", "auth.session", "/api/v1/auth/session", {
      specId: null,
      // Spec rule 4 and this row's errors (401, 503 only): a key may ask too; it describes the caller,
      // so it needs no scope (as getMyCapabilities). For a key, expiresAt is the key's.
      summary: "The signed-in user, acting profile and session expiry (for a bearer key: the key's expiry)"
    })
      .middleware(Authentication)
      .addSuccess(AuthSession)
  )
  .annotate(OpenApi.Description, "Email sign-in and browser sessions")
