/**
 * The shape of a JSON body counted from its bytes as they arrive, before `JSON.parse` sees them:
 * one linear pass (strings are skipped with `Buffer.indexOf`), so a body over its operation's
 * structural limits is refused after a few microseconds per kilobyte instead of being parsed and
 * walked by every later step. `JSON.parse` of an object of 500,000 members, then the input check
 * and the decoders (each walks every member), held the event loop for seconds.
 *
 * It counts and does not validate: a malformed body is left to `JSON.parse`, which runs only on a
 * body within the limits.
 */
export interface JsonShapeLimits {
  /** Nesting of objects and arrays (the root is level 1). */
  readonly maxDepth: number
  /** Members of any one object. */
  readonly maxMembers: number
  /** Elements of any one array. */
  readonly maxItems: number
  /** Values of the whole body: containers, members and elements. */
  readonly maxValues: number
  /** Bytes of any one string or property name as sent (escapes included), between its quotes. */
  readonly maxStringBytes: number
}

const quote = 0x22
const backslash = 0x5c
const openObject = 0x7b
const closeObject = 0x7d
const openArray = 0x5b
const closeArray = 0x5d
const comma = 0x2c
const colon = 0x3a
const space = 0x20
const tab = 0x09
const lineFeed = 0x0a
const carriageReturn = 0x0d

const objectKind = 0
const arrayKind = 1

/** Counts one body fed chunk by chunk; `feed` answers the first limit passed (and keeps answering it). */
export class JsonShapeScanner {
  private readonly kinds: Uint8Array
  private readonly counts: Float64Array
  private depth = 0
  /** An element (array item or object member) may begin: after `[`, `{` or `,`. */
  private expectElement = false
  private inString = false
  /** The previous byte of the string was an escaping backslash. */
  private escaped = false
  private stringBytes = 0
  private values = 0
  private problem: string | undefined

  constructor(private readonly limits: JsonShapeLimits) {
    this.kinds = new Uint8Array(limits.maxDepth + 2)
    this.counts = new Float64Array(limits.maxDepth + 2)
  }

  /** The first limit the bytes so far pass, or `undefined`. */
  feed(chunk: Uint8Array): string | undefined {
    if (this.problem !== undefined) return this.problem
    const n = chunk.length
    let i = 0
    // Where the next quote and backslash of this chunk are (n: none), found lazily, so the search is linear.
    let nextQuote = -1
    let nextBackslash = -1
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false
          this.stringBytes++
          i++
          continue
        }
        if (nextQuote < i) nextQuote = indexIn(chunk, quote, i)
        if (nextBackslash < i) nextBackslash = indexIn(chunk, backslash, i)
        const stop = nextQuote < nextBackslash ? nextQuote : nextBackslash
        this.stringBytes += stop - i
        i = stop
        if (this.stringBytes > this.limits.maxStringBytes) {
          return this.refuse(`a string is longer than ${this.limits.maxStringBytes} bytes`)
        }
        if (i >= n) break
        if (chunk[i] === backslash) {
          this.escaped = true
          this.stringBytes++
        } else {
          this.inString = false
        }
        i++
        continue
      }
      const byte = chunk[i]!
      i++
      switch (byte) {
        case space:
        case tab:
        case lineFeed:
        case carriageReturn:
        case colon:
          break
        case comma:
          if (this.depth > 0) this.expectElement = true
          break
        case closeObject:
        case closeArray:
          if (this.depth > 0) this.depth--
          this.expectElement = false
          break
        case openObject:
        case openArray: {
          const refused = this.startValue()
          if (refused !== undefined) return refused
          if (this.depth >= this.limits.maxDepth) return this.refuse(`nested deeper than ${this.limits.maxDepth} levels`)
          this.depth++
          this.kinds[this.depth] = byte === openObject ? objectKind : arrayKind
          this.counts[this.depth] = 0
          this.expectElement = true
          break
        }
        case quote: {
          const refused = this.startValue()
          if (refused !== undefined) return refused
          this.inString = true
          this.stringBytes = 0
          break
        }
        default: {
          // The first byte of a number, `true`, `false` or `null` (or of something JSON.parse refuses).
          if (this.expectElement) {
            const refused = this.startValue()
            if (refused !== undefined) return refused
          }
        }
      }
    }
    return undefined
  }

  /** A value, property name or container begins: counted in the body and, as an element, in its container. */
  private startValue(): string | undefined {
    if (++this.values > this.limits.maxValues) return this.refuse(`more than ${this.limits.maxValues} values`)
    if (this.expectElement && this.depth > 0) {
      this.expectElement = false
      const count = ++this.counts[this.depth]!
      if (this.kinds[this.depth] === objectKind) {
        if (count > this.limits.maxMembers) return this.refuse(`an object has more than ${this.limits.maxMembers} members`)
      } else if (count > this.limits.maxItems) {
        return this.refuse(`an array has more than ${this.limits.maxItems} items`)
      }
    }
    return undefined
  }

  private refuse(problem: string): string {
    this.problem = problem
    return problem
  }
}

const indexIn = (chunk: Uint8Array, byte: number, from: number): number => {
  const at = chunk.indexOf(byte, from)
  return at < 0 ? chunk.length : at
}

/** The first limit `bytes` pass, or `undefined` (the whole body at once). */
export const jsonShapeProblem = (bytes: Uint8Array, limits: JsonShapeLimits): string | undefined =>
  new JsonShapeScanner(limits).feed(bytes)
