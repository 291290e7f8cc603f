import { Duration, Effect, Exit, Layer, Logger, LogLevel, Ref, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { type WorkerJob, WorkerJobs, WorkerLoop } from "./WorkerLoop.js"

/** Runs the loop over `jobs` for `ms`, then stops it. */
const runFor = (jobs: ReadonlyArray<WorkerJob>, ms: number) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(
      WorkerLoop.pipe(Layer.provide(Layer.succeed(WorkerJobs, jobs)), Layer.provide(Logger.minimumLogLevel(LogLevel.None))),
      scope
    )
    yield* Effect.sleep(Duration.millis(ms))
    yield* Scope.close(scope, Exit.void)
  })

describe("the worker loop", () => {
  it("runs the jobs a run wakes at once when it did work, and not when it did none", async () => {
    const counts = await Effect.runPromise(Effect.gen(function*() {
      const producerRuns = yield* Ref.make(0)
      const woken = yield* Ref.make(0)
      const idle = yield* Ref.make(0)
      // The producer works on its first three runs only; its consumers poll once an hour.
      const producer: WorkerJob = {
        name: "producer",
        every: Duration.millis(20),
        run: Ref.getAndUpdate(producerRuns, (n) => n + 1).pipe(Effect.map((n) => n < 3)),
        wakes: ["consumer", "unknown-job"]
      }
      const consumer: WorkerJob = { name: "consumer", every: Duration.hours(1), run: Ref.update(woken, (n) => n + 1) }
      const bystander: WorkerJob = { name: "bystander", every: Duration.hours(1), run: Ref.update(idle, (n) => n + 1) }
      yield* runFor([producer, consumer, bystander], 300)
      return { producer: yield* Ref.get(producerRuns), consumer: yield* Ref.get(woken), bystander: yield* Ref.get(idle) }
    }))
    // Every job runs once at start; the consumer then once per working producer run (wakes that
    // arrive while it runs collapse into one), never on its hourly tick; the bystander never again.
    expect(counts.producer).toBeGreaterThan(5)
    expect(counts.consumer).toBeGreaterThanOrEqual(2)
    expect(counts.consumer).toBeLessThanOrEqual(4)
    expect(counts.bystander).toBe(1)
  })
})
