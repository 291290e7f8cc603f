import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Duration, Effect, Ref } from "effect"
import type { WorkerJob } from "../WorkerLoop.js"

/** Any constant works; every process sequencing one database must use the same one. */
export const sequencerLockKey = 0x62697273657121 // "birseq!"

/** Channel notified (payload: the last position) when a batch commits, for workers that wait on new events. */
export const eventsSequencedChannel = "birzha_events_sequenced"

/**
 * Gives committed outbox rows their positions, one batch in one transaction:
 *
 * - Only the holder of the advisory lock numbers (a transaction-scoped try-lock: any number of
 *   workers may poll; the one that gets the lock numbers the batch, the others skip this round).
 *   The lock is taken in a statement before the numbering one, so the numbering statement's
 *   snapshot already sees the previous holder's committed batch.
 * - Only committed rows are numbered (uncommitted ones are invisible to the statement), and
 *   positions only grow, so a reader following positions never skips a late commit: it simply
 *   gets a later position.
 * - Order: transaction id, then the order of `appendEvent` calls inside the transaction. Rows
 *   are numbered only below the lowest transaction that is still running and has written to the
 *   outbox, so a slow event-writing transaction is not overtaken by later ones (xmin would do the
 *   same, but xmin is cluster-wide: any long write transaction of any database on the server, a
 *   sign-in waiting on SMTP, would stall every event). A transaction that writes its first event
 *   after later ones were numbered gets later positions: never skipped, just later.
 * - The counter row and the positions change in one transaction, so positions are gapless and a
 *   reader that sees the counter at N can read every position up to N.
 *
 * Returns how many events got positions (0 when another sequencer holds the lock).
 */
export const sequenceBatch = (batchSize: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The idle poll: one probe of the partial index, no transaction, no lock.
    const [pending] = yield* sql<{ pending: boolean }>`SELECT EXISTS (SELECT 1 FROM outbox_events WHERE position IS NULL) AS pending`
    if (pending?.pending !== true) return 0
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        const [lock] = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${sequencerLockKey}) AS locked`
        if (lock?.locked !== true) return 0
        const [result] = yield* sql<{ numbered: number; last: string | null }>`
          WITH writers AS (
            -- Transactions of this database still running that wrote to the outbox: they hold
            -- RowExclusiveLock on it until they end, and an ExclusiveLock on their own xid.
            SELECT t.transactionid FROM pg_locks t JOIN pg_locks r ON r.pid = t.pid
            WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
              AND r.locktype = 'relation' AND r.mode = 'RowExclusiveLock'
              AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND r.relation = 'outbox_events'::regclass
          ), horizon AS (
            SELECT coalesce(
              (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) x WHERE x::xid IN (SELECT transactionid FROM writers)),
              pg_snapshot_xmax(pg_current_snapshot())
            ) AS below
          ), next AS (
            SELECT uuid, row_number() OVER (ORDER BY transaction_id, append_order) AS n
            FROM outbox_events
            WHERE position IS NULL AND transaction_id < (SELECT below FROM horizon)
            ORDER BY transaction_id, append_order
            LIMIT ${batchSize}
          ), counter AS (
            UPDATE event_sequence SET last_position = last_position + (SELECT count(*) FROM next)
            WHERE EXISTS (SELECT 1 FROM next)
            RETURNING last_position - (SELECT count(*) FROM next) AS base
          ), numbered AS (
            UPDATE outbox_events e SET position = counter.base + next.n, sequenced_at = clock_timestamp()
            FROM next, counter WHERE e.uuid = next.uuid
            RETURNING e.position
          )
          SELECT count(*)::int AS numbered, max(position)::text AS last FROM numbered`
        const numbered = result?.numbered ?? 0
        if (numbered > 0 && result?.last != null) {
          yield* sql`SELECT pg_notify(${eventsSequencedChannel}, ${result.last})`
        }
        return numbered
      })
    )
  })

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
        if (!(yield* options.ready ?? Effect.succeed(true))) return
        yield* Ref.set(ready, true)
      }
      const now = yield* Clock.currentTimeMillis
      const state = yield* Ref.get(failing)
      if (state !== undefined && now < state.retryAt) return
      yield* sequencePending(batchSize).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.matchCauseEffect({
          onSuccess: () =>
            state === undefined ? Effect.void : Ref.set(failing, undefined).pipe(
              Effect.zipRight(Effect.logInfo("sequencer recovered").pipe(
                Effect.annotateLogs({ failedForMs: now - state.since })
              ))
            ),
          onFailure: (cause) => {
            const delay = Math.min(5_000, state === undefined ? 200 : state.delay * 2)
            const next = { since: state?.since ?? now, retryAt: now + delay, delay }
            return Ref.set(failing, next).pipe(
              Effect.zipRight(state === undefined
                ? Effect.logWarning("sequencer cannot number events; retrying", Cause.squash(cause))
                : Effect.void)
            )
          }
        })
      )
    })
    return { name: "sequencer", every: options.every ?? Duration.millis(20), run }
  })
