import { revealDueReviews } from "@birzha/domain/server"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { whenReady, withFailureBackoff } from "../webhooks/WebhookDispatcher.js"
import type { WorkerJob } from "../WorkerLoop.js"

/**
 * Review reveal (MARKETPLACE §2.8, double-blind): a sealed review whose 14-day window closed is
 * published alone, with `review.moderated` (`published`, `context.cause: revealed`) and the
 * subject's statistics recomputed. Batches of 100 until none is due; rows another worker holds
 * are skipped, so any number of workers may run it.
 */
export const makeReviewsJob = (
  options: { readonly every?: Duration.DurationInput; readonly ready?: Effect.Effect<boolean> | undefined } = {}
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const drain = Effect.gen(function*() {
      let total = 0
      for (;;) {
        const revealed = yield* revealDueReviews(100)
        total += revealed
        if (revealed < 100) break
      }
      if (total > 0) yield* Effect.logInfo("sealed reviews revealed").pipe(Effect.annotateLogs({ reviews: total }))
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    return { name: "reviews", every: options.every ?? Duration.minutes(1), run: whenReady(options.ready, withFailureBackoff("review reveal", drain)) }
  })
