import { fanOutAutomations, Operations, runDueExecutions } from "@birzha/domain/server"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
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
    const round = Effect.gen(function*() {
      for (let i = 0; i < 20; i++) {
        const { covered } = yield* fanOutAutomations
        if (covered === 0) break
      }
      for (let i = 0; i < 20; i++) {
        if ((yield* runDueExecutions(batch)) < batch) break
      }
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(Operations, operations))
    return {
      name: "automations",
      every: options.every ?? Duration.millis(50),
      run: whenReady(options.ready, withFailureBackoff("automations", round))
    }
  })
