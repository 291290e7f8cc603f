import { sessionCookieName, type SessionActor } from "@birzha/domain"
import { actorForToken, type ServerSecret } from "@birzha/domain/server"
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

/** A page that needs a signed-in person sends anyone else to sign in, in the same language. */
export const toSignIn = (language: Language) => seeOther(`/sign-in?lang=${language}`)

/** The `{uuid}` of a page path like `/approvals/{uuid}` or `/webhooks/{uuid}/approve`. */
export const pathUuid = (url: string) => new URL(url, "http://host").pathname.split("/")[2] ?? ""
