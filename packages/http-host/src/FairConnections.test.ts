import { request } from "node:http"
import { connect, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../testing/progress.js"
import { addressCap, addressKey, defaultConnectionLimits } from "./ConnectionLimits.js"
import { startTestService, type TestService } from "./testService.js"

// The host listens on 127.0.0.1; on Linux the whole of 127/8 is loopback, so a client may connect
// from 127.0.0.2 (the greedy one) or 127.0.0.3 (everyone else) and the host sees two addresses.
const greedy = "127.0.0.2"
const other = "127.0.0.3"

// The default caps (1,000 in all, 100 an address); a first-byte timeout short enough to watch, and
// a headers timeout so long that only the first-byte timeout can close the idle ones in this test.
const fair = { ...defaultConnectionLimits, firstByteTimeoutMs: 2_000, headersTimeoutMs: 120_000, requestTimeoutMs: 120_000 }
// A per-address cap above the global one: only the reserve (4 of 40) keeps room for other addresses.
const reserved = { ...fair, maxConnections: 40, maxConnectionsPerAddress: 1_000 }
let service: TestService
let small: TestService

beforeAll(async () => {
  service = await startTestService("fair_connections", { connections: fair })
  small = await startTestService("fair_connections_reserve", { connections: reserved })
})
afterAll(async () => {
  await service?.close()
  await small?.close()
})

interface Idle {
  readonly socket: Socket
  readonly closed: () => boolean
  readonly received: () => number
}

/** A connection from `localAddress` that sends nothing. */
const idle = (url: string, localAddress: string): Promise<Idle> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url)
    let received = 0
    let closed = false
    const socket = connect({ host: hostname, port: Number(port), localAddress })
    socket.on("data", (chunk: Buffer) => (received += chunk.length))
    socket.on("close", () => (closed = true))
    socket.on("error", (error) => (closed ? undefined : reject(error)))
    socket.on("connect", () => resolve({ socket, closed: () => closed, received: () => received }))
  })

/** A GET on a new connection from `localAddress`: the status, or the error's code when the connection failed. */
const get = (url: string, path: string, localAddress: string): Promise<number | string> =>
  new Promise((resolve) => {
    const req = request(`${url}${path}`, { localAddress, agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", (error: Error & { code?: string }) => resolve(error.code ?? error.message))
    req.end()
  })

/** Waits until `done` holds (a liveness bound only: testing/progress.ts); fails naming it. */
const until = (done: () => boolean) => eventually(done, (held) => held, String(done))

describe("one address cannot take every connection", () => {
  it("serves another address, healthz, readyz and an API read, while one address holds 1,000 idle connections, and closes the idle ones after the first-byte timeout", async () => {
    const url = service.host.url
    const held = await Promise.all(Array.from({ length: 1_000 }, () => idle(url, greedy)))
    const open = () => held.filter(({ closed }) => !closed())
    // Those over the address's cap are closed on arrival, before a byte and without an answer.
    const capped = await until(() => open().length <= addressCap(fair))
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => get(url, "/api/healthz", other)),
      get(url, "/api/readyz", other),
      get(url, "/api/v1/publications", other)
    ])
    expect(answers).toEqual([200, 200, 200, 200, 200, 200, 200])
    expect(capped).toBe(true)
    expect(held.filter(({ closed }) => closed()).every(({ received }) => received() === 0)).toBe(true)

    // The rest sent nothing: closed by the first-byte timeout, silently (the headers timeout, two
    // minutes away, would have answered 408).
    expect(await until(() => open().length === 0)).toBe(true)
    expect(held.every(({ received }) => received() === 0)).toBe(true)
    // The address's slots are free again.
    expect(await get(url, "/api/healthz", greedy)).toBe(200)
  })

  it("keeps a reserve of the global cap that one address never takes, even when its own cap is higher", async () => {
    const url = small.host.url
    const held = await Promise.all(Array.from({ length: reserved.maxConnections }, () => idle(url, greedy)))
    const capped = await until(() => held.filter(({ closed }) => !closed()).length <= addressCap(reserved))
    // One at a time: the reserve is shared with whatever else is connected (readiness polling's kept-alive connection).
    expect(await get(url, "/api/healthz", other)).toBe(200)
    expect(await get(url, "/api/readyz", other)).toBe(200)
    expect(capped).toBe(true)
    expect(addressCap(reserved)).toBe(36)
    for (const { socket } of held) socket.destroy()
  })

  it("counts an IPv4-mapped peer as its IPv4 address and an IPv6 peer by its /64", () => {
    expect(addressKey("::ffff:203.0.113.9")).toBe("203.0.113.9")
    expect(addressKey("203.0.113.9")).toBe("203.0.113.9")
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64")
    expect(addressKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64")
    expect(addressKey("2001:db8::7")).toBe("2001:db8:0:0::/64")
    expect(addressKey("::1")).toBe("0:0:0:0::/64")
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(addressKey(undefined)).toBeUndefined()
  })
})
