import { sequenceBatch, tracingOn } from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Duration, Effect, Exit, Ref } from "effect"
import type { WorkerJob } from "../WorkerLoop.js"

/** The numbering itself is the events area's (it writes `outbox_events` and `event_sequence`); this module schedules it. */
export { eventsSequencedChannel, sequenceBatch, sequencerLockKey } from "@birzha/domain/internal"

/**
 * Numbers until the outbox is drained of committed rows (bounded, so a run stays short and the
 * worker can stop between runs). Returns how many events got positions.
 */
export const sequencePending = (batchSize: number, maxBatches = 20): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    let total = 0
    for (let i = 0; i < maxBatches; i++) {
      const numbered = yield* sequenceBatch(batchSize)
      total += numbered
      if (numbered < batchSize) break
    }
    return total
  })

/**
 * A run that numbered events as a span (`events.sequence`, with how many), when tracing is on.
 * The sequencer polls every 20 ms: a poll that finds nothing leaves no span, so the span is
 * made first and exported (ended) only when the run numbered something or failed.
 */
const withSequencingSpan = <E, R>(run: Effect.Effect<number, E, R>): Effect.Effect<number, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    if (!fiber.getFiberRef(tracingOn)) return run
    return Effect.gen(function*() {
      const span = yield* Effect.withTracerEnabled(Effect.makeSpan("events.sequence", { kind: "internal", root: true }), true)
      const exit = yield* Effect.exit(run)
      if (Exit.isFailure(exit) || exit.value > 0) {
        if (Exit.isSuccess(exit)) span.attribute("birzha.events.numbered", exit.value)
        span.end(yield* Clock.currentTimeNanos, exit)
      }
      return yield* exit
    })
  })

export interface SequencerOptions {
  /** Pause between polls when the outbox is drained. */
  readonly every?: Duration.DurationInput
  readonly batchSize?: number
  /** Whether the database is ready (migrated): polls wait for it quietly, then never ask again. */
  readonly ready?: Effect.Effect<boolean> | undefined
}

/**
 * The sequencer as a worker job. It polls (20 ms by default: the commit-to-position delay stays
 * small without a NOTIFY in every business transaction, which would serialize their commits). A
 * failing database (not reachable, not migrated yet) is logged once, then retried with a back-off
 * up to 5 s, and its recovery logged: no log line per poll.
 */
export const makeSequencerJob = (options: SequencerOptions = {}): Effect.Effect<WorkerJob, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const batchSize = options.batchSize ?? 1000
    const failing = yield* Ref.make<{ readonly since: number; readonly retryAt: number; readonly delay: number } | undefined>(undefined)
    const ready = yield* Ref.make(options.ready === undefined)
    const run = Effect.gen(function*() {
      if (!(yield* Ref.get(ready))) {
        if (!(yield* options.ready ?? Effect.succeed(true))) return false
        yield* Ref.set(ready, true)
      }
      const now = yield* Clock.currentTimeMillis
      const state = yield* Ref.get(failing)
      if (state !== undefined && now < state.retryAt) return false
      return yield* withSequencingSpan(sequencePending(batchSize)).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.matchCauseEffect({
          onSuccess: (numbered) =>
            (state === undefined ? Effect.void : Ref.set(failing, undefined).pipe(
              Effect.zipRight(Effect.logInfo("sequencer recovered").pipe(
                Effect.annotateLogs({ failedForMs: now - state.since })
              ))
            )).pipe(Effect.as(numbered > 0)),
          onFailure: (cause) => {
            const delay = Math.min(5_000, state === undefined ? 200 : state.delay * 2)
            const next = { since: state?.since ?? now, retryAt: now + delay, delay }
            return Ref.set(failing, next).pipe(
              Effect.zipRight(state === undefined
                ? Effect.logWarning("sequencer cannot number events; retrying", Cause.squash(cause))
                : Effect.void),
              Effect.as(false)
            )
          }
        })
      )
    })
    return { name: "sequencer", every: options.every ?? Duration.millis(20), run }
  })
