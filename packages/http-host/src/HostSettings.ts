import { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import type { HttpSettings } from "./HttpConfig.js"

/** The HTTP settings handlers need per request (where the client is, which origin is ours). */
export class HostSettings extends Context.Tag("@birzha/http-host/HostSettings")<HostSettings, Pick<HttpSettings, "publicOrigin" | "trustProxy">>() {}

/**
 * The client's address for rate limits: the socket's peer, or with `BIRZHA_TRUST_PROXY` the
 * left-most `X-Forwarded-For` entry (what the trusted proxy saw). Never trusted otherwise, since
 * any client can send the header.
 */
export const clientAddress = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { trustProxy } = yield* HostSettings
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]?.split(",")[0]?.trim()
    if (forwarded !== undefined && forwarded.length > 0 && forwarded.length <= 64) return forwarded
  }
  return Option.getOrElse(request.remoteAddress, () => "unknown").replace(/^::ffff:/, "")
})
