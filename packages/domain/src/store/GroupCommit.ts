import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Deferred, Effect, Exit, FiberRef, HashMap, List, Option } from "effect"
import { currentAutomationCause } from "./Outbox.js"

/** What a batch answers for one of its items: the item's own outcome, or `runAlone`. */
export type BatchOutcome<A, E> = Exit.Exit<A, E> | typeof runAlone

/**
 * The item did not take part in the batch (its `requestUuid` was already claimed, by an earlier
 * request or by another item of the same batch): it runs by itself after the batch committed,
 * through the command's single path, which answers a retry with the stored result.
 */
export const runAlone: unique symbol = Symbol("runAlone")

/**
 * A batch that must not commit as it is: some of its items were refused (or are to run alone
 * after all) once their keys were claimed. The transaction rolls back; `answers` (by the item's
 * index in the batch) settle those items — a failure answers its request, `runAlone` runs it by
 * itself afterwards — and the others run again as a batch. So a refused request commits no write
 * at all, not even a key claimed and given back.
 */
export class Rerun<A, E> {
  readonly _tag = "Rerun"
  constructor(readonly answers: ReadonlyMap<number, Exit.Exit<A, E> | typeof runAlone>) {}
}

export interface GroupCommitOf<I, A, E> {
  /**
   * The command for a batch of items, in one transaction (the group commit opens it): one
   * outcome per item, in the items' order, or `Rerun` to roll back and settle some items first.
   * A `SqlError` fails the whole batch, whose items then run alone.
   */
  readonly batch: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<BatchOutcome<A, E>>, SqlError | Rerun<A, E>, SqlClient.SqlClient>
  /** The same command for one item in its own transaction: the path inside transactions and after a failed batch. */
  readonly alone: (item: I) => Effect.Effect<A, E | SqlError, SqlClient.SqlClient>
  /** At most this many items in one transaction. */
  readonly maxBatch: number
  /** At most this many batches at once per database client. */
  readonly maxConcurrent: number
}

/**
 * A drain serves every request queued while it runs, not the one whose fiber forked it: it keeps
 * none of that request's services (its actor, its tracing span), nor its log annotations — only
 * the database client. (`batch` and `alone` need nothing else: their type says so.)
 */
const detached = <A, E>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E> =>
  effect.pipe(
    Effect.mapInputContext((_: Context.Context<never>) => Context.make(SqlClient.SqlClient, sql)),
    Effect.locally(FiberRef.currentLogAnnotations, HashMap.empty()),
    Effect.locally(FiberRef.currentLogSpan, List.empty())
  )

/** How long a batch waits for a row or key lock held by another transaction before its items run alone. */
export const batchLockTimeoutMs = 500

interface Waiting<I, A, E> {
  readonly item: I
  readonly answer: Deferred.Deferred<A, E | SqlError>
}

interface State<I, A, E> {
  readonly queue: Array<Waiting<I, A, E>>
  running: number
}

/**
 * Group commit (as databases do for their log): requests of one command that arrive while a
 * batch is in flight wait and then go together in the next transaction, with multi-row
 * statements, so a statement's round trip, a transaction's BEGIN/COMMIT and its log flush are
 * paid per batch rather than per request. Under no load a batch is one item and runs at once;
 * under load the batch is whatever queued meanwhile (up to `maxBatch`), so no timer adds latency.
 *
 * A caller inside a transaction (an approval commit, an automation, a test's rolled-back world)
 * runs alone in it: its writes must belong to that transaction. An automation's command runs
 * alone too: its events carry its cause. A batch that fails with a `SqlError` (a deadlock, a lost
 * connection, a lock held elsewhere beyond `batchLockTimeoutMs`) wrote nothing; each of its
 * items then runs alone, in a fiber of its own, and its own result or error answers it. A batch
 * runs in its own fiber: a request that goes away does not cancel the others' transaction (its
 * `requestUuid` answers a retry).
 */
export const groupCommit = <I, A, E>(of: GroupCommitOf<I, A, E>) => {
  const states = new WeakMap<SqlClient.SqlClient, State<I, A, E>>()
  // An item alone runs in a fiber of its own: it may wait on a lock as long as a single command
  // would, without holding up the batches behind it.
  const answerAlone = (waiting: Waiting<I, A, E>) =>
    Effect.forkDaemon(Effect.flatMap(Effect.exit(of.alone(waiting.item)), (exit) => Deferred.done(waiting.answer, exit)))

  const runBatch = (sql: SqlClient.SqlClient, batch: ReadonlyArray<Waiting<I, A, E>>) =>
    Effect.gen(function*() {
      let pending = batch
      const alone: Array<Waiting<I, A, E>> = []
      while (pending.length > 0) {
        const items = pending
        const exit = yield* Effect.exit(sql.withTransaction(Effect.zipRight(
          // Every request queued behind a batch waits for it: a batch gives up on a lock held
          // elsewhere (an open transaction on one of its rows) rather than stall them all.
          sql`SET LOCAL lock_timeout = ${sql.literal(`'${batchLockTimeoutMs}ms'`)}`,
          of.batch(items.map((waiting) => waiting.item))
        )))
        if (Exit.isSuccess(exit)) {
          items.forEach((waiting, index) => {
            const outcome = exit.value[index]
            if (outcome === undefined || outcome === runAlone) alone.push(waiting)
            else Deferred.unsafeDone(waiting.answer, outcome)
          })
          break
        }
        const rerun = Cause.failureOption(exit.cause).pipe(Option.filter((error): error is Rerun<A, E> => error instanceof Rerun))
        if (Option.isNone(rerun) || rerun.value.answers.size === 0) {
          // Nothing of the batch committed: each item on its own, which answers it with its own
          // result or error (a database that is down fails each of them as it failed the batch).
          alone.push(...items)
          break
        }
        // Rolled back: the settled items are answered (or run alone after), the rest go again.
        const answers = rerun.value.answers
        pending = items.filter((waiting, index) => {
          const answer = answers.get(index)
          if (answer === runAlone) alone.push(waiting)
          else if (answer !== undefined) Deferred.unsafeDone(waiting.answer, answer)
          return answer === undefined
        })
      }
      yield* Effect.forEach(alone, answerAlone, { discard: true })
    })

  const drain = (sql: SqlClient.SqlClient, state: State<I, A, E>): Effect.Effect<void, never, SqlClient.SqlClient> =>
    Effect.suspend(() => {
      const batch = state.queue.splice(0, of.maxBatch)
      if (batch.length === 0) {
        state.running--
        return Effect.void
      }
      return Effect.zipRight(
        runBatch(sql, batch).pipe(
          Effect.catchAllCause((cause) => Effect.forEach(batch, (waiting) => Deferred.failCause(waiting.answer, cause), { discard: true }))
        ),
        drain(sql, state)
      )
    })

  return (item: I): Effect.Effect<A, E | SqlError, SqlClient.SqlClient> =>
    Effect.gen(function*() {
      const inTransaction = Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))
      // An automation's command runs alone too: its events carry its cause (a batch's, the first item's context).
      if (inTransaction || (yield* FiberRef.get(currentAutomationCause)) !== undefined) return yield* of.alone(item)
      const sql = yield* SqlClient.SqlClient
      let state = states.get(sql)
      if (state === undefined) {
        state = { queue: [], running: 0 }
        states.set(sql, state)
      }
      const queued = state
      const answer = yield* Deferred.make<A, E | SqlError>()
      // Queued and, when a slot is free, a drain started, in one step an interruption of the
      // request cannot split (a slot counted without its drain would be lost for good).
      yield* Effect.uninterruptible(Effect.suspend(() => {
        queued.queue.push({ item, answer })
        if (queued.running >= of.maxConcurrent) return Effect.void
        queued.running++
        return Effect.asVoid(Effect.forkDaemon(detached(sql, drain(sql, queued)).pipe(Effect.uninterruptible)))
      }))
      return yield* Deferred.await(answer)
    })
}
