import { Context, Duration, Effect, Layer, Schedule } from "effect"

/** One kind of background work: run every `every` until the worker stops. */
export interface WorkerJob {
  readonly name: string
  readonly every: Duration.DurationInput
  readonly run: Effect.Effect<void>
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
    for (const job of jobs) {
      const once = job.run.pipe(
        Effect.catchAllCause((cause) => Effect.logError(`job ${job.name} failed`, cause)),
        Effect.uninterruptible
      )
      yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(job.every)))
    }
  })
)
