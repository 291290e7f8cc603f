import { Duration, Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { startReceiver } from "../../../../testing/webhookReceiver.js"
import { makeAddressGuard, type Resolver } from "./AddressGuard.js"
import { maxAttempts, nextRetryDelay, retryAfterMillis, retryDelays } from "./RetrySchedule.js"
import { classifyAttempt } from "./WebhookDispatcher.js"
import { makeWebhookSender } from "./WebhookSender.js"

const names: Record<string, ReadonlyArray<string>> = {
  "internal.example": ["10.0.0.5"],
  "metadata.example": ["169.254.169.254"],
  "mixed.example": ["93.184.216.34", "192.168.0.10"],
  "v6private.example": ["fd00::1"],
  "cgnat.example": ["100.64.1.1"],
  "loop.example": ["127.0.0.1"],
  "public.example": ["93.184.216.34"]
}
const resolver: Resolver = async (host) => {
  const found = names[host]
  if (found === undefined) throw new Error(`getaddrinfo ENOTFOUND ${host}`)
  return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
}

const receivers: Array<Awaited<ReturnType<typeof startReceiver>>> = []
afterAll(async () => {
  for (const r of receivers) await r.stop()
})

describe("the SSRF guard at send time", () => {
  it("refuses host names that resolve to private, link-local, unique-local, CGNAT or loopback addresses, even one of several", async () => {
    const guard = makeAddressGuard({ allowLoopback: false, resolver })
    for (const host of ["internal.example", "metadata.example", "mixed.example", "v6private.example", "cgnat.example", "loop.example", "nowhere.example"]) {
      expect((await guard.destinationOf(host, Date.now()))._tag, host).toBe("Refused")
    }
    expect(await guard.destinationOf("public.example", Date.now())).toEqual({ _tag: "Allowed", address: "93.184.216.34", family: 4 })
    expect((await guard.destinationOf("[::1]", Date.now()))._tag).toBe("Refused")
  })

  it("lets loopback through only with BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK, and nothing else private", async () => {
    const guard = makeAddressGuard({ allowLoopback: true, resolver })
    expect((await guard.destinationOf("loop.example", Date.now()))._tag).toBe("Allowed")
    expect((await guard.destinationOf("internal.example", Date.now()))._tag).toBe("Refused")
  })

  it("records a refused attempt without connecting anywhere", async () => {
    const guard = makeAddressGuard({ allowLoopback: false, resolver })
    const sender = makeWebhookSender({ guard, allowHttpLoopback: false, timeoutMs: 2_000, socketsPerDestination: 4 })
    const result = await Effect.runPromise(sender.send({ url: "https://internal.example/hook", body: "{}", headers: {} }))
    expect(result.statusCode).toBeUndefined()
    expect(result.error).toBe("refused by the SSRF guard: internal.example resolves to 10.0.0.5 is a private address")
    const http = await Effect.runPromise(sender.send({ url: "http://public.example/hook", body: "{}", headers: {} }))
    expect(http.error).toMatch(/^refused: url: must start with https:\/\//)
  })

  it("pins the connection to the checked address while the Host header stays the URL's", async () => {
    const r = await startReceiver()
    receivers.push(r)
    const port = new URL(r.url).port
    const pinnedTo = (address: string): Resolver => async () => [{ address, family: 4 }]
    const sender = makeWebhookSender({
      guard: makeAddressGuard({ allowLoopback: true, resolver: pinnedTo("127.0.0.1") }),
      allowHttpLoopback: true,
      timeoutMs: 2_000,
      socketsPerDestination: 4
    })
    const result = await Effect.runPromise(sender.send({ url: `http://localhost:${port}/hook`, body: "{\"a\":1}", headers: { "x-test": "1" } }))
    expect(result).toMatchObject({ statusCode: 200, address: "127.0.0.1" })
    expect(r.received.at(-1)!.headers.host).toBe(`localhost:${port}`)
    expect(r.received.at(-1)!.body).toBe("{\"a\":1}")
    // Resolved elsewhere (127.0.0.2, where nothing listens), the request goes there and nowhere else.
    const elsewhere = makeWebhookSender({
      guard: makeAddressGuard({ allowLoopback: true, resolver: pinnedTo("127.0.0.2") }),
      allowHttpLoopback: true,
      timeoutMs: 2_000,
      socketsPerDestination: 4
    })
    const before = r.received.length
    const refused = await Effect.runPromise(elsewhere.send({ url: `http://localhost:${port}/hook`, body: "{}", headers: {} }))
    expect(refused).toMatchObject({ address: "127.0.0.2" })
    expect(refused.error).toMatch(/ECONNREFUSED/)
    expect(r.received.length).toBe(before)
    await Effect.runPromise(sender.close)
    await Effect.runPromise(elsewhere.close)
  })

  it("keeps 1 KiB of the answer, and gives up after the timeout", async () => {
    const r = await startReceiver()
    receivers.push(r)
    const guard = makeAddressGuard({ allowLoopback: true })
    const sender = makeWebhookSender({ guard, allowHttpLoopback: true, timeoutMs: 500, socketsPerDestination: 4 })
    r.answerWith((_req, res) => {
      res.statusCode = 503
      res.end("x".repeat(200_000))
    })
    const big = await Effect.runPromise(sender.send({ url: r.url, body: "{}", headers: {} }))
    expect(big.statusCode).toBe(503)
    expect(big.excerpt).toBe("x".repeat(1024))
    r.answerWith(() => {})
    const started = Date.now()
    const hung = await Effect.runPromise(sender.send({ url: r.url, body: "{}", headers: {} }))
    expect(hung.error).toBe("no complete answer within 1 s")
    expect(Date.now() - started).toBeGreaterThanOrEqual(480)
    // The receiver never answers: without the timeout this would wait for the test's own.
    expect(Date.now() - started).toBeLessThan(10_000)
    await Effect.runPromise(sender.close)
  })
})

describe("the retry schedule", () => {
  it("is immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 15 h, 15 h, 15 h: 11 attempts over about three days", () => {
    expect(maxAttempts).toBe(11)
    const total = retryDelays.reduce((sum, d) => sum + Duration.toMillis(d), 0) / 3_600_000
    expect(total).toBeGreaterThan(72)
    expect(total).toBeLessThan(73)
    expect(nextRetryDelay(1, 0.5)).toBe(5_000)
    expect(nextRetryDelay(1, 0)).toBe(4_000)
    expect(nextRetryDelay(1, 0.999999)).toBe(6_000)
    expect(nextRetryDelay(10, 0.5)).toBe(15 * 3_600_000)
    expect(nextRetryDelay(11, 0.5)).toBeUndefined()
  })

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-05-01T12:00:00Z")
    expect(retryAfterMillis("120", now)).toBe(120_000)
    expect(retryAfterMillis("Fri, 01 May 2026 12:01:00 GMT", now)).toBe(60_000)
    expect(retryAfterMillis("soon", now)).toBeUndefined()
    expect(retryAfterMillis(undefined, now)).toBeUndefined()
  })

  it("classifies answers: 2xx done, 410 disables, 3xx and 5xx retried, tests once, Retry-After on 429/502/504 only", () => {
    const now = Date.now()
    const at = (status: number | undefined, extra: object = {}, kind: "event" | "test" = "event", attempts = 0) =>
      classifyAttempt(kind, attempts, { excerpt: "", durationMs: 1, ...(status === undefined ? {} : { statusCode: status }), ...extra }, now, 0.5)
    expect(at(204)).toEqual({ result: "succeeded" })
    expect(at(410)).toEqual({ result: "failed", disable: "gone" })
    expect(at(301)).toEqual({ result: "retry", retryAt: new Date(now + 5_000) })
    expect(at(undefined, { error: "ECONNREFUSED" })).toEqual({ result: "retry", retryAt: new Date(now + 5_000) })
    expect(at(500, {}, "test")).toEqual({ result: "failed" })
    expect(at(500, {}, "event", 10)).toEqual({ result: "failed" })
    for (const status of [429, 502, 504]) expect(at(status, { retryAfter: "600" })).toEqual({ result: "retry", retryAt: new Date(now + 600_000) })
    expect(at(503, { retryAfter: "600" })).toEqual({ result: "retry", retryAt: new Date(now + 5_000) })
    expect(at(429, { retryAfter: "1" })).toEqual({ result: "retry", retryAt: new Date(now + 5_000) })
    expect(at(429, { retryAfter: String(7 * 24 * 3600) })).toEqual({ result: "retry", retryAt: new Date(now + 24 * 3_600_000) })
  })
})
