import { type Actor, keyChannel, sessionCookieName } from "@birzha/domain"
import { actorForKey, actorForToken, type ServerSecret } from "@birzha/domain/server"
import { HttpServerRequest } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, FiberRef, Option, Redacted } from "effect"

/**
 * The caller of a public read, if it brought a usable session or bearer key (with access on for the
 * channel it came through: HTTP, or MCP inside a tool call);
 * `undefined` otherwise. Unlike the `Authentication` middleware, an absent, expired, revoked or
 * forged credential is simply anonymous: a public read never answers 401 or 403. A database
 * failure stays a failure (503), not anonymity.
 */
export const optionalActor: Effect.Effect<
  Actor | undefined,
  SqlError,
  HttpServerRequest.HttpServerRequest | SqlClient.SqlClient | ServerSecret
> = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const token = request.cookies[sessionCookieName]
  if (token !== undefined && token !== "") {
    const session = yield* actorForToken(Redacted.make(token))
    if (Option.isSome(session)) return session.value
  }
  const authorization = request.headers["authorization"] ?? ""
  if (!/^bearer /i.test(authorization)) return undefined
  const channel = yield* FiberRef.get(keyChannel)
  const key = yield* actorForKey(Redacted.make(authorization.slice("bearer ".length).trim()), channel === "mcp" ? "mcp" : "key")
  if (Option.isNone(key)) return undefined
  return (channel === "mcp" ? key.value.mcpEnabled : key.value.httpEnabled) ? key.value : undefined
})
