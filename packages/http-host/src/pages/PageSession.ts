import { sessionCookieName, type SessionActor } from "@birzha/domain"
import { actorForToken, type ServerSecret } from "@birzha/domain/internal"
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Redacted } from "effect"
import type { Language } from "./Language.js"

/** The page request's signed-in session, if its cookie names a usable one (none otherwise, never 401). */
export const pageActor = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<Option.Option<SessionActor>, SqlError, SqlClient.SqlClient | ServerSecret> => {
  const token = request.cookies[sessionCookieName]
  return token === undefined || token === "" ? Effect.succeed(Option.none()) : actorForToken(Redacted.make(token))
}

/** 303 to `location`, never cached: after a form post, or to the sign-in page. */
export const seeOther = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers: { "cache-control": "no-store" } })

/**
 * Where to return after signing in: a path of this site only (one leading `/`, no scheme, host,
 * backslash, white space or control character, at most 2048 characters), as its path and query;
 * anything else is none (the account page), so `next` can never send anyone to another site.
 */
export const safeNext = (value: string | null | undefined): string | undefined => {
  if (value === null || value === undefined || value.length === 0 || value.length > 2048) return undefined
  if (!value.startsWith("/") || value.startsWith("//") || /[\\\s\u0000-\u001f\u007f]/u.test(value)) return undefined
  const url = new URL(value, "http://birzha.invalid")
  if (url.origin !== "http://birzha.invalid") return undefined
  // Checked again after normalising: dot segments can make a path of `//host` (`/..//evil.com`),
  // which a browser reads as another site.
  const path = url.pathname + url.search
  return path.startsWith("/") && !path.startsWith("//") && !path.includes("\\") ? path : undefined
}

/** A page that needs a signed-in person sends anyone else to sign in, in the same language, and back to `next` after. */
export const toSignIn = (language: Language, next?: string) => {
  const back = safeNext(next)
  return seeOther(`/sign-in?lang=${language}${back === undefined ? "" : `&next=${encodeURIComponent(back)}`}`)
}

/** The `{uuid}` of a page path like `/approvals/{uuid}` or `/webhooks/{uuid}/approve`. */
export const pathUuid = (url: string) => new URL(url, "http://host").pathname.split("/")[2] ?? ""
