import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { makeAccessLog } from "./AccessLog.js"

afterEach(() => {
  vi.restoreAllMocks()
})

const written = async (write: (log: Effect.Effect.Success<typeof makeAccessLog>) => void) => {
  const chunks: Array<string> = []
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk))
    return true
  })
  write(Effect.runSync(makeAccessLog))
  await new Promise((resolve) => setImmediate(resolve))
  return chunks.join("")
}

describe("access log", () => {
  it("writes one JSON line per answer, as JSON.stringify of {t, method, url, status, ms, op, requestId} would", async () => {
    const started = performance.now()
    const text = await written((log) => {
      log.write("GET", "/api/v1/publications?q=\"ёлка\"\\x", 200, started, "listPublications", "req-1")
      log.write("POST", "/nowhere", 404, started, undefined, undefined)
    })
    const lines = text.split("\n")
    expect(lines).toHaveLength(3)
    expect(lines[2]).toBe("")
    const first = JSON.parse(lines[0]!)
    expect(Object.keys(first)).toEqual(["t", "method", "url", "status", "ms", "op", "requestId"])
    expect(first).toMatchObject({ method: "GET", url: "/api/v1/publications?q=\"ёлка\"\\x", status: 200, op: "listPublications", requestId: "req-1" })
    expect(lines[0]).toBe(JSON.stringify(first))
    expect(new Date(first.t).toISOString()).toBe(first.t)
    expect(typeof first.ms).toBe("number")
    const second = JSON.parse(lines[1]!)
    expect(Object.keys(second)).toEqual(["t", "method", "url", "status", "ms"])
    expect(lines[1]).toBe(JSON.stringify(second))
  })

  it("cuts a long URL short, so a line stays a line", async () => {
    const text = await written((log) => log.write("GET", "/x?" + "a".repeat(2000), 414, performance.now(), undefined, undefined))
    const line = JSON.parse(text.trim())
    expect(line.url).toHaveLength(513)
    expect(line.url.endsWith("…")).toBe(true)
  })
})
