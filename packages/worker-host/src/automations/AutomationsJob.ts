import { fanOutAutomations, Operations, runDueExecutions } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { whenReady, withFailureBackoff } from "../webhooks/WebhookDispatcher.js"
import type { WorkerJob } from "../WorkerLoop.js"

/** A round ends when nothing is left or after this long, so the loop's other fibers get their turn. */
const budgetMs = 500

/** Runs `step` until it reports no progress or the budget is spent; answers whether it produced anything. */
const untilIdle = <E, R>(step: Effect.Effect<{ readonly progress: number; readonly produced: number }, E, R>) =>
  Effect.gen(function*() {
    const end = (yield* Clock.currentTimeMillis) + budgetMs
    let produced = 0
    for (;;) {
      const round = yield* step
      produced += round.produced
      if (round.progress === 0 || (yield* Clock.currentTimeMillis) >= end) return produced > 0
    }
  })

/**
 * Automation rules as two jobs, so a long runner round never delays evaluation:
 * the fan-out turns newly sequenced events into executions until caught up; the runner runs the
 * due executions until none is left. Any number of workers may run them: the fan-out holds the
 * cursor row, the runner leases executions with `SKIP LOCKED`, and every action is idempotent.
 */
export const makeAutomationsJobs = (
  options: { readonly every?: Duration.DurationInput; readonly ready?: Effect.Effect<boolean> | undefined; readonly batch?: number } = {}
): Effect.Effect<ReadonlyArray<WorkerJob>, never, SqlClient.SqlClient | Operations> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const operations = yield* Operations
    const batch = options.batch ?? 300
    const every = options.every ?? Duration.millis(20)
    const fanOut = untilIdle(Effect.map(fanOutAutomations, ({ covered, queued }) => ({ progress: covered, produced: queued }))).pipe(
      Effect.provideService(SqlClient.SqlClient, sql)
    )
    const runner = untilIdle(Effect.map(runDueExecutions(batch), (ran) => ({ progress: ran, produced: 0 }))).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(Operations, operations)
    )
    return [
      // Executions made: the runner runs them now rather than at its next tick.
      { name: "automations-fanout", every, run: whenReady(options.ready, withFailureBackoff("automation fan-out", fanOut)), wakes: ["automations-runner"] },
      { name: "automations-runner", every, run: whenReady(options.ready, withFailureBackoff("automation runner", runner)) }
    ]
  })

/** Both jobs as one (tests that step the worker by hand): fan out, then run, until both are idle. */
export const makeAutomationsJob = (
  options: { readonly ready?: Effect.Effect<boolean> | undefined; readonly batch?: number } = {}
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient | Operations> =>
  Effect.map(makeAutomationsJobs(options), (jobs) => ({
    name: "automations",
    every: Duration.millis(20),
    run: Effect.forEach(jobs, (job) => job.run, { discard: true })
  }))
