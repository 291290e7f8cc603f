import { fanOutAutomations, Operations, runDueExecutions } from "@birzha/domain/server"
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { whenReady, withFailureBackoff } from "../webhooks/WebhookDispatcher.js"
import type { WorkerJob } from "../WorkerLoop.js"

/**
 * Automation rules (MARKETPLACE §5.2): each run fans the newly sequenced events out into
 * executions until caught up, then runs the due executions until none is left (or a round's
 * budget is spent). Any number of workers may run it: the fan-out holds the cursor row, the
 * runner leases executions with `SKIP LOCKED`, and every action is idempotent.
 */
export const makeAutomationsJob = (
  options: { readonly every?: Duration.DurationInput; readonly ready?: Effect.Effect<boolean> | undefined; readonly batch?: number } = {}
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient | Operations> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const operations = yield* Operations
    const batch = options.batch ?? 100
    // A round ends when nothing is left or after this long, so the loop's other fibers get their turn.
    const budgetMs = 500
    const round = Effect.gen(function*() {
      const end = (yield* Clock.currentTimeMillis) + budgetMs
      for (;;) {
        const { covered } = yield* fanOutAutomations
        const ran = yield* runDueExecutions(batch)
        if ((covered === 0 && ran === 0) || (yield* Clock.currentTimeMillis) > end) break
      }
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(Operations, operations))
    return {
      name: "automations",
      every: options.every ?? Duration.millis(50),
      run: whenReady(options.ready, withFailureBackoff("automations", round))
    }
  })
