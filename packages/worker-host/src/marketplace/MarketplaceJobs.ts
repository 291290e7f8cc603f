import { completeDueDeals, nextDueDealMoment, nextSealedRevealMoment, revealDueReviews } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect } from "effect"
import { whenReady, withFailureBackoff } from "../webhooks/WebhookDispatcher.js"
import { lookAgainAt, type WorkerJob } from "../WorkerLoop.js"

export interface JobOptions {
  readonly every?: Duration.DurationInput
  readonly ready?: Effect.Effect<boolean> | undefined
}

const batchSize = 100

/**
 * A job's `nextDue` (`WorkerLoop.ts`) from its read of the earliest due moment: until the database
 * is migrated "in a second" rather than after the job's whole fallback; a failed read is no moment.
 */
export const dueMoment = (ready: Effect.Effect<boolean> | undefined, next: Effect.Effect<Date | undefined, SqlError>): Effect.Effect<Date | undefined> => {
  let known = ready === undefined
  return Effect.gen(function*() {
    if (!known) known = yield* ready!
    if (!known) return lookAgainAt(Date.now() + 1_000)
    return yield* next
  }).pipe(Effect.orElseSucceed(() => undefined))
}

/**
 * A job that works off what is due in batches (100 unless the job names its own `batch`) until a
 * batch comes back short; `step` skips
 * rows another worker holds, so any number of workers may run it. `next` (a time-driven job) reads
 * the earliest moment `step` will have work, for the loop's sleep (`WorkerLoop.ts`); `name` is
 * also the job the `birzha_due` notifications name (migration 0030).
 */
export const drainingJob = (
  job: {
    readonly name: string
    readonly what: string
    readonly done: string
    readonly step: (limit: number) => Effect.Effect<number, SqlError, SqlClient.SqlClient>
    readonly next?: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient>
    readonly batch?: number
  },
  options: JobOptions
): Effect.Effect<WorkerJob, never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    const nextDue = job.next === undefined ? undefined : dueMoment(options.ready, Effect.provideService(job.next, SqlClient.SqlClient, sql))
    const drain = Effect.gen(function*() {
      let total = 0
      const limit = job.batch ?? batchSize
      for (;;) {
        const count = yield* job.step(limit)
        total += count
        if (count < limit) break
      }
      if (total > 0) yield* Effect.logInfo(job.done).pipe(Effect.annotateLogs({ [job.name]: total }))
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    return {
      name: job.name,
      every: options.every ?? Duration.minutes(1),
      run: whenReady(options.ready, withFailureBackoff(job.what, drain)),
      ...(nextDue === undefined ? {} : { nextDue })
    }
  })

/**
 * Deal auto-complete (Upwork's rule): handed-over work left unanswered for 14
 * days completes by itself, with `deal.status_changed` (`completed`, `context.cause: auto_complete`).
 */
export const makeDealsJob = (options: JobOptions = {}) =>
  drainingJob({ name: "deals", what: "deal auto-complete", done: "deals completed automatically", step: completeDueDeals, next: nextDueDealMoment }, options)

/**
 * Review reveal (double-blind): a sealed review whose 14-day window closed is
 * published alone, with `review.moderated` (`published`, `context.cause: revealed`) and the
 * subject's statistics recomputed.
 */
export const makeReviewsJob = (options: JobOptions = {}) =>
  drainingJob({ name: "reviews", what: "review reveal", done: "sealed reviews revealed", step: revealDueReviews, next: nextSealedRevealMoment }, options)
