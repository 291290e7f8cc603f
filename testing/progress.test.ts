import { describe, expect, it } from "vitest"
import { untilDone } from "./progress.js"

describe("waiting on progress", () => {
  it("waits as long as the work keeps moving, however long that is", async () => {
    let count = 0
    const started = Date.now()
    // Each read moves the count by one: 30 reads 10 ms apart is far past the 50 ms stall bound.
    const state = await untilDone(async () => count++, (n) => n >= 30, (n) => n, "thirty reads", { stallMs: 50, everyMs: 10 })
    expect(state).toBe(30)
    expect(Date.now() - started).toBeGreaterThan(50)
  })

  it("fails once the work stands still for the stall bound, naming what it waited for and where it stood", async () => {
    let count = 0
    const read = async () => Math.min(count++, 3)
    await expect(untilDone(read, (n) => n >= 10, (n) => n, (n) => `ten (saw ${n})`, { stallMs: 60, everyMs: 10 }))
      .rejects.toThrow("no progress for 0.06 s while waiting for ten (saw 3) (at 3)")
  })

  it("answers at once when the work is already done", async () => {
    expect(await untilDone(async () => "done", (s) => s === "done", (s) => s, "nothing", { stallMs: 0 })).toBe("done")
  })
})
