import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from "node:v8"
import { Cause, Context, Effect, Layer } from "effect"

/** What the start-up collection gave back: V8's heap and its young generation before and after (bytes committed), and the pause. */
export interface StartupMemoryReport {
  /** Bytes committed to the whole heap before the collection. */
  readonly heapBefore: number
  /** Bytes committed to it after. */
  readonly heapAfter: number
  /** Bytes committed to the young generation (`new_space`) before the collection. */
  readonly youngBefore: number
  /** Bytes committed to it after. */
  readonly youngAfter: number
  /** How long the process stood still for it, in milliseconds. */
  readonly pauseMs: number
}

/**
 * A step a process that owns its Node runs once, after its migrations and before readiness says
 * ready (`MigrationsAtStart`). Absent in a program that embeds the service: its process and its
 * heap are the program's. Readiness waits for `release`; a failure or defect in it is logged and
 * passed over.
 */
export class StartupMemory extends Context.Tag("@birzha/infrastructure/StartupMemory")<StartupMemory, {
  readonly release: Effect.Effect<void>
}>() {}

const heapSpaces = () => {
  let heap = 0
  let young = 0
  for (const space of getHeapSpaceStatistics()) {
    heap += space.space_size
    if (space.space_name === "new_space") young = space.space_size
  }
  return { heap, young }
}

/**
 * One memory-reducing full collection of this process's heap, as V8 does when the system is low on
 * memory: what loading the code and starting left behind is freed, and the young generation, which
 * start-up's survivors grew to its largest (`--max-semi-space-size`), is shrunk to its floor
 * (`--min-semi-space-size`; its pages are resident again only once written). Through the
 * inspector's `HeapProfiler.collectGarbage`, the one way Node offers without `--expose-gc` (which
 * cannot ask for a memory-reducing collection); `node:inspector` is imported here, so a Node built
 * without it fails only this step. Fails when the inspector refuses; the heap is then as it was.
 * Its price: an object literal with a computed key, in code that ran before it, is dearer for the
 * rest of the process's life (node's `process.nextTick` makes one per call), and the young
 * generation's pages fault in again; a start without it cost 3–4 % less CPU per request but held
 * 124–133 MB at ready (bench/README.md, "the start-up collection makes warm computed-key literals
 * dear" and "what makes node's calls dear in the host, taken apart").
 */
export const collectStartupGarbage: Effect.Effect<StartupMemoryReport, Error> = Effect.flatMap(
  Effect.tryPromise({ try: () => import("node:inspector"), catch: (cause) => new Error("node:inspector is not available", { cause }) }),
  ({ Session }) =>
    Effect.async<StartupMemoryReport, Error>((resume) => {
      const before = heapSpaces()
      const started = performance.now()
      let session: InstanceType<typeof Session> | undefined
      const done = (error: Error | null) => {
        const after = heapSpaces()
        // Disconnected on a later turn, not from within the inspector's own callback.
        const connected = session
        if (connected !== undefined) setImmediate(() => connected.disconnect())
        resume(
          error !== null ? Effect.fail(error) : Effect.succeed({
            heapBefore: before.heap,
            heapAfter: after.heap,
            youngBefore: before.young,
            youngAfter: after.young,
            pauseMs: Math.round(performance.now() - started)
          })
        )
      }
      try {
        session = new Session()
        session.connect()
        session.post("HeapProfiler.collectGarbage", done)
      } catch (error) {
        done(error instanceof Error ? error : new Error(String(error)))
      }
    })
)

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024)

/** Whether Node was started with the V8 flag `name` (either spelling), which then stands. */
const givenToNode = (name: string) =>
  process.execArgv.some((arg) => {
    const flag = arg.replaceAll("_", "-")
    return flag === name || flag.startsWith(`${name}=`)
  })

/**
 * The old generation is collected once it has grown to twice what the last full collection kept
 * (V8's `--heap-growing-percent=100`). V8 chooses up to four times on a heap limit of 2 GiB or more
 * (1.3–2.0 below it, where this would allow more, so it is left to V8): what requests leave there
 * is garbage, and a busy host's RSS peaked ~70 MB lower for it (docs/decisions.md, "The old
 * generation's growth"). Set while running, so a V8 without the flag only says so on stderr, and
 * `node --heap-growing-percent=N …` keeps N. Set before the collection, so the limit it computes
 * follows it.
 */
const boundOldGenerationGrowth = Effect.sync(() => {
  if (getHeapStatistics().heap_size_limit >= 2 * 1024 ** 3 && !givenToNode("--heap-growing-percent")) {
    setFlagsFromString("--heap-growing-percent=100")
  }
})

/**
 * The young generation stays at its floor (`--min-semi-space-size`, to which the collection below
 * shrinks it): V8's `--semi-space-growth-factor=1`, read by V8 each time it would grow it. For a
 * process that only answers requests: a request leaves nothing alive for the young generation to
 * hold, and since a request allocates ~45 KiB a host scavenging four times as often costs no CPU
 * that `bench/` can separate from its noise, while its RSS under load is ~80 MB lower and the
 * catalog's rise ~90 MB lower (docs/decisions.md, "The request host's young generation held at its
 * floor"). The worker keeps the growth: its deliveries ran ~13 % slower held. Set while running, as
 * the old generation's bound; `node --semi-space-growth-factor=N …` keeps N.
 */
const holdYoungGeneration = Effect.sync(() => {
  if (!givenToNode("--semi-space-growth-factor")) setFlagsFromString("--semi-space-growth-factor=1")
})

const startupMemory = (before: Effect.Effect<void>): Context.Tag.Service<StartupMemory> => ({
  release: Effect.zipRight(before, collectStartupGarbage).pipe(
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("no answer within 10 s") }),
    Effect.matchCauseEffect({
      onSuccess: (report) =>
        Effect.logInfo("start-up garbage collected").pipe(
          Effect.annotateLogs({
            heapMiB: `${mib(report.heapBefore)} -> ${mib(report.heapAfter)}`,
            youngMiB: `${mib(report.youngBefore)} -> ${mib(report.youngAfter)}`,
            pauseMs: report.pauseMs
          })
        ),
      onFailure: (cause) => Effect.logWarning("start-up garbage not collected").pipe(Effect.annotateLogs({ reason: Cause.pretty(cause) }))
    })
  )
})

/**
 * `StartupMemory` for `birzha worker` and for `birzha serve` with its workers in the process (the
 * embedded database): the old generation's growth bounded, the collection, and one log line of
 * what it gave back. A collection that fails or has not answered within ten seconds is logged and
 * passed over: readiness does not wait on it.
 */
export const StartupMemoryLive = Layer.succeed(StartupMemory, startupMemory(boundOldGenerationGrowth))

/**
 * `StartupMemory` for `birzha serve` on a Postgres server, a process that only answers requests:
 * as `StartupMemoryLive`, and its young generation held at its floor.
 */
export const StartupMemoryRequestsLive = Layer.succeed(
  StartupMemory,
  startupMemory(Effect.zipRight(boundOldGenerationGrowth, holdYoungGeneration))
)
