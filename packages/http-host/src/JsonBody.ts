/**
 * `JSON.stringify(value)` as UTF-8 bytes, built from one piece per element of the value's arrays
 * (its own, or its properties'): a page of large records never becomes one large string. An
 * answer with no such array is the string itself. A large
 * string costs far more than its bytes: V8 builds `JSON.stringify`'s result in parts, and the
 * first UTF-8 pass (`Buffer.byteLength`, the socket write) flattens it into a new object in the
 * large-object space, freshly mapped memory on every answer. A search page of 21 publications in
 * Cyrillic (100 KB) took 2-3 ms of the host's CPU that way, against 0.5 ms in pieces
 * (bench/README.md, "search").
 */
const comma = Buffer.from(",")
const openArray = Buffer.from("[")
const closeArray = Buffer.from("]")

// JSON.stringify leaves out object properties it cannot write and writes them as null in arrays.
const skipped = (value: unknown) => value === undefined || typeof value === "function" || typeof value === "symbol"

// Only an array of several elements is worth pieces; any other answer stays one JSON.stringify,
// returned as the string (the socket encodes a small string as fast as a copy into a Buffer).
const inPieces = (value: unknown): value is ReadonlyArray<unknown> => Array.isArray(value) && value.length > 1

const pushArray = (parts: Array<Buffer>, array: ReadonlyArray<unknown>) => {
  parts.push(openArray)
  for (let i = 0; i < array.length; i++) {
    if (i > 0) parts.push(comma)
    parts.push(Buffer.from(JSON.stringify(array[i]) ?? "null"))
  }
  parts.push(closeArray)
}

export const jsonBody = (value: unknown): Buffer | string => {
  if (inPieces(value)) {
    const parts: Array<Buffer> = []
    pushArray(parts, value)
    return Buffer.concat(parts)
  }
  // Scalars, small arrays, objects that write themselves (toJSON) and objects with no array worth
  // pieces: the text of one JSON.stringify.
  if (
    typeof value !== "object" || value === null || Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === "function" ||
    !Object.values(value).some(inPieces)
  ) {
    return JSON.stringify(value) ?? ""
  }
  const record = value as Record<string, unknown>
  const parts: Array<Buffer> = []
  // The properties since the last array, written as one piece.
  let pending = "{"
  let first = true
  for (const key of Object.keys(record)) {
    const property = record[key]
    if (skipped(property)) continue
    const name = `${first ? "" : ","}${JSON.stringify(key)}:`
    first = false
    if (inPieces(property)) {
      parts.push(Buffer.from(pending + name))
      pending = ""
      pushArray(parts, property)
    } else {
      pending += name + JSON.stringify(property)
    }
  }
  parts.push(Buffer.from(`${pending}}`))
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
}
