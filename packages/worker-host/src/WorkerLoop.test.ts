import { Duration, Effect, Exit, Layer, Logger, LogLevel, Metric, Queue, Scope, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { type DueSignal, DueSignals, lookAgainAt, type WorkerJob, WorkerJobs, WorkerLoop } from "./WorkerLoop.js"
import { timeDrivenDelay } from "./WorkerMetrics.js"

/** Starts the loop over `job` with a queue of due-moment signals; closing `scope` stops it. */
const signalledLoop = (job: WorkerJob) =>
  Effect.gen(function*() {
    const signals = yield* Queue.unbounded<DueSignal>()
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(
      WorkerLoop.pipe(
        Layer.provide(Layer.succeed(WorkerJobs, [job])),
        Layer.provide(Layer.succeed(DueSignals, Stream.fromQueue(signals))),
        Layer.provide(Logger.minimumLogLevel(LogLevel.None))
      ),
      scope
    )
    return { signals, scope }
  })

/**
 * Waits until `done` holds, checking every 10 ms, inside the test's effect; a liveness bound, not a
 * speed limit (as testing/progress.ts's `eventually`).
 */
const until = (done: () => boolean) =>
  Effect.repeat(Effect.sleep(Duration.millis(10)), { until: done }).pipe(Effect.timeout(Duration.seconds(100)))

describe("the worker loop", () => {
  it("runs the jobs a run wakes at once when it did work, and not when it did none", async () => {
    let producerRuns = 0
    let woken = 0
    let idle = 0
    // The producer works on its first three runs only; its consumers poll once an hour.
    const producer: WorkerJob = {
      name: "producer",
      every: Duration.millis(20),
      run: Effect.sync(() => producerRuns++ < 3),
      wakes: ["consumer", "unknown-job"]
    }
    const consumer: WorkerJob = { name: "consumer", every: Duration.hours(1), run: Effect.sync(() => void woken++) }
    const bystander: WorkerJob = { name: "bystander", every: Duration.hours(1), run: Effect.sync(() => void idle++) }
    await Effect.runPromise(Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        WorkerLoop.pipe(Layer.provide(Layer.succeed(WorkerJobs, [producer, consumer, bystander])), Layer.provide(Logger.minimumLogLevel(LogLevel.None))),
        scope
      )
      // Until the producer has run past its working runs, however long a busy machine takes for
      // that (it once ran 5 times in a fixed 300 ms with a second suite beside this one).
      yield* until(() => producerRuns > 5)
      yield* Scope.close(scope, Exit.void)
    }))
    // Every job runs once at start; the consumer then once per working producer run (wakes that
    // arrive while it runs collapse into one), never on its hourly tick; the bystander never again.
    expect(woken).toBeGreaterThanOrEqual(2)
    expect(woken).toBeLessThanOrEqual(4)
    expect(idle).toBe(1)
  })
})

describe("the worker loop's timed jobs", () => {
  it("sleep until the job's next due moment, not before; a signal wakes them only for a moment before their planned wake-up", async () => {
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const runs: Array<number> = []
      let asked = 0
      const due = Date.now() + 1_000
      // The moment stays reported until the second run did it; then nothing is due (an hour's sleep).
      const job: WorkerJob = {
        name: "clock",
        every: Duration.hours(1),
        run: Effect.sync(() => runs.push(Date.now())),
        nextDue: Effect.sync(() => {
          asked++
          return runs.length < 2 ? new Date(due) : undefined
        })
      }
      const { signals, scope } = yield* signalledLoop(job)
      yield* until(() => asked >= 1)
      yield* Effect.sleep(Duration.millis(50))
      // Later than its planned wake-up: no run.
      yield* Queue.offer(signals, { job: "clock", at: Date.now() + 600_000 })
      yield* Effect.sleep(Duration.millis(200))
      const afterLate = runs.length
      yield* until(() => runs.length >= 2)
      yield* until(() => asked >= 2)
      yield* Effect.sleep(Duration.millis(50))
      // Asleep for an hour now; a moment due now wakes it.
      const signalled = Date.now()
      yield* Queue.offer(signals, { job: "clock", at: signalled })
      yield* until(() => runs.length >= 3)
      yield* Scope.close(scope, Exit.void)
      return { afterLate, second: runs[1]!, third: runs[2]!, due, signalled }
    })))
    expect(result.afterLate).toBe(1)
    expect(result.second).toBeGreaterThanOrEqual(result.due)
    expect(result.third).toBeGreaterThanOrEqual(result.signalled)
  })
})

describe("the worker loop's time-driven delay (birzha_time_driven_delay_seconds)", () => {
  it("counts how late the run that did each moment began, once per moment, by job", async () => {
    const delays = Metric.tagged(timeDrivenDelay, "job", "late-clock")
    const before = Effect.runSync(Metric.value(delays))
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      let runs = 0
      // A moment two seconds past when the loop starts, still reported after three runs (runs that
      // failed, or rows another worker holds): counted once, when the fourth run did it.
      const overdue = new Date(Date.now() - 2_000)
      const job: WorkerJob = {
        name: "late-clock",
        every: Duration.hours(1),
        run: Effect.sync(() => runs++),
        nextDue: Effect.sync(() => (runs < 4 ? overdue : undefined))
      }
      const { signals, scope } = yield* signalledLoop(job)
      yield* until(() => runs >= 4)
      yield* Effect.sleep(Duration.millis(100))
      // Asleep for an hour now; a moment written half a second ago wakes it.
      yield* Queue.offer(signals, { job: "late-clock", at: Date.now() - 500 })
      yield* until(() => runs >= 5)
      yield* Scope.close(scope, Exit.void)
      return Effect.runSync(Metric.value(delays))
    })))
    expect(result.count - before.count).toBe(2)
    const added = result.sum - before.sum
    // At least the 2 s and the 0.5 s; a loaded machine's timers add to them, never take away.
    expect(added).toBeGreaterThanOrEqual(2.5)
    expect(added).toBeLessThan(60)
  })

  it("counts nothing against a moment that only says when to look again (a database not migrated yet)", async () => {
    const delays = Metric.tagged(timeDrivenDelay, "job", "not-migrated")
    const before = Effect.runSync(Metric.value(delays)).count
    const runs = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      let runs = 0
      const job: WorkerJob = {
        name: "not-migrated",
        every: Duration.hours(1),
        run: Effect.sync(() => runs++),
        nextDue: Effect.sync(() => (runs < 4 ? lookAgainAt(Date.now() + 30) : undefined))
      }
      const { scope } = yield* signalledLoop(job)
      yield* until(() => runs >= 4)
      yield* Effect.sleep(Duration.millis(100))
      yield* Scope.close(scope, Exit.void)
      return runs
    })))
    expect(runs).toBe(4)
    expect(Effect.runSync(Metric.value(delays)).count).toBe(before)
  })
})

describe("the worker loop's polling jobs woken by signals", () => {
  it("a job without its own due-moment read, woken by a later moment (a retry its run wrote), runs again at that moment, not at its fallback", async () => {
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const runs: Array<number> = []
      const job: WorkerJob = { name: "deliveries", every: Duration.hours(1), run: Effect.sync(() => runs.push(Date.now())) }
      const { signals, scope } = yield* signalledLoop(job)
      yield* until(() => runs.length >= 1)
      // Asleep for an hour: a moment 800 ms ahead wakes it to plan, and it runs again at that moment.
      const at = Date.now() + 800
      yield* Queue.offer(signals, { job: "deliveries", at })
      yield* until(() => runs.some((run) => run >= at))
      const atMoment = runs.length
      // Then it sleeps its hour again.
      yield* Effect.sleep(Duration.millis(300))
      yield* Scope.close(scope, Exit.void)
      return { runs: runs.length, atMoment, ranAt: runs.find((run) => run >= at)!, at }
    })))
    // Started, woken to plan (one run), then at the moment: three runs, no more afterwards.
    expect(result.atMoment).toBe(3)
    expect(result.runs).toBe(3)
    expect(result.ranAt).toBeGreaterThanOrEqual(result.at)
  })
})
