import type { FileMimeType } from "./File.js"

/**
 * Tells what bytes are from their content, never from a name or a header, so a declared type is
 * believed only when the bytes agree. Binary formats by their signature (magic bytes; Office
 * documents by the entries of their zip); text formats by being valid UTF-8 without NUL, JSON by
 * parsing.
 */

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + signature.length && signature.every((byte, i) => bytes[at + i] === byte)

const ascii = (text: string) => Array.from(text, (char) => char.charCodeAt(0))

const u16 = (bytes: Uint8Array, at: number) => bytes[at]! | (bytes[at + 1]! << 8)
const u32 = (bytes: Uint8Array, at: number) => (u16(bytes, at) | (u16(bytes, at + 2) << 16)) >>> 0
const u32be = (bytes: Uint8Array, at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0

/** AVIF is an ISO-BMFF file whose `ftyp` box names the `avif` or `avis` brand (major or compatible). */
const isAvif = (bytes: Uint8Array): boolean => {
  if (!startsWith(bytes, ascii("ftyp"), 4)) return false
  const boxSize = u32be(bytes, 0)
  if (boxSize < 16 || boxSize > bytes.length) return false
  const brands = [bytes.subarray(8, 12)]
  for (let at = 16; at + 4 <= boxSize; at += 4) brands.push(bytes.subarray(at, at + 4))
  return brands.some((brand) => startsWith(brand, ascii("avif")) || startsWith(brand, ascii("avis")))
}

/**
 * The entry names of a zip archive from its central directory, or undefined when the bytes are
 * not a well-formed zip (no end record, or a directory that runs outside the file).
 */
export const zipEntryNames = (bytes: Uint8Array): ReadonlyArray<string> | undefined => {
  if (!startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) && !startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) return undefined
  // The end-of-central-directory record is the last 22 bytes plus a comment of at most 65535.
  const lowest = Math.max(0, bytes.length - 22 - 65535)
  let end = -1
  for (let at = bytes.length - 22; at >= lowest; at--) {
    if (startsWith(bytes, [0x50, 0x4b, 0x05, 0x06], at)) {
      end = at
      break
    }
  }
  if (end < 0) return undefined
  const entries = u16(bytes, end + 10)
  const directorySize = u32(bytes, end + 12)
  const directoryStart = u32(bytes, end + 16)
  if (directoryStart + directorySize > end) return undefined
  const names: Array<string> = []
  const decoder = new TextDecoder("utf-8")
  let at = directoryStart
  for (let i = 0; i < entries; i++) {
    if (at + 46 > end || !startsWith(bytes, [0x50, 0x4b, 0x01, 0x02], at)) return undefined
    const nameLength = u16(bytes, at + 28)
    const extraLength = u16(bytes, at + 30)
    const commentLength = u16(bytes, at + 32)
    if (at + 46 + nameLength > end) return undefined
    names.push(decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)))
    at += 46 + nameLength + extraLength + commentLength
  }
  return names
}

const officeDocument = (names: ReadonlyArray<string>): FileMimeType | undefined => {
  if (!names.includes("[Content_Types].xml")) return undefined
  if (names.some((name) => name.startsWith("word/"))) {
    return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
  }
  if (names.some((name) => name.startsWith("xl/"))) {
    return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
  }
  return undefined
}

/** The binary format the bytes carry by their signature, or undefined (text, or unknown). */
export const sniffBinary = (bytes: Uint8Array): FileMimeType | undefined => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp"
  if (isAvif(bytes)) return "image/avif"
  if (startsWith(bytes, ascii("%PDF-"))) return "application/pdf"
  const names = zipEntryNames(bytes)
  if (names !== undefined) return officeDocument(names) ?? "application/zip"
  return undefined
}

const textTypes: ReadonlyArray<FileMimeType> = ["text/plain", "text/csv", "application/json"]

/** The text of bytes that are valid UTF-8 without NUL (a byte-order mark is dropped), or undefined. */
const utf8Text = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    return undefined
  }
}

const isJson = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * Whether the bytes are of the declared format; when not, why (for the error message). A zip
 * that is a Word or Excel document is still a zip; the reverse does not hold.
 */
export const checkContent = (declared: FileMimeType, bytes: Uint8Array): { readonly ok: true } | { readonly ok: false; readonly reason: string } => {
  const binary = sniffBinary(bytes)
  if (textTypes.includes(declared)) {
    if (binary !== undefined) return { ok: false, reason: `the bytes are ${binary}, not ${declared}` }
    const text = utf8Text(bytes)
    if (text === undefined) return { ok: false, reason: `${declared} must be UTF-8 text without NUL bytes` }
    if (declared === "application/json" && !isJson(text)) return { ok: false, reason: "the bytes are not valid JSON" }
    return { ok: true }
  }
  if (binary === declared) return { ok: true }
  if (declared === "application/zip" && binary !== undefined && binary.startsWith("application/vnd.openxmlformats")) return { ok: true }
  return {
    ok: false,
    reason: binary === undefined
      ? `the bytes do not have the signature of ${declared}`
      : `the bytes are ${binary}, not ${declared}`
  }
}
