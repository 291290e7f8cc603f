import { ServiceUnavailable } from "@birzha/domain"
import type { SqlError } from "@effect/sql/SqlError"
import { type Context, Effect } from "effect"

/**
 * Runs a domain effect with the services the handler group captured, and answers a database
 * failure with the declared 503 `unavailable` (logged once here, never shown to the client).
 */
export const using = <S>(context: Context.Context<S>) =>
<A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, Exclude<R, S>> =>
  effect.pipe(
    Effect.provide(context),
    Effect.catchIf(
      (error): error is Extract<E | SqlError, SqlError> =>
        typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError",
      (error) =>
        Effect.logWarning("database unavailable", error).pipe(
          Effect.zipRight(Effect.fail(new ServiceUnavailable({ message: "The service is temporarily unavailable" })))
        )
    )
  ) as Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, Exclude<R, S>>
