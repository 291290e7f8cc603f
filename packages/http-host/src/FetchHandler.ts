import { IncomingMessage, ServerResponse } from "node:http"
import { Duplex } from "node:stream"

/** A web-standard handler: a `Request` in, its `Response` out (`Deno.serve`, `Bun.serve`, Hono, workers). */
export type FetchHandler = (request: Request) => Promise<Response>

/** Headers of one connection, not of the answer (RFC 9110 §7.6.1). */
const hopByHop = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"])

/**
 * Decodes `Transfer-Encoding: chunked` framing as bytes arrive: what the host writes when it sets
 * that header itself; otherwise the adapter asks Node for an unframed body.
 */
const chunkedDecoder = (emit: (bytes: Uint8Array) => void) => {
  let buffer: Buffer = Buffer.alloc(0)
  let remaining = -1
  return (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
    for (;;) {
      if (remaining < 0) {
        const end = buffer.indexOf("\r\n")
        if (end < 0) return
        remaining = Number.parseInt(buffer.subarray(0, end).toString("latin1"), 16)
        buffer = buffer.subarray(end + 2)
        if (!Number.isFinite(remaining) || remaining === 0) {
          remaining = -2
          return
        }
      }
      if (remaining === -2) return
      if (buffer.length < remaining + 2) return
      emit(new Uint8Array(buffer.subarray(0, remaining)))
      buffer = buffer.subarray(remaining + 2)
      remaining = -1
    }
  }
}

/**
 * A Node request handler as a `fetch` handler, in the same process and without a listener: the
 * request becomes a real `IncomingMessage` on an in-memory socket, and what Node's
 * `ServerResponse` writes on that socket (the status line, headers, body) becomes the `Response`,
 * streamed as it is written. So the handler runs exactly as it does behind `createServer`,
 * including answers it writes on the socket itself. The client address is `remoteAddress`.
 */
export const toFetchHandler = (
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  options: { readonly remoteAddress?: string } = {}
): FetchHandler =>
(request) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(request.url)
    let head: Buffer | undefined = Buffer.alloc(0)
    let body: ReadableStreamDefaultController<Uint8Array> | undefined
    let bodyBytes: ((chunk: Buffer) => void) | undefined
    let answered = false
    let ended = false
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        body = controller
      },
      cancel: () => {
        socket.destroy()
      }
    })
    const end = () => {
      if (ended) return
      ended = true
      if (answered) body?.close()
      else reject(new Error(`${request.method} ${url.pathname}: the handler closed without an answer`))
    }
    const written = (chunk: Buffer) => {
      if (head === undefined) {
        bodyBytes?.(chunk)
        return
      }
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk])
      for (;;) {
        const at: number = head.indexOf("\r\n\r\n")
        if (at < 0) return
        const [statusLine = "", ...lines] = head.subarray(0, at).toString("latin1").split("\r\n")
        const rest: Buffer = head.subarray(at + 4)
        const status = Number(statusLine.split(" ")[1])
        // `100 Continue` and other interim answers: the final one follows.
        if (status < 200) {
          head = rest
          continue
        }
        head = undefined
        const headers = new Headers()
        let chunked = false
        for (const line of lines) {
          const colon = line.indexOf(":")
          if (colon <= 0) continue
          const name = line.slice(0, colon).trim().toLowerCase()
          const value = line.slice(colon + 1).trim()
          if (name === "transfer-encoding" && value.toLowerCase().includes("chunked")) chunked = true
          if (!hopByHop.has(name)) headers.append(name, value)
        }
        const enqueue = (bytes: Uint8Array) => {
          if (!ended && bytes.length > 0) body?.enqueue(bytes)
        }
        bodyBytes = chunked ? chunkedDecoder(enqueue) : (bytes) => enqueue(new Uint8Array(bytes))
        answered = true
        const empty = request.method === "HEAD" || status === 204 || status === 304
        resolve(new Response(empty ? null : stream, { status, statusText: statusLine.split(" ").slice(2).join(" "), headers }))
        if (rest.length > 0) bodyBytes(rest)
        return
      }
    }
    const socket = new Duplex({
      read: () => {},
      write: (chunk: Buffer | string, encoding, callback) => {
        written(typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk)
        callback()
      },
      final: (callback) => {
        end()
        callback()
      },
      destroy: (error, callback) => {
        end()
        callback(error)
      }
    })
    Object.assign(socket, { remoteAddress: options.remoteAddress ?? "127.0.0.1", remotePort: 0, encrypted: url.protocol === "https:" })

    const req = new IncomingMessage(socket as never)
    req.method = request.method
    req.url = `${url.pathname}${url.search}`
    req.httpVersion = "1.1"
    req.httpVersionMajor = 1
    req.httpVersionMinor = 1
    const headers: Record<string, string> = {}
    const rawHeaders: Array<string> = []
    request.headers.forEach((value, name) => {
      headers[name] = value
      rawHeaders.push(name, value)
    })
    if (headers["host"] === undefined) {
      headers["host"] = url.host
      rawHeaders.push("host", url.host)
    }
    // A streamed body without a length arrives as Node's parser gives a chunked one: decoded, with the header.
    if (request.body !== null && headers["content-length"] === undefined) {
      headers["transfer-encoding"] = "chunked"
      rawHeaders.push("transfer-encoding", "chunked")
    }
    req.headers = headers
    req.rawHeaders = rawHeaders

    const res = new ServerResponse(req)
    // No chunked framing and no keep-alive: the body is whatever follows the head, until the end.
    res.useChunkedEncodingByDefault = false
    res.shouldKeepAlive = false
    res.assignSocket(socket as never)
    res.on("finish", () => {
      end()
      setImmediate(() => socket.destroy())
    })
    res.on("close", end)
    request.signal.addEventListener("abort", () => socket.destroy(), { once: true })

    const pump = async () => {
      if (request.body === null) {
        req.push(null)
        req.complete = true
        return
      }
      const reader = request.body.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        req.push(Buffer.from(value))
      }
      req.push(null)
      req.complete = true
    }
    pump().catch((error: unknown) => req.destroy(error instanceof Error ? error : new Error(String(error))))
    handle(req, res)
  })
