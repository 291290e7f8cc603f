import { HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { ForbiddenOrigin, Gone, InvalidCode, InvalidEmail, InvalidLink, RateLimited, wire } from "../kernel/ApiError.js"
import { DateTime, Email, strict } from "../kernel/Common.js"
import { anyone, authenticated } from "../kernel/Operation.js"

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

/** Every sign-in step checks the browser's `Origin` and is rate-limited. */
const signInErrors = [wire(ForbiddenOrigin), wire(RateLimited)] as const

/** A browser's sign-in step, never a key's: not an MCP tool, 403 session_required for a key. */
const signInStep = { specId: null, sameOrigin: true, sessionOnly: true } as const

export const AuthApi = HttpApiGroup.make("auth", { topLevel: true })
  .add(
    anyone("POST", "auth.email.start", "/api/v1/auth/email/start", {
      ...signInStep,
      invalidInput: { email: InvalidEmail },
      summary: "Email a six-digit code and a one-time sign-in link"
    }, [wire(InvalidEmail), ...signInErrors]).setPayload(SignInStart).addSuccess(SignInChallenge)
  )
  .add(
    anyone("POST", "auth.email.verify", "/api/v1/auth/email/verify", {
      ...signInStep,
      invalidInput: { code: InvalidCode },
      summary: "Sign in with the emailed code; sets the session cookie"
    }, [wire(InvalidCode), ...signInErrors]).setPayload(SignInVerify).addSuccess(AuthSession)
  )
  .add(
    anyone("POST", "auth.email.link", "/api/v1/auth/email/link", {
      ...signInStep,
      invalidInput: { "*": InvalidLink },
      summary: "Sign in with the emailed link's token (posted after a click on the link page); sets the session cookie"
    }, [wire(InvalidLink), wire(Gone), ...signInErrors]).setPayload(SignInLink).addSuccess(AuthSession)
  )
  .add(
    anyone("POST", "auth.logout", "/api/v1/auth/logout", {
      ...signInStep,
      summary: "End the session and clear its cookie; 204 also without a session"
    }, [wire(ForbiddenOrigin)]).addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    // Spec rule 4 and this row's errors (401, 503 only): a key may ask too; it describes the caller,
    // so it needs no scope (as getMyCapabilities). For a key, expiresAt is the key's.
    authenticated("GET", "auth.session", "/api/v1/auth/session", {
      specId: null,
      summary: "The signed-in user, acting profile and session expiry (for a bearer key: the key's expiry)"
    }).addSuccess(AuthSession)
  )
  .annotate(OpenApi.Description, "Email sign-in and browser sessions")
