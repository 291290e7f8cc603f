import { Session } from "node:inspector"
import { getHeapSpaceStatistics } from "node:v8"
import { Context, Effect, Layer } from "effect"

/** What the start-up collection gave back: the heap V8 held before and after it, in bytes, and how long the process paused. */
export interface StartupMemoryReport {
  readonly heapBefore: number
  readonly heapAfter: number
  readonly youngBefore: number
  readonly youngAfter: number
  readonly pauseMs: number
}

/**
 * A step a process that owns its Node runs once, after its migrations and before readiness says
 * ready (`MigrationsAtStart`). Absent in a program that embeds the service: its process and its
 * heap are the program's.
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
 * memory: what loading the code and starting left behind is freed, and the young generation,
 * which start-up's survivors grew to its largest (`--max-semi-space-size`), is shrunk; V8 grows it
 * again under load. Through the inspector's `HeapProfiler.collectGarbage`, the one way Node offers
 * without `--expose-gc` (which cannot ask for a memory-reducing collection). Never fails: an
 * inspector that refuses leaves the heap as it was.
 */
export const collectStartupGarbage: Effect.Effect<StartupMemoryReport> = Effect.async<StartupMemoryReport>((resume) => {
  const before = heapSpaces()
  const started = performance.now()
  const session = new Session()
  const done = () => {
    const after = heapSpaces()
    // Disconnected on the next turn: the inspector answers from within its own dispatch.
    setImmediate(() => session.disconnect())
    resume(Effect.succeed({
      heapBefore: before.heap,
      heapAfter: after.heap,
      youngBefore: before.young,
      youngAfter: after.young,
      pauseMs: Math.round(performance.now() - started)
    }))
  }
  try {
    session.connect()
    session.post("HeapProfiler.collectGarbage", done)
  } catch {
    done()
  }
})

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024)

/** `StartupMemory` for `birzha serve` and `birzha worker`: the collection, and one log line of what it gave back. */
export const StartupMemoryLive = Layer.succeed(StartupMemory, {
  release: Effect.flatMap(collectStartupGarbage, (report) =>
    Effect.logInfo("start-up garbage collected").pipe(
      Effect.annotateLogs({
        heapMiB: `${mib(report.heapBefore)} -> ${mib(report.heapAfter)}`,
        youngMiB: `${mib(report.youngBefore)} -> ${mib(report.youngAfter)}`,
        pauseMs: report.pauseMs
      })
    ))
})
