import { sessionCookieName } from "@birzha/domain"
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Redacted } from "effect"

// Spec: Secure, HttpOnly, SameSite=Lax, Path=/, 30 days; the `__Host-` prefix forbids a Domain.
const attributes = { secure: true, httpOnly: true, sameSite: "lax", path: "/" } as const

/** Sets the session cookie on whatever response this request ends with (called after the commit). */
export const setSessionCookie = (token: Redacted.Redacted<string>, expiresAt: Date) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.orDie(HttpServerResponse.setCookie(response, sessionCookieName, Redacted.value(token), {
      ...attributes,
      expires: expiresAt,
      maxAge: Duration.millis(Math.max(0, expiresAt.getTime() - Date.now()))
    })))

export const clearSessionCookie = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.orDie(HttpServerResponse.setCookie(response, sessionCookieName, "", {
    ...attributes,
    expires: new Date(0),
    maxAge: Duration.zero
  })))

/** Answers are per user: never stored by shared caches. */
export const noStore = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "no-store")))
