import { cleanWebhookHistory } from "@birzha/domain/server"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import type { WorkerJob } from "../WorkerLoop.js"
import { whenReady, withFailureBackoff } from "./WebhookDispatcher.js"

/**
 * Spec: delivery history and technical request logs are kept 7 days and cleaned hourly. Runs at
 * start and then every hour; any number of workers may run it (the deletes are idempotent).
 */
export const makeWebhookRetentionJob = (
  options: { readonly every?: Duration.DurationInput; readonly ready?: Effect.Effect<boolean> | undefined } = {}
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = cleanWebhookHistory.pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.tap(({ attempts, deliveries }) =>
        attempts + deliveries === 0
          ? Effect.void
          : Effect.logInfo("webhook history cleaned").pipe(Effect.annotateLogs({ attempts, deliveries })))
    )
    return { name: "webhook-retention", every: options.every ?? Duration.hours(1), run: whenReady(options.ready, withFailureBackoff("webhook history cleanup", run)) }
  })
