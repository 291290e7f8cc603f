import { Context, Redacted } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"

/** The server key for keyed hashes (codes, tokens, keys) and encryption at rest. */
export class ServerSecret extends Context.Tag("@birzha/domain/ServerSecret")<ServerSecret, Redacted.Redacted<string>>() {}

/**
 * HMAC-SHA256 of a secret value under the server key, with a purpose label so a hash of one kind
 * (a sign-in code) can never stand in for another (a session token). Only these are stored.
 */
export const keyedHash = (key: Redacted.Redacted<string>, purpose: string, value: string): string =>
  createHmac("sha256", Redacted.value(key)).update(`${purpose}\n${value}`).digest("base64url")

/** Compares two hashes in constant time. */
export const sameHash = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
