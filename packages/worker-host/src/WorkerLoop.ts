import { Context, Duration, Effect, Layer, Option, Queue, Stream } from "effect"
import { recordTimeDrivenDelay } from "./WorkerMetrics.js"

/**
 * One kind of background work: run every `every` until the worker stops.
 *
 * A run that answers `true` did work that other jobs of this process continue (the sequencer
 * numbered events; the fan-out made executions): the jobs named in `wakes` then run at once
 * instead of at their next tick, so a pipeline of jobs costs its statements, not its polls. Jobs
 * in other processes still find the work on their own tick.
 *
 * A time-driven job (a run starts at `startsAt`, a deal completes 14 days after hand-over) also
 * answers `nextDue`: the earliest moment it has work, read from an index. After each run the loop
 * sleeps until that moment, or `every` if that comes first (the safety net for a lost wake-up),
 * and a `DueSignals` signal of an earlier moment written meanwhile wakes it.
 *
 * A job without `nextDue` is woken by signals too: at once for a moment already due, and for a
 * later one (a retry written by its own run) its sleep ends at that moment. On the embedded
 * database the polling jobs rely on this (migration 0035's notifications) and sleep long.
 */
export interface WorkerJob {
  readonly name: string
  readonly every: Duration.DurationInput
  readonly run: Effect.Effect<unknown>
  readonly wakes?: ReadonlyArray<string>
  /** The earliest moment this job has work; `undefined` when none (or unknown: the read failed). */
  readonly nextDue?: Effect.Effect<Date | undefined>
}

/** The jobs this process runs. Areas add theirs as they arrive (sequencer, deliveries, retention...). */
export class WorkerJobs extends Context.Tag("@birzha/worker-host/WorkerJobs")<WorkerJobs, ReadonlyArray<WorkerJob>>() {
  static readonly none = Layer.succeed(WorkerJobs, [])
}

/** A moment was written: `job` has work at `at` (milliseconds since the epoch). */
export interface DueSignal {
  readonly job: string
  readonly at: number
}

/**
 * Moments written by any process (the `birzha_due` notifications of migration 0030, WorkerHost.ts).
 * Optional: without it the jobs still sleep until their next due moment, but a moment written
 * meanwhile waits for that or for `every`. The stream may fail (a lost connection); the loop then
 * wakes every timed job, since signals may have been missed, and subscribes again.
 */
export class DueSignals extends Context.Tag("@birzha/worker-host/DueSignals")<DueSignals, Stream.Stream<DueSignal, unknown>>() {}

const provisional = new WeakSet<Date>()

/**
 * A `nextDue` answer that knows no moment yet (the database is not migrated): look again at `at`.
 * The loop sleeps until then as for a moment, but counts no delay against it.
 */
export const lookAgainAt = (at: number): Date => {
  const date = new Date(at)
  provisional.add(date)
  return date
}

/** `"<job> <epoch ms>"`, the payload of migration 0030's `birzha_notify_due`; anything else is no signal. */
export const parseDueSignal = (payload: string): DueSignal | undefined => {
  const match = /^([a-z0-9_-]+) (-?\d+)$/.exec(payload)
  return match === null ? undefined : { job: match[1]!, at: Number(match[2]) }
}

// The store keeps microseconds and a timer may fire a millisecond early: wake a few ms after the
// moment, so the job finds it due, rather than just before it.
const slackMs = 5
// setTimeout fires at once for a longer delay (Node's limit).
const maxTimerMs = 2 ** 31 - 1
// A due moment still reported after the run (rows another worker holds, or the database's clock
// behind this one's): retry from 20 ms, doubling, instead of spinning.
const staleRetryMs = 20

/**
 * Runs every job as a fiber of the layer's scope. Closing the scope (SIGTERM through the
 * runtime) interrupts the fibers between runs: a run in progress finishes first, because each
 * run is uninterruptible. A failing run is logged and retried on the next tick.
 */
export const WorkerLoop = Layer.scopedDiscard(
  Effect.gen(function*() {
    const jobs = yield* WorkerJobs
    const signals = yield* Effect.serviceOption(DueSignals)
    yield* Effect.logInfo("worker started").pipe(Effect.annotateLogs({ jobs: jobs.map((j) => j.name).join(",") || "none" }))
    yield* Effect.addFinalizer(() => Effect.logInfo("worker stopped"))
    // One pending wake-up per job at most: wakes while it runs collapse into one more run.
    const wakeups = new Map<string, Queue.Queue<void>>()
    for (const job of jobs) wakeups.set(job.name, yield* Queue.sliding<void>(1))
    // When each timed job's sleep ends; absent while it runs (a signal then means one more run).
    const sleepingUntil = new Map<string, number>()
    // The earliest moment signalled for each job, until a run started at or after it.
    const signalledAt = new Map<string, number>()
    // Each timed job's earliest due moment not yet seen done (its `nextDue`, or an earlier one
    // signalled). A moment is done when the job's next read no longer reports it; how late the
    // run that did it began is the job's time-driven delay (WorkerMetrics.ts). A run that failed,
    // or rows another worker holds, leave the moment reported: it counts when it is done, with
    // all its lateness.
    const pendingOf = new Map<string, number>()
    const learn = (name: string, at: number) => {
      const known = pendingOf.get(name)
      if (known === undefined || at < known) pendingOf.set(name, at)
    }
    for (const job of jobs) {
      const wakes = (job.wakes ?? []).flatMap((name) => wakeups.get(name) ?? [])
      const woken = wakeups.get(job.name)!
      let startedAt = 0
      const once = Effect.sync(() => {
        startedAt = Date.now()
      }).pipe(
        Effect.zipRight(job.run),
        Effect.tap((worked) => worked === true ? Effect.forEach(wakes, (queue) => Queue.offer(queue, undefined), { discard: true }) : Effect.void),
        Effect.catchAllCause((cause) => Effect.logError(`job ${job.name} failed`, cause)),
        Effect.uninterruptible
      )
      const everyMs = Duration.toMillis(job.every)
      let stale = 0
      const pauseMs: Effect.Effect<number> = job.nextDue === undefined ? Effect.succeed(everyMs) : Effect.map(job.nextDue, (due) => {
        if (due === undefined || !provisional.has(due)) {
          // The earliest moment known before the run, now gone (or later): the run did it.
          const pending = pendingOf.get(job.name)
          if (pending !== undefined && pending <= startedAt && (due === undefined || due.getTime() > pending)) {
            recordTimeDrivenDelay(job.name, startedAt - pending)
            pendingOf.delete(job.name)
          }
          if (due !== undefined) learn(job.name, due.getTime())
        }
        if (due === undefined) return Math.min(everyMs, maxTimerMs)
        const until = due.getTime() - Date.now()
        if (until >= 0) {
          stale = 0
          return Math.min(everyMs, Math.ceil(until) + slackMs, maxTimerMs)
        }
        const retry = staleRetryMs * 2 ** stale
        stale = Math.min(stale + 1, 16)
        return Math.min(everyMs, retry, maxTimerMs)
      })
      // A signalled moment the last run started too early for ends the sleep then (after its slack).
      const untilSignalled = (ms: number) => {
        const at = signalledAt.get(job.name)
        if (at === undefined) return ms
        if (at <= startedAt) {
          signalledAt.delete(job.name)
          return ms
        }
        return Math.min(ms, Math.max(0, Math.ceil(at - Date.now())) + slackMs)
      }
      const pause = Effect.flatMap(Effect.map(pauseMs, untilSignalled), (ms) =>
        Effect.sync(() => sleepingUntil.set(job.name, Date.now() + ms)).pipe(
          Effect.zipRight(Effect.raceFirst(Effect.sleep(Duration.millis(ms)), Queue.take(woken))),
          Effect.ensuring(Effect.sync(() => sleepingUntil.delete(job.name)))
        ))
      // Without spans: the service installs no tracer, and a span per SQL statement was built and
      // dropped (as the HTTP host's request runtime, `CompiledApi.ts`).
      // A timed job's moments due before this process started count from their moment too.
      const seed = job.nextDue === undefined ? Effect.void : Effect.map(job.nextDue, (due) => {
        if (due !== undefined && !provisional.has(due)) learn(job.name, due.getTime())
      })
      yield* Effect.forkScoped(Effect.zipRight(seed, Effect.forever(Effect.zipRight(once, pause))).pipe(Effect.withTracerEnabled(false)))
    }
    if (Option.isSome(signals)) {
      // A moment later than the job's planned wake-up changes nothing: its timer comes first. A
      // moment still ahead is kept for a job without its own `nextDue` read: the run it wakes
      // plans its next sleep to end then.
      const onSignal = (signal: DueSignal) => {
        const queue = wakeups.get(signal.job)
        if (queue === undefined) return Effect.void
        const until = sleepingUntil.get(signal.job)
        if (until !== undefined && signal.at >= until) return Effect.void
        return Effect.suspend(() => {
          const timed = jobs.find((job) => job.name === signal.job)?.nextDue !== undefined
          if (timed) learn(signal.job, signal.at)
          if (!timed && signal.at > Date.now()) {
            const earlier = signalledAt.get(signal.job)
            if (earlier === undefined || signal.at < earlier) signalledAt.set(signal.job, signal.at)
          }
          return Queue.offer(queue, undefined)
        })
      }
      // Every job: the polling ones may be sleeping long on the signals too (embedded database).
      const wakeAll = Effect.forEach(jobs, (job) => Queue.offer(wakeups.get(job.name)!, undefined), { discard: true })
      let lost = false
      // A stream that ends or fails (connection lost) may have missed signals: every timed job
      // looks again, and the loop subscribes again a second later.
      const listen = Stream.runForEach(signals.value, (signal) => {
        lost = false
        return onSignal(signal)
      }).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          (lost || exit._tag === "Success" ? Effect.void : Effect.logWarning("due-moment signals lost; listening again", exit.cause)).pipe(
            Effect.zipRight(Effect.sync(() => {
              lost = true
            })),
            Effect.zipRight(wakeAll),
            Effect.zipRight(Effect.sleep(Duration.seconds(1)))
          )
        )
      )
      yield* Effect.forkScoped(Effect.forever(listen).pipe(Effect.withTracerEnabled(false)))
    }
  })
)
