import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { base62, crc32, isWellFormedKeySecret, keySecretHint, keySecretPattern, newKeySecret } from "./KeySecret.js"

describe("key secrets", () => {
  it("computes the standard CRC-32 (the zlib check value of 123456789 is cbf43926)", () => {
    expect(crc32("123456789")).toBe(0xcbf43926)
    expect(crc32("")).toBe(0)
  })

  it("writes base62 left-padded, and the largest CRC fits six digits", () => {
    expect(base62(0, 6)).toBe("000000")
    expect(base62(61, 2)).toBe("0z")
    expect(base62(62, 2)).toBe("10")
    expect(base62(0xffffffff, 6)).toHaveLength(6)
  })

  it("makes secrets with the birzha_pk_ prefix, 32 random base62 characters and a CRC32 checksum", () => {
    const secrets = Array.from({ length: 200 }, () => Redacted.value(newKeySecret()))
    for (const secret of secrets) {
      expect(secret).toMatch(keySecretPattern)
      expect(secret).toHaveLength(49)
      expect(isWellFormedKeySecret(secret)).toBe(true)
      const head = secret.slice(0, 42)
      expect(secret.slice(43)).toBe(base62(crc32(head), 6))
    }
    expect(new Set(secrets).size).toBe(secrets.length)
  })

  it("refuses a secret whose checksum does not match, or of another shape", () => {
    const secret = Redacted.value(newKeySecret())
    const flipped = secret.slice(0, 20) + (secret[20] === "a" ? "b" : "a") + secret.slice(21)
    expect(isWellFormedKeySecret(flipped)).toBe(false)
    expect(isWellFormedKeySecret(secret.slice(0, -1) + (secret.endsWith("0") ? "1" : "0"))).toBe(false)
    expect(isWellFormedKeySecret(secret + "x")).toBe(false)
    expect(isWellFormedKeySecret(secret.slice(1))).toBe(false)
    expect(isWellFormedKeySecret(secret.replace("birzha_pk_", "birzha_xx_"))).toBe(false)
    expect(isWellFormedKeySecret("")).toBe(false)
  })

  it("hints at a secret with the prefix and its last four characters only", () => {
    const secret = Redacted.value(newKeySecret())
    expect(keySecretHint(secret)).toBe(`birzha_pk_…${secret.slice(-4)}`)
  })
})
