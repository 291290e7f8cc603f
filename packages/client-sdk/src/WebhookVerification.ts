/**
 * Verifying Birzha webhooks (Standard Webhooks): `webhook-signature` holds one or more
 * `v1,<base64 HMAC-SHA256>` signatures of `webhook-id.webhook-timestamp.body` (several during a
 * secret rotation); any one made with the secret is enough. WebCrypto only (`crypto.subtle`,
 * in browsers and Node 20+), no Node built-ins, so it runs wherever the client does.
 */

/** The message is not a genuine, fresh webhook of the service: do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
}

/** Headers as `fetch` (`Headers`), Node (`IncomingHttpHeaders`) or a plain object give them. */
export type WebhookHeaders =
  | { readonly get: (name: string) => string | null }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (spec: 5 minutes). */
  readonly toleranceSeconds?: number
  /** The current time (a Date or milliseconds); for tests and replays of stored messages. */
  readonly now?: Date | number
}

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof headers.get === "function") return (headers as { readonly get: (name: string) => string | null }).get(name) ?? undefined
  const record = headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return typeof value === "string" ? value : value?.[0]
}

const base64Bytes = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  try {
    const binary = atob(text)
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch {
    return undefined
  }
}

const encoder = new TextEncoder()

/**
 * Checks a webhook against its signing secret (or several, e.g. the old and the new one while
 * rotating) on the raw body bytes exactly as received, and returns the parsed JSON body. Throws
 * `WebhookVerificationError` when a header is missing, the timestamp is outside the tolerance
 * (5 minutes by default), or no `v1` signature matches. Signatures are compared by
 * `crypto.subtle.verify`, which compares in constant time.
 *
 * Deduplicate by `webhook-id` (the event uuid): deliveries may repeat and arrive out of order.
 */
export const verifyWebhook = async (
  secret: string | ReadonlyArray<string>,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array | ArrayBuffer,
  options: VerifyWebhookOptions = {}
): Promise<unknown> => {
  const id = header(headers, "webhook-id")
  const timestamp = header(headers, "webhook-timestamp")
  const signatures = header(headers, "webhook-signature")
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature")
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not a number of seconds")
  const now = options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime()
  const tolerance = options.toleranceSeconds ?? 300
  if (Math.abs(Math.floor(now / 1000) - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance: too old or too new")
  }
  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody)
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + body.length)
  signed.set(prefix)
  signed.set(body, prefix.length)

  const candidates = signatures.split(" ")
    .map((entry) => entry.split(","))
    .filter((parts) => parts.length === 2 && parts[0] === "v1")
    .map((parts) => base64Bytes(parts[1]!))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== undefined)
  for (const each of typeof secret === "string" ? [secret] : secret) {
    const keyBytes = base64Bytes(each.startsWith("whsec_") ? each.slice("whsec_".length) : each)
    if (keyBytes === undefined || keyBytes.length === 0) throw new WebhookVerificationError("The secret is not a whsec_ signing secret")
    const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
    for (const candidate of candidates) {
      if (await crypto.subtle.verify("HMAC", key, candidate, signed)) {
        return JSON.parse(new TextDecoder().decode(body)) as unknown
      }
    }
  }
  throw new WebhookVerificationError("No matching signature")
}
