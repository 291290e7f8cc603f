import { Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto"
import { webhookLimits } from "./WebhookEndpoint.js"

/** Standard Webhooks: a signing secret is `whsec_` followed by the base64 of its key bytes. */
export const secretPrefix = "whsec_"

/** A new signing secret: `whsec_` + base64 of 32 random bytes (the standard allows 24 to 64). */
export const newSigningSecret = (): string => secretPrefix + randomBytes(webhookLimits.secretBytes).toString("base64")

/** The HMAC key of a `whsec_` secret: its base64 part decoded. */
export const signingKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, "base64")

/**
 * `webhook-signature` of one message: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per key,
 * separated by spaces (Standard Webhooks: one per valid secret during a rotation).
 */
export const signatureHeader = (keys: ReadonlyArray<Buffer>, id: string, timestamp: number, body: string): string =>
  keys.map((key) => `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`).join(" ")

const sealVersion = "v1"

// AES-256-GCM key from the server secret, with its own label so it is never the key of anything else;
// derived once per server secret (every signed call opens a sealed secret).
const encryptionKeys = new WeakMap<Redacted.Redacted<string>, Buffer>()
const encryptionKey = (serverSecret: Redacted.Redacted<string>): Buffer => {
  const known = encryptionKeys.get(serverSecret)
  if (known !== undefined) return known
  const key = Buffer.from(hkdfSync("sha256", Redacted.value(serverSecret), "birzha", "webhook signing secret encryption", 32))
  encryptionKeys.set(serverSecret, key)
  return key
}

/**
 * The secret encrypted at rest (AES-256-GCM, random 12-byte nonce). The endpoint uuid is the
 * associated data, so a sealed secret copied to another endpoint's row does not open there.
 * Form: `v1.<nonce>.<ciphertext>.<tag>`, each base64url.
 */
export const sealSecret = (serverSecret: Redacted.Redacted<string>, endpointUuid: string, secret: string): string => {
  const nonce = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", encryptionKey(serverSecret), nonce)
  cipher.setAAD(Buffer.from(endpointUuid, "utf8"))
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()])
  return [sealVersion, nonce, ciphertext, cipher.getAuthTag()].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".")
}

/** The secret back from its sealed form; throws when it was not sealed for this endpoint under this server secret. */
export const openSecret = (serverSecret: Redacted.Redacted<string>, endpointUuid: string, sealed: string): string => {
  const [version, nonce, ciphertext, tag] = sealed.split(".")
  if (version !== sealVersion || nonce === undefined || ciphertext === undefined || tag === undefined) {
    throw new Error("not a sealed webhook secret")
  }
  const decipher = createDecipheriv("aes-256-gcm", encryptionKey(serverSecret), Buffer.from(nonce, "base64url"))
  decipher.setAAD(Buffer.from(endpointUuid, "utf8"))
  decipher.setAuthTag(Buffer.from(tag, "base64url"))
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8")
}
