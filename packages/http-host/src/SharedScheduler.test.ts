import { Effect, Fiber, FiberRef } from "effect"
import { describe, expect, it } from "vitest"
import { sharedScheduler } from "./SharedScheduler.js"

/** Runs `effect` as a root fiber whose tasks go to `scheduler`, as a request's fiber does (CompiledApi.ts). */
const onScheduler = <A>(scheduler: ReturnType<typeof sharedScheduler>, effect: Effect.Effect<A>) =>
  Effect.runFork(Effect.locally(effect, FiberRef.currentScheduler, scheduler))

describe("the request fibers' shared scheduler", () => {
  it("takes turns between fibers that yield, in the order they yielded", async () => {
    const scheduler = sharedScheduler()
    const steps: Array<string> = []
    const stepping = (name: string) =>
      Effect.forEach([0, 1, 2], (i) => Effect.zipRight(Effect.sync(() => steps.push(`${name}${i}`)), Effect.yieldNow()), { discard: true })
    const fibers = [onScheduler(scheduler, stepping("a")), onScheduler(scheduler, stepping("b")), onScheduler(scheduler, stepping("c"))]
    await Effect.runPromise(Fiber.joinAll(fibers))
    expect(steps).toEqual(["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"])
  })

  it("lets a timer run while a fiber never stops yielding: after 2,048 drains in a row, a timer's turn", async () => {
    const scheduler = sharedScheduler()
    let yields = 0
    let yieldsWhenTheTimerRan: number | undefined
    setTimeout(() => (yieldsWhenTheTimerRan = yields), 0)
    // Five times the drains before a timer's turn: all in microtasks, the timer would run only after them.
    const total = 5 * 2048
    await Effect.runPromise(Fiber.join(onScheduler(scheduler, Effect.repeatN(Effect.zipRight(Effect.sync(() => yields++), Effect.yieldNow()), total - 1))))
    expect(yields).toBe(total)
    // Undefined (the timer never ran while the fiber yielded) fails as well: not a number.
    expect(yieldsWhenTheTimerRan, "yields before the timer ran").toBeLessThan(total)
  })
})
