import { createServer, type Server } from "node:http"
import { connect, type Socket } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { eventually } from "../../../testing/progress.js"
import { applyConnectionLimits, type ConnectionLimits, defaultConnectionLimits, serverOptions } from "./ConnectionLimits.js"

// A listener set up as HttpHost.ts sets up the host's (the same options and limits), answering
// every request with 200 "ok": what is tested is the connection, not the route.
const servers: Array<Server> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))))
})

const listen = async (limits: ConnectionLimits) => {
  const server = createServer(serverOptions(limits), (_req, res) => res.end("ok"))
  applyConnectionLimits(server, limits)
  let accepted = 0
  server.on("connection", () => accepted++)
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return { port: address.port, accepted: () => accepted }
}

/** A raw connection: what it has received, and whether the server closed it. */
const client = (port: number) =>
  new Promise<{ readonly socket: Socket; readonly received: () => string; readonly closed: () => boolean }>((resolve, reject) => {
    let received = ""
    let closed = false
    const socket = connect({ host: "127.0.0.1", port })
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => (received += chunk))
    socket.on("close", () => (closed = true))
    socket.on("error", () => undefined)
    socket.once("connect", () => resolve({ socket, received: () => received, closed: () => closed }))
    socket.once("error", reject)
  })

const request = "GET /api/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
const answers = (text: string) => text.split("HTTP/1.1 200 OK").length - 1

/** Holds the event loop, as a long synchronous task or a starved process does. */
const holdTheLoop = (ms: number) => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    // Busy: no timer, no socket is served meanwhile.
  }
}

/** Waits until `done` holds (a liveness bound only: testing/progress.ts); fails naming it. */
const until = (done: () => boolean) => eventually(done, (held) => held, String(done), { everyMs: 10 })

describe("a connection whose request waits while the event loop is held up", () => {
  it("is answered, not reset, when the held-up time outlasts the keep-alive timeout", async () => {
    const { port } = await listen({ ...defaultConnectionLimits, keepAliveTimeoutMs: 200 })
    const { closed, received, socket } = await client(port)
    socket.write(request)
    expect(await until(() => answers(received()) === 1)).toBe(true)
    // The second request is in the server's socket before its keep-alive timer runs out, but the
    // loop is held until after (node waits a second beyond the announced timeout): the expired
    // timer runs before the request is read.
    socket.write(request)
    holdTheLoop(1_500)
    expect(await until(() => answers(received()) === 2 || closed())).toBe(true)
    expect(answers(received())).toBe(2)
    expect(closed()).toBe(false)
    socket.destroy()
  })

  it("is answered, not reset, when the held-up time outlasts the first-byte timeout", async () => {
    const { accepted, port } = await listen({ ...defaultConnectionLimits, firstByteTimeoutMs: 200 })
    const { closed, received, socket } = await client(port)
    expect(await until(() => accepted() === 1)).toBe(true)
    socket.write(request)
    holdTheLoop(600)
    expect(await until(() => answers(received()) === 1 || closed())).toBe(true)
    expect(answers(received())).toBe(1)
    socket.destroy()
  })

  it("still closes a kept-alive connection that sends nothing more, and one that never sends a byte", async () => {
    const { accepted, port } = await listen({ ...defaultConnectionLimits, keepAliveTimeoutMs: 200, firstByteTimeoutMs: 200 })
    const kept = await client(port)
    kept.socket.write(request)
    expect(await until(() => answers(kept.received()) === 1)).toBe(true)
    const silent = await client(port)
    expect(await until(() => accepted() === 2)).toBe(true)
    expect(await until(() => kept.closed() && silent.closed())).toBe(true)
    expect(silent.received()).toBe("")
  })
})
