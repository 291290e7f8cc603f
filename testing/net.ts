import { createServer } from "node:net"

/** A loopback port that was free a moment ago: nothing listens there (an unreachable service), or the test may bind it. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * The connection timeouts of a host a test starts (in process through `startTestService`, or as a
 * `birzha serve` process): two minutes for the first byte, the headers and the whole request, and a
 * minute for an idle kept-alive connection, where the defaults are 5, 10, 30 and 5 s. A test's
 * clients and hosts share the machine with the suite's other files (and with a second copy of the
 * suite, when CI's machine runs two): a client starved of CPU between connecting and writing its
 * request had its connection closed as silent (a reset), a host's timeout check that ran before its
 * held-up loop read a waiting request answered 408, and a client whose own 4 s keep-alive timer ran
 * late reused a connection the host was closing (`fetch failed`). The tests of those timeouts pass
 * limits of their own. A host still closes idle connections at once when it stops (HttpHost.ts).
 */
export const patientConnections = { firstByteTimeoutMs: 120_000, headersTimeoutMs: 120_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 60_000 } as const

/** `patientConnections` as the environment of a `birzha serve` process. */
export const patientHostEnv: Readonly<Record<string, string>> = {
  BIRZHA_FIRST_BYTE_TIMEOUT_MS: String(patientConnections.firstByteTimeoutMs),
  BIRZHA_HEADERS_TIMEOUT_MS: String(patientConnections.headersTimeoutMs),
  BIRZHA_REQUEST_TIMEOUT_MS: String(patientConnections.requestTimeoutMs),
  BIRZHA_KEEP_ALIVE_TIMEOUT_MS: String(patientConnections.keepAliveTimeoutMs)
}
