import { Either } from "effect"
import { addressProblem, ipBytes, isLoopbackAddress } from "./AddressPolicy.js"
import { webhookLimits } from "./WebhookEndpoint.js"

export interface WebhookUrlPolicy {
  /** `BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK`: http:// (and https://) receivers on loopback, for tests and local development. */
  readonly allowHttpLoopback: boolean
}

const loopbackNames = (host: string) => host === "localhost" || host.endsWith(".localhost")

/**
 * The receiver URL as stored and shown for approval (the WHATWG serialisation, so what the owner
 * approves is byte for byte what the worker calls), or why it is refused. Checked here: scheme
 * (https; http only to loopback when allowed), no credentials, no fragment, a host name with a
 * dot or a public IP literal. Host names are resolved and checked again at every attempt.
 */
export const normalizeWebhookUrl = (input: string, policy: WebhookUrlPolicy): Either.Either<string, string> => {
  if (input.length > webhookLimits.urlLength) return Either.left(`url: at most ${webhookLimits.urlLength} characters`)
  if (!URL.canParse(input)) return Either.left("url: not an absolute URL")
  const url = new URL(input)
  if (url.username !== "" || url.password !== "") return Either.left("url: credentials are not allowed in a webhook URL")
  if (input.includes("#")) return Either.left("url: a webhook URL has no fragment")
  // A trailing dot names the same host (`localhost.` is `localhost`): checked without it.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "")
  const literal = ipBytes(host) !== undefined
  const loopback = literal ? isLoopbackAddress(host.replace(/^\[|\]$/g, "")) : loopbackNames(host)
  if (url.protocol === "http:") {
    if (!(policy.allowHttpLoopback && loopback)) return Either.left("url: must start with https://")
  } else if (url.protocol !== "https:") {
    return Either.left("url: must start with https://")
  }
  if (loopback && !policy.allowHttpLoopback) return Either.left(`url: ${host} is a loopback host; webhooks go to public hosts`)
  if (literal) {
    const problem = addressProblem(host.replace(/^\[|\]$/g, ""), { allowLoopback: policy.allowHttpLoopback })
    if (problem !== undefined) return Either.left(`url: ${problem}; webhooks go to public addresses`)
  } else if (!loopback && !host.includes(".")) {
    return Either.left(`url: ${host} is not a public host name`)
  }
  const href = url.href
  if (href.length > webhookLimits.urlLength) return Either.left(`url: at most ${webhookLimits.urlLength} characters`)
  return Either.right(href)
}
