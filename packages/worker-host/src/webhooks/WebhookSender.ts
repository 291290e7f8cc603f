import { webhookLimits } from "@birzha/domain"
import { normalizeWebhookUrl } from "@birzha/domain/internal"
import { Effect, Either } from "effect"
import http from "node:http"
import https from "node:https"
import type { LookupFunction } from "node:net"
import type { AddressGuard } from "./AddressGuard.js"

export interface WebhookRequest {
  readonly url: string
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}

/** What one attempt produced: an answer (any status) or an error without one. */
export interface AttemptResult {
  readonly statusCode?: number
  /** The first 1 KiB of the answer's body (or `answerBytes`), as text. */
  readonly excerpt: string
  readonly error?: string
  /** The address the connection went to (or would have). */
  readonly address?: string
  readonly durationMs: number
  readonly retryAfter?: string
}

/** Bytes read from an answer at most; beyond that the connection is dropped rather than drained. */
const maxDrainBytes = 64 * 1024

const describeError = (error: unknown): string => {
  if (error instanceof Error) {
    const code = "code" in error && typeof error.code === "string" ? error.code : undefined
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
  }
  return String(error)
}

/**
 * Sends webhooks over HTTP(S) with the SSRF guard: the URL's policy is checked again, the host is
 * resolved and checked, and the connection is pinned to the checked address (the `lookup` of the
 * request answers with it; the Host header and TLS name stay the URL's). Redirects are not
 * followed (3xx is a failure). Keep-alive agents per destination, so a busy endpoint reuses its
 * connections. The whole attempt, connect to last byte read, is bounded by `timeoutMs`.
 */
export const makeWebhookSender = (options: {
  readonly guard: AddressGuard
  readonly allowHttpLoopback: boolean
  readonly timeoutMs: number
  readonly socketsPerDestination: number
  /** How much of an answer's body to keep (default the webhook excerpt, 1 KiB); more is read and dropped up to 64 KiB. */
  readonly answerBytes?: number
}) => {
  const keep = options.answerBytes ?? webhookLimits.responseExcerptBytes
  const drainLimit = Math.max(maxDrainBytes, keep)
  const agents = new Map<string, http.Agent>()
  const agentFor = (protocol: string, key: string): http.Agent => {
    let agent = agents.get(key)
    if (agent === undefined) {
      const settings = { keepAlive: true, maxSockets: options.socketsPerDestination, maxFreeSockets: options.socketsPerDestination, scheduling: "lifo" as const }
      agent = protocol === "https:" ? new https.Agent(settings) : new http.Agent(settings)
      agents.set(key, agent)
    }
    return agent
  }

  const attempt = (request: WebhookRequest, signal: AbortSignal): Promise<AttemptResult> => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const policy = normalizeWebhookUrl(request.url, { allowHttpLoopback: options.allowHttpLoopback })
    if (Either.isLeft(policy)) return Promise.resolve({ excerpt: "", error: `refused: ${policy.left}`, durationMs: elapsed() })
    const url = new URL(policy.right)
    return options.guard.destinationOf(url.hostname, Date.now()).then((destination) => {
      if (destination._tag === "Refused") {
        return { excerpt: "", error: `refused by the SSRF guard: ${destination.reason}`, durationMs: elapsed() }
      }
      const { address, family } = destination
      const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
        if (lookupOptions.all === true) callback(null, [{ address, family }])
        else callback(null, address, family)
      }
      const transport = url.protocol === "https:" ? https : http
      return new Promise<AttemptResult>((resolve) => {
        let settled = false
        const finish = (result: Omit<AttemptResult, "durationMs" | "address">) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          signal.removeEventListener("abort", abort)
          resolve({ ...result, address, durationMs: elapsed() })
        }
        const req = transport.request(url, {
          method: "POST",
          headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
          agent: agentFor(url.protocol, `${url.protocol}//${url.host}|${address}`),
          lookup: pinned
        }, (res) => {
          const chunks: Array<Buffer> = []
          let kept = 0
          let read = 0
          const answer = () => ({
            statusCode: res.statusCode ?? 0,
            excerpt: Buffer.concat(chunks).toString("utf8"),
            ...(typeof res.headers["retry-after"] === "string" ? { retryAfter: res.headers["retry-after"] } : {})
          })
          res.on("data", (chunk: Buffer) => {
            read += chunk.length
            if (kept < keep) {
              const part = chunk.subarray(0, keep - kept)
              chunks.push(part)
              kept += part.length
            }
            if (read > drainLimit) {
              finish(answer())
              res.destroy()
            }
          })
          res.on("end", () => finish(answer()))
          res.on("error", () => finish(answer()))
          // Closed before its end (the receiver dropped the connection): what came is the answer.
          res.on("close", () => finish(answer()))
        })
        const timer = setTimeout(() => {
          finish({ excerpt: "", error: `no complete answer within ${Math.round(options.timeoutMs / 1000)} s` })
          req.destroy()
        }, options.timeoutMs)
        const abort = () => {
          finish({ excerpt: "", error: "the worker stopped during the attempt" })
          req.destroy()
        }
        signal.addEventListener("abort", abort)
        req.on("error", (error) => finish({ excerpt: "", error: describeError(error) }))
        req.end(request.body)
      })
    })
  }

  return {
    /** One attempt as an Effect; interrupting it destroys the request. Never fails: errors are part of the result. */
    send: (request: WebhookRequest): Effect.Effect<AttemptResult> =>
      Effect.promise((signal) => attempt(request, signal)),
    close: Effect.sync(() => {
      for (const agent of agents.values()) agent.destroy()
      agents.clear()
    })
  }
}

export type WebhookSender = ReturnType<typeof makeWebhookSender>
