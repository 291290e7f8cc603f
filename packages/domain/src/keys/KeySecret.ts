import { Redacted } from "effect"
import { randomBytes } from "node:crypto"

/**
 * Key secrets look like `birzha_pk_<32 base62>_<6 base62>`, after GitHub's `ghp_` tokens: the
 * fixed prefix lets secret scanners (and people) recognise a leaked key, and the last part is the
 * CRC32 of everything before it, so a scanner can tell a real key from a look-alike without asking
 * us, and the host refuses a mistyped key before touching the database. 32 base62 characters are
 * about 190 random bits. Only a keyed hash of the whole secret is stored.
 */
export const keySecretPrefix = "birzha_pk_"
const bodyLength = 32
const checksumLength = 6
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** The whole shape, for scanners: `birzha_pk_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}`. */
export const keySecretPattern = /^birzha_pk_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/

const crcTable = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 (IEEE, as zlib) of the UTF-8 bytes of a string. */
export const crc32 = (text: string): number => {
  let crc = 0xffffffff
  for (const byte of Buffer.from(text, "utf8")) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/** A number in base62, left-padded with `0` to `width` digits. */
export const base62 = (value: number, width: number): string => {
  let out = ""
  let rest = value
  while (rest > 0) {
    out = alphabet[rest % 62]! + out
    rest = Math.floor(rest / 62)
  }
  return out.padStart(width, "0")
}

const checksumOf = (head: string): string => base62(crc32(head), checksumLength)

/** Uniform base62 characters: bytes of 248 and above are dropped (248 = 4 × 62), so none is favoured. */
const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += alphabet[byte % 62]
    }
  }
  return out
}

/** A new key secret. */
export const newKeySecret = (): Redacted.Redacted<string> => {
  const head = `${keySecretPrefix}${randomBase62(bodyLength)}`
  return Redacted.make(`${head}_${checksumOf(head)}`)
}

/** Shape and checksum; a key failing this is refused without a database lookup. */
export const isWellFormedKeySecret = (secret: string): boolean => {
  if (!keySecretPattern.test(secret)) return false
  const head = secret.slice(0, keySecretPrefix.length + bodyLength)
  return secret.slice(-checksumLength) === checksumOf(head)
}

/** What the owner sees of an issued secret: the prefix and its last four characters. */
export const keySecretHint = (secret: string): string => `${keySecretPrefix}…${secret.slice(-4)}`
