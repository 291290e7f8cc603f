import { describe, expect, it } from "vitest"
import { eventually, untilDone } from "./progress.js"

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

describe("waiting for a condition", () => {
  it("returns the value that met the condition, read again until it does", async () => {
    let reads = 0
    expect(await eventually(() => ++reads, (n) => n === 4, "the fourth read", { everyMs: 1 })).toBe(4)
    expect(reads).toBe(4)
  })

  it("fails after its bound, naming what it waited for and the last value read", async () => {
    await expect(eventually(async () => ({ state: "pending" }), (row) => row.state === "active", () => "the endpoint active", { timeoutMs: 30, everyMs: 5 }))
      .rejects.toThrow('the endpoint active: not within 0.03 s (last read: {"state":"pending"})')
  })
})
