import {
  BlobStore,
  cleanAbandonedFiles,
  cleanAutomationHistory,
  cleanExpiredJobFiles,
  cleanExpiredOAuthRecords,
  cleanNotifierQueue,
  cleanSignInRecords,
  cleanWebhookHistory,
  nextExpiredJobFileMoment
} from "@birzha/domain/internal"
import { cleanIdempotencyKeys } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect } from "effect"
import { dueMoment } from "./marketplace/MarketplaceJobs.js"
import { whenReady, withFailureBackoff } from "./webhooks/WebhookDispatcher.js"
import type { WorkerJob } from "./WorkerLoop.js"

/**
 * What the service keeps only for a while, cleaned at start and then every hour, and at the moment
 * an export's file expires; any number of workers may run it (every delete is idempotent). Each
 * area owns its rule:
 *
 * - webhook delivery history and request logs: 7 days (spec);
 * - idempotency keys: 30 days (`idempotencyRetentionDays`);
 * - files that never became ready: 31 days and no key naming them, with their bytes (`cleanAbandonedFiles`);
 * - rate-limit hits and expired sign-in challenges: 1 day;
 * - MCP authorization codes, tokens and requests: 1 day after they expired (`cleanExpiredOAuthRecords`);
 * - finished automation executions: 30 days; notifications: 90 days (`automationRetention`);
 * - learning export files: 7 days after the export finished (`jobFileDays`; the job stays);
 * - the learning notifier's decisions: 90 days after the decision (`notifierQueueDays`; pending rows stay).
 */
export const retentionRules: ReadonlyArray<{
  readonly name: string
  readonly clean: Effect.Effect<Readonly<Record<string, number>>, SqlError, SqlClient.SqlClient | BlobStore>
}> = [
  { name: "webhook history", clean: cleanWebhookHistory },
  { name: "idempotency keys", clean: Effect.map(cleanIdempotencyKeys, (keys) => ({ keys })) },
  { name: "abandoned files", clean: Effect.map(cleanAbandonedFiles, (files) => ({ files })) },
  { name: "sign-in records", clean: cleanSignInRecords },
  {
    name: "MCP authorization records",
    clean: Effect.map(cleanExpiredOAuthRecords, (removed) => ({ oauthCodes: removed.codes, oauthTokens: removed.tokens, oauthRequests: removed.requests }))
  },
  { name: "automation history", clean: cleanAutomationHistory },
  { name: "learning export files", clean: Effect.map(cleanExpiredJobFiles, (files) => ({ exportFiles: files })) },
  { name: "learning notifier decisions", clean: cleanNotifierQueue }
]

/** One pass over every rule; a failing rule is logged and does not stop the others. */
export const cleanExpired: Effect.Effect<Readonly<Record<string, number>>, SqlError, SqlClient.SqlClient | BlobStore> = Effect.gen(function*() {
  const removed: Record<string, number> = {}
  let failure: SqlError | undefined
  for (const rule of retentionRules) {
    const counts = yield* Effect.either(rule.clean)
    if (counts._tag === "Left") {
      failure = counts.left
      yield* Effect.logWarning(`retention: cleaning ${rule.name} failed`, counts.left)
      continue
    }
    for (const [key, n] of Object.entries(counts.right)) if (n > 0) removed[key] = n
  }
  if (failure !== undefined) return yield* Effect.fail(failure)
  return removed
})

export const makeRetentionJob = (
  options: { readonly every?: Duration.DurationInput; readonly ready?: Effect.Effect<boolean> | undefined } = {}
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient | BlobStore> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const blobs = yield* BlobStore
    const run = cleanExpired.pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(BlobStore, blobs),
      Effect.tap((removed) =>
        Object.keys(removed).length === 0 ? Effect.void : Effect.logInfo("expired records cleaned").pipe(Effect.annotateLogs(removed)))
    )
    return {
      name: "retention",
      every: options.every ?? Duration.hours(1),
      run: whenReady(options.ready, withFailureBackoff("retention", run)),
      // The one moment a reader sees: an export's `expiresAt`, when its file goes. The rest is
      // removed within the hour after its limit.
      nextDue: dueMoment(options.ready, Effect.provideService(nextExpiredJobFileMoment, SqlClient.SqlClient, sql))
    }
  })
