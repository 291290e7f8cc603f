import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"

/** The header naming a request, in both directions. */
export const requestIdHeader = "x-request-id"

/**
 * A client's or proxy's own id is kept when it is 1 to 128 characters of letters, digits and
 * `-._~:@+=/` (what request-id schemes use: uuids, ULIDs, base64, `trace/span`); anything else
 * (empty, longer, spaces, quotes, control characters, repeated headers) is replaced.
 */
const wellFormed = /^[A-Za-z0-9\-._~:@+=/]{1,128}$/

/**
 * Names a request before anything answers it: the well-formed `x-request-id` it came with, or a
 * new uuid. The id is set on the request's headers (so every later reader — the access log, the
 * log annotations of the operation's fiber, the platform router's routes — reads the one value)
 * and on the response, whose every answer then carries it (`writeHead` merges headers set before).
 * Calling it again for the same request keeps the id.
 */
export const assignRequestId = (req: IncomingMessage, res: ServerResponse): string => {
  const given = req.headers[requestIdHeader]
  const id = typeof given === "string" && wellFormed.test(given) ? given : randomUUID()
  req.headers[requestIdHeader] = id
  if (!res.headersSent) res.setHeader(requestIdHeader, id)
  return id
}

/** The id `assignRequestId` gave the request (undefined for one it never saw). */
export const requestIdOf = (req: IncomingMessage): string | undefined => {
  const id = req.headers[requestIdHeader]
  return typeof id === "string" ? id : undefined
}
