import { envelope, HeadersTooLarge, InvalidRequest, PayloadTooLarge, RequestTimeout } from "@birzha/domain"
import { requireSetting } from "@birzha/infrastructure"
import { Config } from "effect"
import type { Server } from "node:http"
import type { Duplex } from "node:stream"

/**
 * How long a client may take and how many may be connected at once: without these a slow or idle
 * client holds a socket for as long as it likes (node's own checks run every 30 s, and nothing
 * caps the number of sockets).
 */
export interface ConnectionLimits {
  /** The request line and headers must arrive within this time (`BIRZHA_HEADERS_TIMEOUT_MS`); 408 otherwise. */
  readonly headersTimeoutMs: number
  /** The whole request, body included, must arrive within this time (`BIRZHA_REQUEST_TIMEOUT_MS`); 408 otherwise. */
  readonly requestTimeoutMs: number
  /** A kept-alive connection with no new request is closed after this time (`BIRZHA_KEEP_ALIVE_TIMEOUT_MS`). */
  readonly keepAliveTimeoutMs: number
  /** Connections held at once (`BIRZHA_MAX_CONNECTIONS`); one more is closed on arrival. */
  readonly maxConnections: number
}

export const defaultConnectionLimits: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000
}

const milliseconds = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    requireSetting(name, "expected a number of milliseconds from 1 to 3600000", (n: number) => n >= 1 && n <= 3_600_000)
  )

export const ConnectionLimitsConfig: Config.Config<ConnectionLimits> = Config.all({
  headersTimeoutMs: milliseconds("BIRZHA_HEADERS_TIMEOUT_MS", defaultConnectionLimits.headersTimeoutMs),
  requestTimeoutMs: milliseconds("BIRZHA_REQUEST_TIMEOUT_MS", defaultConnectionLimits.requestTimeoutMs),
  keepAliveTimeoutMs: milliseconds("BIRZHA_KEEP_ALIVE_TIMEOUT_MS", defaultConnectionLimits.keepAliveTimeoutMs),
  maxConnections: Config.integer("BIRZHA_MAX_CONNECTIONS").pipe(
    Config.withDefault(defaultConnectionLimits.maxConnections),
    requireSetting("BIRZHA_MAX_CONNECTIONS", "expected a positive number of connections", (n: number) => n >= 1)
  )
}).pipe(
  // Node refuses a headers timeout longer than the request's; the request's then bounds both.
  Config.map((limits) => ({ ...limits, headersTimeoutMs: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) }))
)

/** The limits as `createServer` options. Node checks its timeouts on an interval: a fraction of the shortest, at most 1 s. */
export const serverOptions = (limits: ConnectionLimits) => ({
  headersTimeout: limits.headersTimeoutMs,
  requestTimeout: limits.requestTimeoutMs,
  keepAliveTimeout: limits.keepAliveTimeoutMs,
  connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)))
})

/** The envelope for each refusal of node's parser: headers too large, a client too slow, anything else malformed. */
const refusalOf = (code: unknown) => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { cls: HeadersTooLarge, reason: "431 Request Header Fields Too Large", message: "The request line and headers are too large" }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { cls: PayloadTooLarge, reason: "413 Payload Too Large", message: "The chunk extensions are too large" }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { cls: RequestTimeout, reason: "408 Request Timeout", message: "The request did not arrive in time" }
    default:
      return { cls: InvalidRequest, reason: "400 Bad Request", message: "The request is not valid HTTP (the URL must be percent-encoded ASCII)" }
  }
}

const answered = new WeakSet<Duplex>()

/**
 * Node's `clientError`: its parser refused the request (raw non-ASCII in the URL, a malformed
 * line or header, headers past the limit, a timeout) before any handler ran, and its own answer
 * has no body. Answers with the envelope instead, unless an answer on this socket has begun (a
 * pipelined request), then closes: the client's remaining bytes are read and dropped for at most
 * 2 s so the answer is not lost to a reset.
 */
export const answerClientError = (error: Error & { readonly code?: unknown }, socket: Duplex) => {
  if (answered.has(socket)) return
  answered.add(socket)
  const inFlight: unknown = Reflect.get(socket, "_httpMessage")
  const begun = typeof inFlight === "object" && inFlight !== null && Reflect.get(inFlight, "headersSent") === true
  if (error.code === "ECONNRESET" || !socket.writable || begun) {
    socket.destroy()
    return
  }
  const { cls, message, reason } = refusalOf(error.code)
  const body = JSON.stringify(envelope(cls, message))
  socket.end(
    `HTTP/1.1 ${reason}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncache-control: no-store\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  )
  socket.resume()
  setTimeout(() => socket.destroy(), 2_000).unref()
}

/** Applies the limits a listener enforces itself (the connection cap), and answers parser refusals with the envelope. */
export const applyConnectionLimits = (server: Server, limits: ConnectionLimits) => {
  server.maxConnections = limits.maxConnections
  server.on("clientError", answerClientError)
}
