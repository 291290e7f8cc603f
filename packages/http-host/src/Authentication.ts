import { approvedOperation, Authentication, authorizeKey, catalog, type CatalogEntry, keyChannel, KeyRequired, Unauthenticated } from "@birzha/domain"
import { actorForKey, actorForToken, ServerSecret } from "@birzha/domain/server"
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Either, FiberRef, Layer, Option, Redacted } from "effect"

// The router's path form (`/api/v1/profiles/:uuid`) to the catalog's (`/api/v1/profiles/{uuid}`).
const catalogPath = (path: string) => path.replace(/:(\w+)\??/g, "{$1}")

type Refusal = Effect.Effect.Error<ReturnType<typeof authorizeKey>> | Unauthenticated | KeyRequired

/**
 * Both schemes of `Authentication`. The framework tries them in declaration order (bearer, then
 * session) and answers with the last one's error, so a key's refusal (403 `insufficient_scope`...)
 * is remembered per request and answered by the session scheme when there is no usable session.
 * Bearer goes first because its header is read without a schema: a request with a key never pays
 * for a failed cookie decode, and a request with a cookie only pays for reading an empty header.
 * A valid session still wins when both are sent (a refused key falls through to it).
 * A database failure is a defect here and answers 503 through the error envelope, never 401.
 *
 * A key is checked against the catalog entry of the operation being called (the matched route's
 * method and path), so every operation gets its scope, session-only and approval rule from its
 * declaration alone.
 */
export const authenticationFor = (entries: ReadonlyArray<CatalogEntry>) =>
  Layer.effect(
    Authentication,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const secret = yield* ServerSecret
      const byRoute = new Map(entries.map((entry) => [`${entry.method} ${entry.path}`, entry]))
      // One value for the plain "no usable credential": building an error (and its stack) on
      // every request that simply lacks the other credential would be wasted work.
      const refusal = new Unauthenticated({ message: "Sign in first, or send a valid key as Authorization: Bearer <key>" })
      const keyRefusals = new WeakMap<HttpServerRequest.HttpServerRequest, Refusal>()
      const provide = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ServerSecret>) =>
        effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(ServerSecret, secret))

      const checkKey = (token: Redacted.Redacted<string>) =>
        Effect.gen(function*() {
          const channel = yield* FiberRef.get(keyChannel)
          // A tool call through /mcp acts `via: "mcp"` (what getMyCapabilities reports).
          const found = yield* provide(actorForKey(token, channel === "mcp" ? "mcp" : "key")).pipe(Effect.orDie)
          if (Option.isNone(found)) return yield* Effect.fail<Refusal>(refusal)
          const { route } = yield* HttpRouter.RouteContext
          const entry = byRoute.get(`${route.method} ${catalogPath(route.path)}`)
          // An authenticated route outside the catalog refuses keys rather than guess its policy.
          if (entry === undefined) return yield* Effect.dieMessage(`no catalog entry for ${route.method} ${route.path}`)
          // Approved only inside the commit of an approved prepared command of exactly this operation.
          const approved = (yield* FiberRef.get(approvedOperation)) === entry.id
          yield* authorizeKey(entry, found.value, { channel, approved })
          return found.value
        })

      return {
        bearer: (token) =>
          Effect.gen(function*() {
            if (Redacted.value(token) === "") return yield* Effect.fail<Refusal>(refusal)
            const outcome = yield* Effect.either(checkKey(token))
            if (Either.isRight(outcome)) return outcome.right
            keyRefusals.set(yield* HttpServerRequest.HttpServerRequest, outcome.left)
            return yield* Effect.fail(outcome.left)
          }),
        session: (token) =>
          Effect.gen(function*() {
            const found = Redacted.value(token) === ""
              ? Option.none()
              : yield* provide(actorForToken(token)).pipe(Effect.orDie)
            if (Option.isSome(found)) {
              // The approval flow's own operations are for keys only (`keyOnly`); checked before the body is read.
              const { route } = yield* HttpRouter.RouteContext
              if (byRoute.get(`${route.method} ${catalogPath(route.path)}`)?.keyOnly === true) {
                return yield* Effect.fail(new KeyRequired({ message: "This is for bearer clients; in a browser session call the operation directly" }))
              }
              return found.value
            }
            return yield* Effect.fail(keyRefusals.get(yield* HttpServerRequest.HttpServerRequest) ?? refusal)
          })
      }
    })
  )

/** The service's authentication over the whole catalog. */
export const AuthenticationLive = authenticationFor(catalog)
