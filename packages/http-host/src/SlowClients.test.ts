import { ConfigProvider, Effect, Either } from "effect"
import { connect, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describeConfigError } from "@birzha/infrastructure"
import { eventually } from "../../../testing/progress.js"
import { ConnectionLimitsConfig, defaultConnectionLimits, parserRefusal } from "./ConnectionLimits.js"
import { startTestService, type TestService } from "./testService.js"

// Short limits, so a slow client's fate shows within a test: the defaults are 10 s, 30 s, 5 s, 1000.
// The first-byte timeout and the per-address cap stay out of the way here (FairConnections.test.ts).
const limits = {
  headersTimeoutMs: 600,
  requestTimeoutMs: 1_200,
  keepAliveTimeoutMs: 300,
  maxConnections: 40,
  maxConnectionsPerAddress: 1_000,
  firstByteTimeoutMs: 60_000
}
let service: TestService

beforeAll(async () => {
  service = await startTestService("slow_clients", { connections: limits })
})
afterAll(async () => {
  await service?.close()
})

interface Exchange {
  readonly received: string
  /** From connecting until the server closed the socket. */
  readonly closedAfterMs: number
}

/** Connects and sends `parts` one by one, `gapMs` apart, until the server closes (or `giveUpMs` passes). */
const trickle = (parts: ReadonlyArray<string>, gapMs: number, giveUpMs = 10_000) =>
  new Promise<Exchange>((resolve) => {
    const url = new URL(service.host.url)
    const started = Date.now()
    let received = ""
    const socket = connect(Number(url.port), url.hostname, async () => {
      for (const part of parts) {
        if (socket.destroyed || socket.writableEnded) return
        socket.write(part)
        await new Promise((wait) => setTimeout(wait, gapMs))
      }
    })
    const giveUp = setTimeout(() => socket.destroy(), giveUpMs)
    socket.on("data", (chunk) => (received += chunk.toString("utf8")))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(giveUp)
      resolve({ received, closedAfterMs: Date.now() - started })
    })
  })

/** Timers and the event loop run late on a loaded machine: an upper bound gets this much slack. */
const slackMs = 5_000

const expectTimedOut = (exchange: Exchange, withinMs: number) => {
  expect(exchange.closedAfterMs).toBeLessThan(withinMs)
  expect(exchange.received).toMatch(/^HTTP\/1\.1 408 /)
  expect(JSON.parse(exchange.received.slice(exchange.received.indexOf("\r\n\r\n") + 4)).error.code).toBe("request_timeout")
}

// Node checks its timeouts on an interval (a quarter of the headers timeout here), so each bound allows for one more.
describe("slow and idle clients", () => {
  it("closes a socket that sends nothing, with a 408 envelope, after the headers timeout", async () => {
    expectTimedOut(await trickle([], 0), limits.headersTimeoutMs + slackMs)
  })

  it("closes a trickled request line and trickled headers after the headers timeout", async () => {
    expectTimedOut(await trickle("GET /api/healthz HTTP/1.1\r\n".split(""), 100), limits.headersTimeoutMs + slackMs)
    expectTimedOut(await trickle(["GET /api/healthz HTTP/1.1\r\n", ..."Host: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".split("")], 100), limits.headersTimeoutMs + slackMs)
  })

  it("closes a trickled body after the request timeout", async () => {
    const head = "POST /api/v1/commands/tasks.save HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n"
    const exchange = await trickle([head, ...Array.from({ length: 100 }, () => "{\"a\":1}")], 100)
    expect(exchange.closedAfterMs).toBeLessThan(limits.requestTimeoutMs + slackMs)
    expect(exchange.closedAfterMs).toBeGreaterThanOrEqual(limits.requestTimeoutMs - 100)
  })

  it("closes a kept-alive connection that sends no further request", async () => {
    const exchange = await trickle(["GET /api/healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"], 0)
    expect(exchange.received).toMatch(/^HTTP\/1\.1 200 /)
    // Node adds a second to the advertised keep-alive time before it closes.
    expect(exchange.closedAfterMs).toBeLessThan(limits.keepAliveTimeoutMs + 1_000 + slackMs)
  })

  it("holds at most the configured number of connections; more are closed on arrival", async () => {
    const url = new URL(service.host.url)
    const open = (): Promise<{ socket: Socket; closed: () => boolean; received: () => number }> =>
      new Promise((resolve) => {
        let received = 0
        let closed = false
        const socket = connect(Number(url.port), url.hostname)
        socket.on("error", () => undefined)
        socket.on("data", (chunk: Buffer) => (received += chunk.length))
        socket.on("close", () => (closed = true))
        socket.on("connect", () => resolve({ socket, closed: () => closed, received: () => received }))
      })
    const extra = 5
    // All at once, well within the headers timeout that would close the held ones.
    const held = await Promise.all(Array.from({ length: limits.maxConnections + extra }, open))
    // The ones past the cap are dropped on arrival without a word (a timeout would answer 408 first).
    await eventually(() => held.filter(({ closed }) => closed()).length, (closed) => closed >= extra, "the connections past the cap are closed")
    const dropped = held.filter(({ closed }) => closed())
    expect(dropped.every(({ received }) => received() === 0)).toBe(true)
    expect(held.length - dropped.length).toBeLessThanOrEqual(limits.maxConnections)
    for (const { socket } of held) socket.destroy()
    await new Promise((wait) => setTimeout(wait, 100))
    expect((await fetch(`${service.host.url}/api/healthz`)).status).toBe(200)
  })

  it("reads its limits from the environment, with defaults, and refuses a bad value naming the variable", async () => {
    const read = (env: Record<string, string>) =>
      Effect.runPromise(Effect.either(Effect.withConfigProvider(ConnectionLimitsConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))
    expect(Either.getOrUndefined(await read({}))).toEqual(defaultConnectionLimits)
    const set = await read({
      BIRZHA_HEADERS_TIMEOUT_MS: "2000",
      BIRZHA_REQUEST_TIMEOUT_MS: "5000",
      BIRZHA_KEEP_ALIVE_TIMEOUT_MS: "1000",
      BIRZHA_MAX_CONNECTIONS: "10",
      BIRZHA_MAX_CONNECTIONS_PER_ADDRESS: "3",
      BIRZHA_FIRST_BYTE_TIMEOUT_MS: "700"
    })
    expect(Either.getOrUndefined(set)).toEqual({
      headersTimeoutMs: 2000,
      requestTimeoutMs: 5000,
      keepAliveTimeoutMs: 1000,
      maxConnections: 10,
      maxConnectionsPerAddress: 3,
      firstByteTimeoutMs: 700
    })
    // Behind a proxy every connection has the proxy's address: unset, its cap is the global one.
    expect(Either.getOrUndefined(await read({ BIRZHA_TRUST_PROXY: "1", BIRZHA_MAX_CONNECTIONS: "500" }))?.maxConnectionsPerAddress).toBe(500)
    expect(Either.getOrUndefined(await read({ BIRZHA_TRUST_PROXY: "1", BIRZHA_MAX_CONNECTIONS_PER_ADDRESS: "7" }))?.maxConnectionsPerAddress).toBe(7)
    for (
      const [name, value] of [
        ["BIRZHA_MAX_CONNECTIONS", "0"],
        ["BIRZHA_HEADERS_TIMEOUT_MS", "soon"],
        ["BIRZHA_REQUEST_TIMEOUT_MS", "-5"],
        ["BIRZHA_MAX_CONNECTIONS_PER_ADDRESS", "0"],
        ["BIRZHA_MAX_CONNECTIONS_PER_ADDRESS", "many"],
        ["BIRZHA_FIRST_BYTE_TIMEOUT_MS", "0"],
        ["BIRZHA_TRUST_PROXY", "maybe"]
      ] as const
    ) {
      const refused = await read({ [name]: value })
      // Named once, at the start of the line (a validation on the bare integer config names it twice).
      expect(Either.isLeft(refused) && describeConfigError(refused.left), name).toMatch(new RegExp(`^${name}: `))
    }
  })
})

describe("paths that name nothing", () => {
  it("answers an undecodable or 10,000-character path parameter with a 404 envelope for every method, pages' routes included", async () => {
    for (const path of ["/approvals/%FF", `/approvals/${"a".repeat(10_000)}`, "/webhooks/%FF/approve", `/api/v1/publications/${"a".repeat(10_000)}`, "/api/v1/files/%C3%28/content"]) {
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const response = await fetch(`${service.host.url}${path}`, { method })
        expect(response.status, `${method} ${path.slice(0, 40)}`).toBe(404)
        expect((await response.json()).error.code).toBe("not_found")
      }
    }
  })
})

describe("requests node's parser refuses", () => {
  const refusal = async (request: string) => {
    const { received } = await trickle([request], 0)
    return { status: received.slice(0, 12), error: JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4)).error }
  }
  const post = "POST /api/v1/commands/tasks.save HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"

  it("answers Content-Length together with Transfer-Encoding with a 400 naming both headers, in either order", async () => {
    for (const headers of ["Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n"]) {
      const { error, status } = await refusal(`${post}${headers}\r\n{}`)
      expect(status).toBe("HTTP/1.1 400")
      expect(error.code).toBe("invalid_request")
      expect(error.message).toBe("The request has both Content-Length and Transfer-Encoding; send one or the other")
    }
  })

  it("names the fault for each kind of malformed request, and the parser's code for one it does not know", async () => {
    const faults: ReadonlyArray<readonly [string, RegExp]> = [
      ["GE(T /api/healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", /method/],
      ["GET /api/\x01healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", /URL/],
      ["GET /api/healthz HTTP/9.1\r\nHost: localhost\r\n\r\n", /HTTP version/],
      ["GET /api/healthz HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n", /header name or value/],
      [`${post}Content-Length: two\r\n\r\n`, /Content-Length header is not a decimal number/],
      [`${post}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, /Content-Length is sent more than once/],
      [`${post}Transfer-Encoding: gzip\r\n\r\n`, /Transfer-Encoding is not valid: its last coding must be chunked/],
      ["GET /api/healthz XTTP/1.1\r\nHost: localhost\r\n\r\n", /HTTP\/ and the version/],
      [`${post}Transfer-Encoding: chunked\r\n\r\nzz\r\n`, /chunk size/]
    ]
    for (const [request, message] of faults) {
      const { error, status } = await refusal(request)
      expect(status, JSON.stringify(request)).toBe("HTTP/1.1 400")
      expect(error.message, JSON.stringify(request)).toMatch(message)
    }
    expect(parserRefusal("HPE_SOMETHING_NEW").message).toBe("The request is not valid HTTP/1.1; the parser refused it (HPE_SOMETHING_NEW)")
    expect(parserRefusal(undefined).message).toBe("The request is not valid HTTP/1.1; the parser refused it")
  })
})
