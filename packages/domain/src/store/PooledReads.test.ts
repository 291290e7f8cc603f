import { Effect } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"

setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void

/** A turn of the event loop: a `WeakRef`'s target is kept until the turn that made it has ended. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe("Effect.async, as the pooled reads use it", () => {
  // `pooledReadsOf` hands its `resume` to node-postgres's callback; whatever keeps that callback
  // after the answer kept, with effect 3.22.4, the resumed fiber and all it reached, until V8's next
  // full collection. patches/effect@3.22.4.patch drops the reference once used (docs/decisions.md).
  it("leaves a finished fiber collectable while its register callback still holds resume", async () => {
    const kept: Array<unknown> = []
    let fiber: WeakRef<object> | undefined
    const read = Effect.async<number>((resume) => {
      kept.push(resume)
      setImmediate(() => resume(Effect.succeed(1)))
    })
    const value = await new Promise<number>((done) => {
      const running = Effect.runFork(read)
      fiber = new WeakRef(running)
      running.addObserver((exit) => done(exit._tag === "Success" ? exit.value : -1))
    })
    await nextTurn()
    collectGarbage()
    await nextTurn()
    collectGarbage()
    expect([value, kept.length]).toEqual([1, 1])
    expect(fiber?.deref()).toBeUndefined()
  })

  it("keeps nothing of a second resume's effect while the register callback still holds resume", async () => {
    const kept: Array<unknown> = []
    let second: WeakRef<object> | undefined
    const read = Effect.async<object>((resume) => {
      kept.push(resume)
      setImmediate(() => {
        resume(Effect.succeed({ first: true }))
        const late = { second: true }
        second = new WeakRef(late)
        resume(Effect.succeed(late))
      })
    })
    expect(await Effect.runPromise(read)).toEqual({ first: true })
    await nextTurn()
    collectGarbage()
    await nextTurn()
    collectGarbage()
    expect(kept.length).toBe(1)
    expect(second?.deref()).toBeUndefined()
  })

  it("answers the first resume, called inside register or later, and ignores a second", async () => {
    expect(await Effect.runPromise(Effect.async<string>((resume) => resume(Effect.succeed("at once"))))).toBe("at once")
    expect(await Effect.runPromise(Effect.async<string>((resume) => {
      resume(Effect.succeed("first"))
      resume(Effect.succeed("second"))
    }))).toBe("first")
    expect(await Effect.runPromise(Effect.async<string>((resume) => {
      setImmediate(() => {
        resume(Effect.succeed("first"))
        resume(Effect.succeed("second"))
      })
    }))).toBe("first")
  })
})
