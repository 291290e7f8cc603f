/**
 * Which IP addresses a webhook may be sent to (SSRF guard): only public unicast
 * addresses. Pure code over address bytes, so the API (literal addresses in a URL) and the worker
 * (every address DNS returns) apply the same rule.
 */

type Bytes = ReadonlyArray<number>

interface Range {
  readonly prefix: Bytes
  readonly bits: number
  readonly why: string
}

const v4 = (text: string, bits: number, why: string): Range => ({ prefix: parseIpv4(text)!, bits, why })
const v6 = (text: string, bits: number, why: string): Range => ({ prefix: parseIpv6(text)!, bits, why })

const loopbackV4 = v4("127.0.0.0", 8, "loopback")
const loopbackV6 = v6("::1", 128, "loopback")

const refusedV4: ReadonlyArray<Range> = [
  v4("0.0.0.0", 8, "\"this network\""),
  v4("10.0.0.0", 8, "private"),
  v4("100.64.0.0", 10, "shared address space (CGNAT)"),
  loopbackV4,
  v4("169.254.0.0", 16, "link-local"),
  v4("172.16.0.0", 12, "private"),
  v4("192.0.0.0", 24, "IETF protocol assignments"),
  v4("192.0.2.0", 24, "documentation"),
  v4("192.88.99.0", 24, "6to4 relay anycast"),
  v4("192.168.0.0", 16, "private"),
  v4("198.18.0.0", 15, "benchmarking"),
  v4("198.51.100.0", 24, "documentation"),
  v4("203.0.113.0", 24, "documentation"),
  v4("224.0.0.0", 4, "multicast"),
  v4("240.0.0.0", 4, "reserved or broadcast")
]

const refusedV6: ReadonlyArray<Range> = [
  v6("::", 128, "unspecified"),
  loopbackV6,
  v6("::", 96, "IPv4-compatible (deprecated)"),
  v6("64:ff9b:1::", 48, "local-use NAT64"),
  v6("100::", 64, "discard-only"),
  v6("2001::", 23, "IETF protocol assignments (Teredo and others)"),
  v6("2001:db8::", 32, "documentation"),
  v6("2002::", 16, "6to4"),
  v6("3fff::", 20, "documentation"),
  v6("fc00::", 7, "unique-local"),
  v6("fe80::", 10, "link-local"),
  v6("fec0::", 10, "site-local (deprecated)"),
  v6("ff00::", 8, "multicast")
]

// IPv6 forms that carry an IPv4 address in their last 4 bytes, which is what gets reached.
const embeddingV4: ReadonlyArray<Range> = [
  v6("::ffff:0:0", 96, "IPv4-mapped"),
  v6("64:ff9b::", 96, "NAT64")
]

const within = (address: Bytes, range: Range): boolean => {
  if (address.length !== range.prefix.length) return false
  let bits = range.bits
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if ((address[i]! & mask) !== (range.prefix[i]! & mask)) return false
  }
  return true
}

/** `a.b.c.d` with four decimal parts 0–255 (no leading zeros beyond "0"), or undefined. */
export function parseIpv4(text: string): Bytes | undefined {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const bytes: Array<number> = []
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined
    const n = Number(part)
    if (n > 255) return undefined
    bytes.push(n)
  }
  return bytes
}

/** An IPv6 address (`::` compression and a trailing dotted IPv4 allowed, no zone), as 16 bytes, or undefined. */
export function parseIpv6(text: string): Bytes | undefined {
  if (text.length === 0 || text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return undefined
  let head = text
  let tail: Array<number> = []
  const lastColon = text.lastIndexOf(":")
  if (text.includes(".")) {
    const four = parseIpv4(text.slice(lastColon + 1))
    if (four === undefined) return undefined
    tail = [(four[0]! << 8) | four[1]!, (four[2]! << 8) | four[3]!]
    head = text.slice(0, lastColon + 1)
    // "::1.2.3.4" keeps its "::"; "a:b:c:d:e:f:1.2.3.4" leaves a trailing ":" to drop.
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1)
  }
  const halves = head.split("::")
  if (halves.length > 2) return undefined
  const groups = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const out: Array<number> = []
    for (const group of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined
      out.push(parseInt(group, 16))
    }
    return out
  }
  const left = groups(halves[0]!)
  const right = halves.length === 2 ? groups(halves[1]!) : []
  if (left === undefined || right === undefined) return undefined
  const explicit = left.length + right.length + tail.length
  let words: Array<number>
  if (halves.length === 2) {
    if (explicit > 7) return undefined
    words = [...left, ...Array<number>(8 - explicit).fill(0), ...right, ...tail]
  } else {
    if (explicit !== 8) return undefined
    words = [...left, ...tail]
  }
  return words.flatMap((word) => [word >> 8, word & 0xff])
}

/** Address bytes of an IP literal (IPv6 with or without brackets), or undefined for a host name. */
export const ipBytes = (host: string): Bytes | undefined => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return parseIpv4(bare) ?? (bare.includes(":") ? parseIpv6(bare) : undefined)
}

/**
 * Why the address must not receive webhooks, or undefined when it may. With `allowLoopback`
 * (`BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK`, tests and local development) loopback addresses pass;
 * every other non-public range stays refused.
 */
export const addressProblem = (address: string, options: { readonly allowLoopback: boolean }): string | undefined => {
  const bytes = ipBytes(address)
  if (bytes === undefined) return `${address} is not an IP address`
  const describe = (why: string) => `${address} is a ${why} address`
  if (bytes.length === 16) {
    for (const range of embeddingV4) {
      if (within(bytes, range)) {
        const embedded = bytes.slice(12).join(".")
        const inner = addressProblem(embedded, options)
        return inner === undefined ? undefined : `${address} (${range.why} ${embedded}): ${inner}`
      }
    }
    if (options.allowLoopback && within(bytes, loopbackV6)) return undefined
    const hit = refusedV6.find((range) => within(bytes, range))
    return hit === undefined ? undefined : describe(hit.why)
  }
  if (options.allowLoopback && within(bytes, loopbackV4)) return undefined
  const hit = refusedV4.find((range) => within(bytes, range))
  return hit === undefined ? undefined : describe(hit.why)
}

/** Whether the address is a loopback one (127.0.0.0/8, ::1, or IPv4-mapped loopback). */
export const isLoopbackAddress = (address: string): boolean => {
  const bytes = ipBytes(address)
  if (bytes === undefined) return false
  if (bytes.length === 4) return within(bytes, loopbackV4)
  if (within(bytes, embeddingV4[0]!)) return within(bytes.slice(12), loopbackV4)
  return within(bytes, loopbackV6)
}
