import { Authentication, Unauthenticated } from "@birzha/domain"
import { actorForToken, ServerSecret } from "@birzha/domain/server"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"

/**
 * The session scheme of `Authentication`: the cookie's token, looked up by its keyed hash. A
 * database failure is a defect here and answers 503 through the error envelope, never 401.
 */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    return {
      session: (token) =>
        actorForToken(token).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.provideService(ServerSecret, secret),
          Effect.orDie,
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new Unauthenticated({ message: "Sign in first: no valid session" })),
            onSome: Effect.succeed
          }))
        )
    }
  })
)
