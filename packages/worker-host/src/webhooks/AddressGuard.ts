import { addressProblem, ipBytes } from "@birzha/domain/internal"
import { lookup } from "node:dns/promises"

/** Addresses of a host name, as `dns.lookup` answers (the system resolver: hosts file, then DNS). */
export type Resolver = (host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true })

/** Where to connect: one checked address. The connection is pinned to it, so DNS cannot change it afterwards. */
export type Destination =
  | { readonly _tag: "Allowed"; readonly address: string; readonly family: 4 | 6 }
  | { readonly _tag: "Refused"; readonly reason: string }

const cacheTtlMs = 30_000
const cacheMax = 1_000

/**
 * The SSRF guard: the receiver's host is resolved here and every address it has must
 * be public (refusing private, loopback, link-local, unique-local, multicast, CGNAT and the other
 * special ranges of `addressProblem`); one refused address refuses the host, so a name cannot mix
 * a public and an internal answer. Answers are cached 30 s per host.
 */
export const makeAddressGuard = (options: { readonly allowLoopback: boolean; readonly resolver?: Resolver }) => {
  const resolver = options.resolver ?? systemResolver
  const cache = new Map<string, { readonly until: number; readonly destination: Destination }>()
  const check = async (host: string): Promise<Destination> => {
    const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
    if (ipBytes(bare) !== undefined) {
      const problem = addressProblem(bare, { allowLoopback: options.allowLoopback })
      return problem === undefined
        ? { _tag: "Allowed", address: bare, family: bare.includes(":") ? 6 : 4 }
        : { _tag: "Refused", reason: problem }
    }
    let addresses: ReadonlyArray<{ readonly address: string; readonly family: number }>
    try {
      addresses = await resolver(bare)
    } catch (error) {
      return { _tag: "Refused", reason: `${bare} does not resolve (${error instanceof Error ? error.message : String(error)})` }
    }
    if (addresses.length === 0) return { _tag: "Refused", reason: `${bare} has no address` }
    for (const { address } of addresses) {
      const problem = addressProblem(address, { allowLoopback: options.allowLoopback })
      if (problem !== undefined) return { _tag: "Refused", reason: `${bare} resolves to ${problem}` }
    }
    const first = addresses[0]!
    return { _tag: "Allowed", address: first.address, family: first.family === 6 ? 6 : 4 }
  }
  return {
    destinationOf: async (host: string, now: number): Promise<Destination> => {
      const cached = cache.get(host)
      if (cached !== undefined && cached.until > now) return cached.destination
      const destination = await check(host)
      if (cache.size >= cacheMax) cache.clear()
      cache.set(host, { until: now + cacheTtlMs, destination })
      return destination
    }
  }
}

export type AddressGuard = ReturnType<typeof makeAddressGuard>
