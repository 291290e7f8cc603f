// A session-authenticated read: GET /api/v1/auth/session with a session cookie through the whole
// host against bench/lib/bare-session-server.mjs, a bare node:http + pg server doing the same work
// (the cookie's keyed hash under the same server secret, the same session/account/profile lookup,
// the same JSON bytes and headers). Both on one Postgres database made for the run (on
// BENCH_POSTGRES_URL, default the local server), signed in for real: start, the code from the
// development mailbox table, verify. Order: baseline, host, baseline; the baseline row is the mean
// of both. Headline: server CPU per request, baseline/host (bench/README.md, "Host overhead"). GET /api/healthz through
// the host is measured last, for information only (the old comparison).
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { benchDatabase, databaseBackends, signInOnHost } from "./lib/database.mjs"
import { micros } from "./lib/load.mjs"
import { freePort, get, startProcess } from "./lib/processes.mjs"
import { assertSameAnswer, replayableHeaders } from "./lib/responses.mjs"

export const name = "auth-session"
export const description = "GET /api/v1/auth/session (session cookie): host vs bare node:http + pg doing the same keyed-hash lookup"
export const pin = true

const TARGET = 0.6
const ORIGIN = "http://localhost:8080"
const PATH = "/api/v1/auth/session"

const libDir = join(dirname(fileURLToPath(import.meta.url)), "lib")

export const run = async (ctx) => {
  const { log, options } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)

  // One server secret for both, so that both compute the same keyed hash of the cookie.
  const secret = randomBytes(32).toString("base64url")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN, BIRZHA_SECRET: secret } })
  const { cookie, email } = await signInOnHost(host.url, database.url, ORIGIN)
  const cookieName = cookie.slice(0, cookie.indexOf("="))
  const headers = { cookie }
  const sample = await get(host.url + PATH, { headers })
  if (sample.status !== 200) throw new Error(`session answered ${sample.status}: ${sample.body.toString("utf8").slice(0, 300)}`)
  log(`  signed in as ${email} (cookie ${cookieName})`)

  const port = await freePort()
  const headersFile = join(ctx.workDir, `session-headers-${port}.json`)
  writeFileSync(headersFile, JSON.stringify(replayableHeaders(sample)))
  const baseline = await startProcess({
    label: "bare-session",
    entry: join(libDir, "bare-session-server.mjs"),
    args: [String(port), "127.0.0.1", database.url, cookieName, headersFile],
    env: { BENCH_SERVER_SECRET: secret },
    nodeOptions: ctx.profileNodeOptions,
    port,
    readyPath: "/__ready",
    readyTimeoutMs: 10_000,
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => baseline.stop())
  baseline.profiled = ctx.profileNodeOptions.length > 0
  const check = await get(baseline.url + PATH, { headers })
  if (check.status !== 200) {
    throw new Error(
      `the baseline answered ${check.status} to the host's session cookie: does the host still take its server secret from BIRZHA_SECRET? ${check.body.toString("utf8").slice(0, 300)}`
    )
  }
  assertSameAnswer(`GET ${PATH}`, sample, check, log)

  // Postgres CPU per request, for information: the lookup costs the database the same for both.
  const backends = await databaseBackends(database.url)
  const rows = []
  try {
    const databaseCpu = backends.cpuSeconds
    rows.push(await ctx.measure({ label: "baseline #1", url: baseline.url + PATH, server: baseline, headers, databaseCpu }))
    rows.push(await ctx.measure({ label: "host", url: host.url + PATH, server: host, headers, databaseCpu }))
    rows.push(await ctx.measure({ label: "baseline #2", url: baseline.url + PATH, server: baseline, headers, databaseCpu }))
    rows.push(await ctx.measure({ label: "host healthz", url: host.url + "/api/healthz", server: host, databaseCpu }))
  } finally {
    await backends.end()
  }
  const [b1, h, b2, healthz] = rows
  const base = ctx.meanRow("baseline (mean)", [b1, b2])
  log("")
  ctx.printTable([b1, b2, base, h, healthz])
  log("")
  log(`  ratio host/baseline req/s: ${(h.requestsPerSecond / base.requestsPerSecond).toFixed(2)} (informational)`)
  log(`  Postgres CPU per request (informational): host ${micros(h.databaseCpuPerRequest)}, baseline ${micros(base.databaseCpuPerRequest)}`)
  log(`  host healthz (informational, not in the ratio): ${micros(healthz.serverCpuPerRequest)} per request`)
  const drift = Math.abs(b1.serverCpuPerRequest - b2.serverCpuPerRequest) / base.serverCpuPerRequest
  if (drift > 0.1) log(`  note: the two baseline runs differ by ${(drift * 100).toFixed(0)}% in CPU per request: the machine is noisy, rerun`)
  if (h.non2xx > 0 || h.errors > 0) log(`  warning: the host had ${h.non2xx} non-2xx answers and ${h.errors} errors during the run`)
  const cpuRatio = ctx.cpuVerdict({ host: h, baseline: base, target: TARGET })
  return {
    path: PATH,
    responseBytes: sample.body.length,
    baseline: base,
    baselineRuns: [b1, b2],
    host: h,
    healthz,
    ratio: cpuRatio,
    requestsPerSecondRatio: h.requestsPerSecond / base.requestsPerSecond,
    target: TARGET,
    pass: cpuRatio !== undefined && cpuRatio >= TARGET
  }
}
