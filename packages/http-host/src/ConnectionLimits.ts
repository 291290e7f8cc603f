import { envelope, HeadersTooLarge, InvalidRequest, PayloadTooLarge, RequestTimeout } from "@birzha/domain"
import { booleanFlag, requireSetting } from "@birzha/infrastructure"
import { Config, Option } from "effect"
import type { Server } from "node:http"
import { isIP, type Socket } from "node:net"
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
  /**
   * Connections one client address (an IPv6 client's /64) may hold at once
   * (`BIRZHA_MAX_CONNECTIONS_PER_ADDRESS`); one more is closed on arrival. Never more than
   * `maxConnections` less its reserve (`addressCap`), so one address cannot take every slot.
   */
  readonly maxConnectionsPerAddress: number
  /** A connection that sends no byte within this time is closed without an answer (`BIRZHA_FIRST_BYTE_TIMEOUT_MS`). */
  readonly firstByteTimeoutMs: number
}

export const defaultConnectionLimits: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  maxConnectionsPerAddress: 100,
  firstByteTimeoutMs: 5_000
}

const milliseconds = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    requireSetting(name, "expected a number of milliseconds from 1 to 3600000", (n: number) => n >= 1 && n <= 3_600_000)
  )

// Validated after the default (or the option) is applied: on the bare integer config the failure's
// path would carry the variable's name twice.
const connections = <A>(name: string, config: Config.Config<A>, count: (value: A) => number) =>
  config.pipe(requireSetting(name, "expected a positive number of connections", (value: A) => count(value) >= 1))

export const ConnectionLimitsConfig: Config.Config<ConnectionLimits> = Config.all({
  headersTimeoutMs: milliseconds("BIRZHA_HEADERS_TIMEOUT_MS", defaultConnectionLimits.headersTimeoutMs),
  requestTimeoutMs: milliseconds("BIRZHA_REQUEST_TIMEOUT_MS", defaultConnectionLimits.requestTimeoutMs),
  keepAliveTimeoutMs: milliseconds("BIRZHA_KEEP_ALIVE_TIMEOUT_MS", defaultConnectionLimits.keepAliveTimeoutMs),
  maxConnections: connections(
    "BIRZHA_MAX_CONNECTIONS",
    Config.integer("BIRZHA_MAX_CONNECTIONS").pipe(Config.withDefault(defaultConnectionLimits.maxConnections)),
    (n) => n
  ),
  maxConnectionsPerAddress: connections(
    "BIRZHA_MAX_CONNECTIONS_PER_ADDRESS",
    Config.option(Config.integer("BIRZHA_MAX_CONNECTIONS_PER_ADDRESS")),
    Option.getOrElse(() => 1)
  ),
  firstByteTimeoutMs: milliseconds("BIRZHA_FIRST_BYTE_TIMEOUT_MS", defaultConnectionLimits.firstByteTimeoutMs),
  behindProxy: booleanFlag("BIRZHA_TRUST_PROXY")
}).pipe(
  Config.map(({ behindProxy, maxConnectionsPerAddress, ...limits }) => ({
    ...limits,
    // Node refuses a headers timeout longer than the request's; the request's then bounds both.
    headersTimeoutMs: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    // Behind a proxy every connection comes from the proxy's address: unset, its cap is the global one.
    maxConnectionsPerAddress: Option.getOrElse(
      maxConnectionsPerAddress,
      () => behindProxy ? limits.maxConnections : defaultConnectionLimits.maxConnectionsPerAddress
    )
  }))
)

/** Slots no single address may take: a tenth of the global cap, at least one (none when the cap is one). */
export const reservedConnections = (limits: Pick<ConnectionLimits, "maxConnections">) =>
  Math.min(limits.maxConnections - 1, Math.max(1, Math.ceil(limits.maxConnections / 10)))

/** The connections one address may hold: its own cap, and never the global reserve. */
export const addressCap = (limits: Pick<ConnectionLimits, "maxConnections" | "maxConnectionsPerAddress">) =>
  Math.min(limits.maxConnectionsPerAddress, limits.maxConnections - reservedConnections(limits))

/**
 * What the per-address cap counts a peer as: its IPv4 address (also when written IPv4-mapped), or
 * its IPv6 /64, since one host is usually given a whole /64 and could spread over it at will.
 * `undefined` for a socket whose peer is already gone.
 */
export const addressKey = (remote: string | undefined): string | undefined => {
  if (remote === undefined) return undefined
  const address = remote.replace(/%.*$/, "")
  const mapped = address.replace(/^::ffff:/i, "")
  if (isIP(mapped) === 4) return mapped
  if (isIP(address) !== 6) return address
  const [head = "", tail] = address.toLowerCase().split("::")
  const groups = (part: string) => (part === "" ? [] : part.split(":")).flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]))
  const front = groups(head)
  const back = tail === undefined ? [] : groups(tail)
  const all = [...front, ...Array.from({ length: 8 - front.length - back.length }, () => "0"), ...back]
  return `${all.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(":")}::/64`
}

/** The limits as `createServer` options. Node checks its timeouts on an interval: a fraction of the shortest, at most 1 s. */
export const serverOptions = (limits: ConnectionLimits) => ({
  headersTimeout: limits.headersTimeoutMs,
  requestTimeout: limits.requestTimeoutMs,
  keepAliveTimeout: limits.keepAliveTimeoutMs,
  connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)))
})

/**
 * What each of node's parser errors (llhttp's `HPE_*` codes) says is wrong with the request, so the
 * 400 names the fault; a code not listed gets a generic message naming the code.
 */
const malformed: Readonly<Record<string, string>> = {
  HPE_INVALID_METHOD: "The request method is not a valid HTTP method",
  HPE_INVALID_URL: "The request target is not a valid URL path (it must be percent-encoded ASCII, without spaces or control characters)",
  HPE_INVALID_VERSION: "The request line does not end with a valid HTTP version (HTTP/1.1 or HTTP/1.0) and CRLF",
  HPE_INVALID_CONSTANT: "The request line is malformed (expected HTTP/ and the version after the target)",
  HPE_INVALID_HEADER_TOKEN: "A header name or value contains a character HTTP does not allow",
  HPE_INVALID_CONTENT_LENGTH: "The Content-Length header is not a decimal number of bytes",
  HPE_UNEXPECTED_CONTENT_LENGTH: "Content-Length is sent more than once",
  HPE_INVALID_TRANSFER_ENCODING: "Transfer-Encoding is not valid: its last coding must be chunked",
  HPE_INVALID_CHUNK_SIZE: "A chunk size of the chunked body is not a hexadecimal number",
  HPE_STRICT: "The request breaks a rule of HTTP/1.1 syntax",
  HPE_CR_EXPECTED: "A line of the request does not end with CRLF",
  HPE_LF_EXPECTED: "A line of the request does not end with CRLF",
  HPE_UNEXPECTED_SPACE: "The request has whitespace where HTTP does not allow it",
  HPE_CLOSED_CONNECTION: "Bytes followed a request that closed its connection (Connection: close)",
  HPE_INVALID_EOF_STATE: "The connection ended in the middle of a request",
  HPE_PAUSED_H2_UPGRADE: "HTTP/2 without TLS is not served; use HTTP/1.1"
}

/**
 * Both framings at once (a request-smuggling shape) comes under the code of whichever header came
 * second (`HPE_INVALID_CONTENT_LENGTH` or `HPE_INVALID_TRANSFER_ENCODING`, each also used for a bad
 * value of its own header): llhttp's reason, "… can't be present with …", tells them apart.
 */
const bothFramings = "The request has both Content-Length and Transfer-Encoding; send one or the other"

/**
 * The envelope for each refusal of node's parser: headers too large, a client too slow, anything
 * else malformed. `reason` is the parser's own sentence (node's `error.reason`), read only to tell
 * a request with both framings apart.
 */
export const parserRefusal = (code: unknown, reason?: unknown) => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { cls: HeadersTooLarge, reason: "431 Request Header Fields Too Large", message: "The request line and headers are too large" }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { cls: PayloadTooLarge, reason: "413 Payload Too Large", message: "The chunk extensions are too large" }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { cls: RequestTimeout, reason: "408 Request Timeout", message: "The request did not arrive in time" }
    default: {
      const known = typeof reason === "string" && reason.includes("can't be present with")
        ? bothFramings
        : typeof code === "string" && Object.hasOwn(malformed, code)
        ? malformed[code]
        : undefined
      const named = typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code) ? ` (${code})` : ""
      return { cls: InvalidRequest, reason: "400 Bad Request", message: known ?? `The request is not valid HTTP/1.1; the parser refused it${named}` }
    }
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
export const answerClientError = (error: Error & { readonly code?: unknown; readonly reason?: unknown }, socket: Duplex) => {
  if (answered.has(socket)) return
  answered.add(socket)
  const inFlight: unknown = Reflect.get(socket, "_httpMessage")
  const begun = typeof inFlight === "object" && inFlight !== null && Reflect.get(inFlight, "headersSent") === true
  if (error.code === "ECONNRESET" || !socket.writable || begun) {
    socket.destroy()
    return
  }
  const { cls, message, reason } = parserRefusal(error.code, error.reason)
  const body = JSON.stringify(envelope(cls, message))
  socket.end(
    `HTTP/1.1 ${reason}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncache-control: no-store\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  )
  socket.resume()
  setTimeout(() => socket.destroy(), 2_000).unref()
}

/**
 * Closes `socket` unless it reads something beyond `read` bytes in the meantime, looked at after the
 * event loop's poll phase. When the loop was held up (a long synchronous task, a process starved of
 * CPU), a timer that ran out meanwhile runs before the poll phase reads what the peer sent in that
 * time: closing at once would reset a connection whose request is already waiting in its socket
 * (ConnectionLimits.test.ts). `setImmediate` runs after that poll phase.
 */
const closeIfStillSilent = (socket: Socket, read: number) =>
  setImmediate(() => {
    if (socket.bytesRead === read && !socket.destroyed) socket.destroy()
  })

/**
 * Counts each address's open connections and closes one over its cap on arrival, before any byte
 * is read (no answer: the client has asked nothing yet, and writing to a flood costs more than
 * dropping it). A connection that sends nothing within the first-byte timeout is closed the same
 * way: node's own check waits for the headers timeout and answers 408, which let one address hold
 * every slot for that long. `bytesRead` counts what node's parser consumed from the handle.
 */
const capPerAddress = (server: Server, limits: ConnectionLimits) => {
  const cap = addressCap(limits)
  const open = new Map<string, number>()
  server.on("connection", (socket: Socket) => {
    const key = addressKey(socket.remoteAddress)
    const held = key === undefined ? cap : open.get(key) ?? 0
    if (key === undefined || held >= cap) {
      socket.destroy()
      return
    }
    open.set(key, held + 1)
    const firstByte = setTimeout(() => {
      if (socket.bytesRead === 0) closeIfStillSilent(socket, 0)
    }, limits.firstByteTimeoutMs)
    firstByte.unref()
    socket.once("close", () => {
      clearTimeout(firstByte)
      const left = (open.get(key) ?? 1) - 1
      if (left <= 0) open.delete(key)
      else open.set(key, left)
    })
  })
}

/**
 * Applies the limits a listener enforces itself (the connection caps, the first byte), and answers
 * parser refusals with the envelope. The keep-alive timeout is node's (`serverOptions`), but its
 * close goes through `closeIfStillSilent`: a listener of the server's `timeout` event replaces
 * node's immediate close (the host sets no other socket timeout, so only the keep-alive one
 * arrives here), and node clears that timer once a next request is read.
 */
export const applyConnectionLimits = (server: Server, limits: ConnectionLimits) => {
  server.maxConnections = limits.maxConnections
  capPerAddress(server, limits)
  server.on("clientError", answerClientError)
  server.on("timeout", (socket: Socket) => closeIfStillSilent(socket, socket.bytesRead))
}
