import { Context, Duration, Effect, Layer, Queue } from "effect"

/**
 * One kind of background work: run every `every` until the worker stops.
 *
 * A run that answers `true` did work that other jobs of this process continue (the sequencer
 * numbered events; the fan-out made executions): the jobs named in `wakes` then run at once
 * instead of at their next tick, so a pipeline of jobs costs its statements, not its polls. Jobs
 * in other processes still find the work on their own tick.
 */
export interface WorkerJob {
  readonly name: string
  readonly every: Duration.DurationInput
  readonly run: Effect.Effect<unknown>
  readonly wakes?: ReadonlyArray<string>
}

/** The jobs this process runs. Areas add theirs as they arrive (sequencer, deliveries, retention...). */
export class WorkerJobs extends Context.Tag("@birzha/worker-host/WorkerJobs")<WorkerJobs, ReadonlyArray<WorkerJob>>() {
  static readonly none = Layer.succeed(WorkerJobs, [])
}

/**
 * Runs every job as a fiber of the layer's scope. Closing the scope (SIGTERM through the
 * runtime) interrupts the fibers between runs: a run in progress finishes first, because each
 * run is uninterruptible. A failing run is logged and retried on the next tick.
 */
export const WorkerLoop = Layer.scopedDiscard(
  Effect.gen(function*() {
    const jobs = yield* WorkerJobs
    yield* Effect.logInfo("worker started").pipe(Effect.annotateLogs({ jobs: jobs.map((j) => j.name).join(",") || "none" }))
    yield* Effect.addFinalizer(() => Effect.logInfo("worker stopped"))
    // One pending wake-up per job at most: wakes while it runs collapse into one more run.
    const wakeups = new Map<string, Queue.Queue<void>>()
    for (const job of jobs) wakeups.set(job.name, yield* Queue.sliding<void>(1))
    for (const job of jobs) {
      const wakes = (job.wakes ?? []).flatMap((name) => wakeups.get(name) ?? [])
      const woken = wakeups.get(job.name)!
      const once = job.run.pipe(
        Effect.tap((worked) => worked === true ? Effect.forEach(wakes, (queue) => Queue.offer(queue, undefined), { discard: true }) : Effect.void),
        Effect.catchAllCause((cause) => Effect.logError(`job ${job.name} failed`, cause)),
        Effect.uninterruptible
      )
      const pause = Effect.raceFirst(Effect.sleep(job.every), Queue.take(woken))
      // Without spans: the service installs no tracer, and a span per SQL statement was built and
      // dropped (as the HTTP host's request runtime, `CompiledApi.ts`).
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(once, pause)).pipe(Effect.withTracerEnabled(false)))
    }
  })
)
