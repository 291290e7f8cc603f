import type { Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect } from "effect"
import type { RateLimited } from "../../kernel/ApiError.js"
import { rateLimitedBy } from "../../auth/RateLimit.js"
import type { Call } from "../../operations/Implementation.js"

/**
 * The learner's limits on the step side: sample runs 30 an hour per learner and
 * step, generations 5 a day per step, demo tries 20 a day per step. They are counted from the
 * stored rows themselves (jobs, demo attempts) in a sliding window, so they persist across
 * restarts and hosts like sign-in's limits; a refusal tells when the oldest counted row leaves
 * the window (`Retry-After`).
 */

export const sampleRunsPerHour = 30
export const generationsPerDay = 5

/** A limit was reached: the operation answers 429 `rate_limited` with `Retry-After`. */
export class StepLimitReached extends Data.TaggedError("StepLimitReached")<{
  readonly message: string
  readonly retryAfterSeconds: number
  readonly limit: number
  readonly windowSeconds: number
}> {}

/** How many rows a window query returns, and when its oldest row leaves the window. */
export const windowCount = (
  rows: Statement.Statement<{ readonly created_at: Date }>,
  windowSeconds: number
): Effect.Effect<{ readonly count: number; readonly retryAfterSeconds: number }, SqlError> =>
  Effect.map(rows, (found) => ({
    count: found.length,
    retryAfterSeconds: found.length === 0 ? 0 : Math.max(1, Math.ceil((found[0]!.created_at.getTime() + windowSeconds * 1000 - Date.now()) / 1000))
  }))

/** Maps a reached limit to 429 with the real wait as `Retry-After`. */
export const answerLimits = <A, E, R>(call: Call, effect: Effect.Effect<A, E | StepLimitReached, R>): Effect.Effect<A, E | RateLimited, R> =>
  Effect.catchIf(effect, (error): error is StepLimitReached => error instanceof StepLimitReached, (limit) => {
    call.facts.retryAfterSeconds = limit.retryAfterSeconds
    return Effect.fail(rateLimitedBy(limit, limit.retryAfterSeconds))
  })
