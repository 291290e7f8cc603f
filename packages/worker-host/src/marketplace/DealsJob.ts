import { completeDueDeals } from "@birzha/domain/server"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { whenReady, withFailureBackoff } from "../webhooks/WebhookDispatcher.js"
import type { WorkerJob } from "../WorkerLoop.js"

/**
 * Deal auto-complete (MARKETPLACE §2.3, Upwork's rule): handed-over work left unanswered for 14
 * days completes by itself, with `deal.status_changed` (`completed`, `context.cause: auto_complete`).
 * Batches of 100 until none is due; rows another worker holds are skipped, so any number of
 * workers may run it.
 */
export const makeDealsJob = (
  options: { readonly every?: Duration.DurationInput; readonly ready?: Effect.Effect<boolean> | undefined } = {}
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const drain = Effect.gen(function*() {
      let total = 0
      for (;;) {
        const completed = yield* completeDueDeals(100)
        total += completed
        if (completed < 100) break
      }
      if (total > 0) yield* Effect.logInfo("deals completed automatically").pipe(Effect.annotateLogs({ deals: total }))
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    return { name: "deals", every: options.every ?? Duration.minutes(1), run: whenReady(options.ready, withFailureBackoff("deal auto-complete", drain)) }
  })
