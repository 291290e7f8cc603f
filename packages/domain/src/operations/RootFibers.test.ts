import { Effect, Fiber } from "effect"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"

setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as (options?: { readonly type: "minor" | "major" }) => void

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === "old_space")!.space_used_size

/** About 94 KiB of small objects, young when made. */
const garbage = () => Array.from({ length: 2_000 }, (_, i) => ({ i, text: `item ${i}` }))
const garbageBytes = 94 * 1024

/** Runs `program` as `fibers` root fibers at once (as a transport starts one per call) until all have ended; keeps nothing of their results. */
const runRoots = (program: Effect.Effect<unknown>, fibers: number) =>
  Promise.all(Array.from({ length: fibers }, () => new Promise<void>((done) => Effect.runFork(program).addObserver(() => done()))))

// Every transport runs a call as a root fiber (`Runtime.runCallback`), which effect registers in
// its global list of roots until it ends. effect 3.22.4 kept that list in a `Set`; once the set was
// in the old generation, the tables it grew and shrank into were allocated there too, and each
// replaced table, dead but still naming the fibers it held, kept them and all they reached through
// every young collection until the next full one: ~2.8 KiB per request of the session read
// promoted to the old generation. patches/effect@3.22.4.patch keeps the roots in a list whose nodes
// are emptied as their fibers end (docs/decisions.md).
describe("root fibers, as every transport starts one per call", () => {
  it("leave nothing they made to the old generation once they have ended", async () => {
    // What lives on, the roots' registry with it, is in the old generation, as in a running host;
    // the two young collections promote what is young and alive now (this worker's other work),
    // so that the count below is of this test's objects.
    collectGarbage()
    collectGarbage()
    collectGarbage({ type: "minor" })
    collectGarbage({ type: "minor" })
    const before = oldSpaceUsed()
    const fibers = 100
    // Each fiber yields once, so all are registered at once, then makes its garbage and ends.
    await runRoots(Effect.zipRight(Effect.yieldNow(), Effect.sync(garbage)), fibers)
    await nextTurn()
    for (let i = 0; i < 3; i++) collectGarbage({ type: "minor" })
    // Kept, it would be about 100 × 94 KiB (effect as published: 15 MB); a little of what ran
    // meanwhile may be promoted (up to 1 MB seen in a full run with a second suite beside it).
    expect(oldSpaceUsed() - before).toBeLessThan(fibers * garbageBytes / 4)
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
