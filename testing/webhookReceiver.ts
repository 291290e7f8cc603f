import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One request a receiver got: the raw body exactly as sent, for signature checks. */
export interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/** How the receiver answers a request; the default is 200 "ok". Not answering at all is allowed (a hanging receiver). */
export type Answer = (request: Received, response: ServerResponse) => void

/**
 * A real HTTP webhook receiver on 127.0.0.1 (the service reaches it with
 * `BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK=1`). It keeps every request; `answer` can be swapped at any time;
 * `stop` and `start` take it down and bring it back on the same port.
 */
export const startReceiver = async (port = 0) => {
  const received: Array<Received> = []
  let answer: Answer = (_request, response) => response.end("ok")
  let server: Server | undefined
  let boundPort = port
  const waiters = new Set<() => void>()

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const entry = { headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() }
          received.push(entry)
          for (const wake of waiters) wake()
          answer(entry, response)
        })
      })
      s.keepAliveTimeout = 5_000
      s.once("error", reject)
      s.listen(boundPort, "127.0.0.1", () => {
        boundPort = (s.address() as AddressInfo).port
        server = s
        resolve()
      })
    })

  await listen()

  return {
    get url() {
      return `http://127.0.0.1:${boundPort}/hook`
    },
    received,
    /** The webhook-ids received (one per request, so duplicates show). */
    ids: () => received.map((r) => String(r.headers["webhook-id"])),
    bodies: <A = Record<string, unknown>>() => received.map((r) => JSON.parse(r.body) as A),
    answerWith: (next: Answer) => {
      answer = next
    },
    /** Waits until `check` holds for what was received, or fails after `timeoutMs`. */
    until: async (check: (received: ReadonlyArray<Received>) => boolean, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs
      while (!check(received)) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} requests so far)`)
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake)
            clearTimeout(timer)
            resolve()
          }
          const timer = setTimeout(wake, Math.min(left, 100))
          waiters.add(wake)
        })
      }
    },
    /** Takes the receiver down: the port refuses connections until `start`. */
    stop: () =>
      new Promise<void>((resolve) => {
        const s = server
        server = undefined
        if (s === undefined) return resolve()
        s.closeAllConnections()
        s.close(() => resolve())
      }),
    start: () => listen()
  }
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>
