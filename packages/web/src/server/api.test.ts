import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fetchOnceMore } from "./api.js"

// A server that drops the first connection of each request without answering (as a host closing a
// kept-alive connection the moment a call goes out), then answers.
let server: Server
let url: string
const seen: Array<string> = []
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    if (seen.filter((line) => line === `${req.method} ${req.url}`).length === 1) {
      req.socket.destroy()
      return
    }
    res.writeHead(200, { "content-type": "text/plain", connection: "close" }).end("answered")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe("the pages' server calls", () => {
  it("send a GET that failed before any answer once more, and answer with the second attempt", async () => {
    const response = await fetchOnceMore(`${url}/read`)
    expect([response.status, await response.text()]).toEqual([200, "answered"])
    expect(seen.filter((line) => line === "GET /read")).toHaveLength(2)
  })

  it("never send a POST twice: its failure is the caller's", async () => {
    await expect(fetchOnceMore(`${url}/write`, { method: "POST", body: "{}" })).rejects.toThrow()
    expect(seen.filter((line) => line === "POST /write")).toHaveLength(1)
  })
})
