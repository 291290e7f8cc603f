import { Either, Option } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fetchOnceMore, makeServerApi, type Refusal, unlessRefused } from "./api.js"

// A server that drops the first connection of each request without answering (as a host closing a
// kept-alive connection the moment a call goes out), then answers.
let server: Server
let url: string
const seen: Array<string> = []
// A service that fails every read: 500 with the API's envelope, 502 with no body of the API, or no answer at all.
let failing: Server
let failingUrl: string
const received: Array<string> = []
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
  failing = createServer((req, res) => {
    received.push(`${req.method} ${req.url} ${req.headers.cookie ?? ""}`)
    if (req.url?.startsWith("/api/v1/learning/teaching/") === true) {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "internal_error", message: "Internal error" } }))
    } else if (req.url?.endsWith("/review-workspace") === true) {
      // A submission whose uuid ends in 4 is refused (404), in 3 the service is unavailable (503).
      const refused = req.url.includes("4/review-workspace")
      res.writeHead(refused ? 404 : 503, { "content-type": "application/json" }).end(JSON.stringify({
        error: refused ? { code: "not_found", message: "Not found" } : { code: "unavailable", message: "The service is temporarily unavailable" }
      }))
    } else if (req.url?.startsWith("/api/v1/publications") === true) {
      res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>")
    } else {
      req.socket.destroy()
    }
  })
  await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve))
  failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`
})
afterAll(() => Promise.all([server, failing].map((s) => new Promise<void>((resolve) => s.close(() => resolve())))))

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

describe("a page's failed read", () => {
  const cookie = "__Host-birzha_session=a-session-token-that-must-stay-out-of-logs"
  const course = "0b6f3a1e-6a43-4c1f-9a57-3c1d2e4f5a6b"
  const refusalOf = async <A>(result: Promise<Either.Either<A, Refusal>>): Promise<Refusal> => {
    const answered = await result
    if (Either.isRight(answered)) throw new Error("the read did not fail")
    return answered.left
  }

  it("names the operation, the API's error and its message for a 5xx answer, and no cookie", async () => {
    const api = makeServerApi(failingUrl)
    const refusal = await refusalOf(api.run((client) => client["learning.teaching.get"]({ path: { course } }), cookie))
    expect(refusal).toEqual({
      status: 503,
      failure: { operation: "learning.teaching.get", kind: "InternalError 500", message: "Internal error" }
    })
    // The cookie went with the call, and stays out of what is logged.
    expect(received).toContain(`GET /api/v1/learning/teaching/courses/${course} ${cookie}`)
    expect(JSON.stringify(refusal)).not.toContain("a-session-token")
  })

  it("names an answer the client could not read as the API's by its status, without the query", async () => {
    const api = makeServerApi(failingUrl)
    const refusal = await refusalOf(api.run((client) => client.listPublications({ urlParams: { q: "secret words", limit: 5 } }), cookie))
    expect(refusal.status).toBe(503)
    expect(refusal.failure?.operation).toBe("listPublications")
    expect(refusal.failure?.kind).toBe("answer")
    expect(refusal.failure?.message).toMatch(/^502 /)
    expect(JSON.stringify(refusal)).not.toMatch(/secret|a-session-token/)
  })

  it("is none when the service refuses a read the page may lack (404), and fails the page when the service is unavailable (503)", async () => {
    const api = makeServerApi(failingUrl)
    const workspace = (submission: string) =>
      api.run((client) => unlessRefused(client["learning.reviews.workspace"]({ path: { submission } })), cookie)
    expect(await workspace("0b6f3a1e-6a43-4c1f-9a57-3c1d2e4f5a64")).toEqual(Either.right(Option.none()))
    const refusal = await refusalOf(workspace("0b6f3a1e-6a43-4c1f-9a57-3c1d2e4f5a63"))
    expect(refusal).toEqual({
      status: 503,
      failure: { operation: "learning.reviews.workspace", kind: "ServiceUnavailable 503", message: "The service is temporarily unavailable" }
    })
  })

  it("names a call that got no answer (tried twice, as a GET is) as a transport failure with its cause", async () => {
    const api = makeServerApi(failingUrl)
    const refusal = await refusalOf(api.run((client) => client.getMyCapabilities(), cookie))
    expect(refusal).toEqual({
      status: 503,
      failure: { operation: "getMyCapabilities", kind: "transport", message: expect.stringMatching(/^Transport: fetch failed: /) }
    })
    expect(JSON.stringify(refusal)).not.toContain("a-session-token")
  })
})
