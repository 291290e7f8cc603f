import { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import type { IncomingMessage } from "node:http"
import { isIP } from "node:net"
import type { HttpSettings } from "./HttpConfig.js"

/** The HTTP settings pages need per request (where the client is, which origin is ours, how large a body may be). */
export class HostSettings extends Context.Tag("@birzha/http-host/HostSettings")<
  HostSettings,
  Pick<HttpSettings, "publicOrigin" | "trustProxy" | "maxBodyBytes">
>() {}

/**
 * The client's address for rate limits: the socket's peer, or with `BIRZHA_TRUST_PROXY` the
 * address the trusted proxy itself added, the right-most `X-Forwarded-For` entry (every entry left
 * of it is whatever the client claimed), when it is an IP address. Never trusted otherwise, since
 * any client can send the header.
 */
export const forwardedAddress = (header: string | ReadonlyArray<string> | undefined): string | undefined => {
  const value = Array.isArray(header) ? header.join(",") : header
  if (typeof value !== "string") return undefined
  const last = value.split(",").at(-1)?.trim().replace(/^::ffff:/, "")
  return last !== undefined && isIP(last) !== 0 ? last : undefined
}

const peer = (address: string | undefined) => (address ?? "unknown").replace(/^::ffff:/, "")

export const clientAddressOf = (req: IncomingMessage, trustProxy: boolean): string =>
  (trustProxy ? forwardedAddress(req.headers["x-forwarded-for"]) : undefined) ?? peer(req.socket.remoteAddress)

/** The same, for a page's request. */
export const clientAddress = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { trustProxy } = yield* HostSettings
  return (trustProxy ? forwardedAddress(request.headers["x-forwarded-for"]) : undefined) ??
    peer(Option.getOrUndefined(request.remoteAddress))
})
