import { Effect, Fiber } from "effect"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import { runToEnd } from "../../../../testing/childProcess.js"

/** effect as this package resolves it (its CommonJS build: patches/effect@3.22.4.patch patches both). */
const effectPath = createRequire(import.meta.url).resolve("effect")

/** About 94 KiB of small objects per fiber, young when made. */
const garbageBytes = 94 * 1024

/**
 * In a process of its own (in a test worker, after other files, a run of the suite read 13 MB, for a
 * reason not found, where this test alone reads 0.2 MB; the host's own figures are in bench/README.md,
 * `allocations`): `fibers` root
 * fibers registered at once, as a transport starts one per call, each yielding once, then making its
 * garbage and ending; then three young collections. Answers how much the old generation grew.
 */
const oldGenerationGrowth = async (fibers: number): Promise<number> => {
  const script = `
    const { Effect } = require(${JSON.stringify(effectPath)})
    const { getHeapSpaceStatistics } = require("node:v8")
    const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === "old_space").space_used_size
    const garbage = () => Array.from({ length: 2000 }, (_, i) => ({ i, text: "item " + i }))
    // \`fibers\` root fibers registered at once, each yielding once, then making its garbage and ending.
    const round = (then) => {
      let left = ${fibers}
      for (let i = 0; i < ${fibers}; i++) {
        Effect.runFork(Effect.zipRight(Effect.yieldNow(), Effect.sync(garbage))).addObserver(() => {
          if (--left === 0) setImmediate(then)
        })
      }
    }
    // A first round makes what effect makes once (its scheduler, its registry's growth); then what
    // lives on goes to the old generation, as in a running host, and the second round is counted.
    round(() => {
      gc(); gc(); gc({ type: "minor" }); gc({ type: "minor" })
      const before = oldSpaceUsed()
      round(() => {
        for (let i = 0; i < 3; i++) gc({ type: "minor" })
        process.stdout.write(String(oldSpaceUsed() - before))
      })
    })`
  const run = await runToEnd(process.execPath, ["--expose-gc", "-e", script])
  // An empty answer (the rounds never ended) must fail, not read as 0.
  if (run.status !== 0 || !/^\d+$/.test(run.stdout)) throw new Error(`the measuring process failed: ${run.stdout}${run.stderr}`)
  return Number(run.stdout)
}

// Every transport runs a call as a root fiber (`Runtime.runCallback`), which effect registers in
// its global list of roots until it ends. effect 3.22.4 kept that list in a `Set`; once the set was
// in the old generation, the tables it grew and shrank into were allocated there too, and each
// replaced table, dead but still naming the fibers it held, kept them and all they reached through
// every young collection until the next full one: ~2.8 KiB per request of the session read
// promoted to the old generation. patches/effect@3.22.4.patch keeps the roots in a list whose nodes
// are emptied as their fibers end (docs/decisions.md).
describe("root fibers, as every transport starts one per call", () => {
  it("leave nothing they made to the old generation once they have ended", async () => {
    const fibers = 100
    // Kept, it would be about 100 × 94 KiB (effect as published: 14.6 MB); patched, under 0.1 MB.
    expect(await oldGenerationGrowth(fibers)).toBeLessThan(fibers * garbageBytes / 4)
  })

  it("are listed by Fiber.roots while they run, in the order they started, and not once they have ended", async () => {
    const waiting = Effect.never
    const first = Effect.runFork(waiting)
    const second = Effect.runFork(waiting)
    const third = Effect.runFork(waiting)
    const ours: ReadonlyArray<unknown> = [first, second, third]
    const listed = () => Effect.runSync(Fiber.roots).filter((fiber) => ours.includes(fiber))
    expect(listed()).toEqual([first, second, third])
    await Effect.runPromise(Fiber.interrupt(second))
    expect(listed()).toEqual([first, third])
    await Effect.runPromise(Fiber.interrupt(first))
    await Effect.runPromise(Fiber.interrupt(third))
    expect(listed()).toEqual([])
    const fourth = Effect.runFork(waiting)
    expect(Effect.runSync(Fiber.roots)).toContain(fourth)
    await Effect.runPromise(Fiber.interrupt(fourth))
    expect(Effect.runSync(Fiber.roots)).not.toContain(fourth)
  })
})
