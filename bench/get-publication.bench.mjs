// getPublication throughput: GET /api/v1/publications/{uuid} through the whole host (Postgres, 10k
// demo publications, a random uuid of the set per request) against a bare node:http + pg server
// doing the same primary-key read (the same SQL: the publication joined with its owner, the same
// JSON). Order: baseline, host, baseline; the baseline row in the ratio is the mean of both.
// Headline: server CPU per request, baseline/host (bench/README.md, "Host overhead").
import { databaseBackends } from "./lib/database.mjs"
import { demoDatabase, sorted, startBarePgServer } from "./lib/demo-database.mjs"
import { micros } from "./lib/load.mjs"
import { get } from "./lib/processes.mjs"
import { headerNames } from "./lib/responses.mjs"

export const name = "get-publication"
export const description = "GET /api/v1/publications/{uuid} at 10k publications: host vs bare node:http + pg, same SQL"
export const pin = true

const PUBLICATIONS = 10_000
const TARGET = 0.7

/** An autocannon request list whose every request reads a random uuid of `uuids`. */
const randomPublications = (uuids) => [
  { method: "GET", setupRequest: (req) => ({ ...req, path: `/api/v1/publications/${uuids[Math.floor(Math.random() * uuids.length)]}` }) }
]

export const run = async (ctx) => {
  const { log, options } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)
  const database = await demoDatabase(ctx, { publications: PUBLICATIONS })
  const { rows } = await database.query("SELECT uuid::text AS uuid FROM publications WHERE demo")
  const uuids = rows.map((row) => row.uuid)

  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })
  const baseline = await startBarePgServer(ctx, database.url)

  // Same answer from both, for a few uuids (parsed: key order is the only allowed difference).
  let bytes = 0
  let headersSeen
  for (const uuid of uuids.slice(0, 20)) {
    const [a, b] = await Promise.all([get(`${host.url}/api/v1/publications/${uuid}`), get(`${baseline.url}/api/v1/publications/${uuid}`)])
    if (a.status !== 200 || b.status !== 200) throw new Error(`GET ${uuid}: host ${a.status}, baseline ${b.status}: ${a.body.toString().slice(0, 300)}`)
    if (JSON.stringify(sorted(JSON.parse(a.body))) !== JSON.stringify(sorted(JSON.parse(b.body)))) {
      throw new Error(`host and baseline answer differently for ${uuid}:\n${a.body.toString().slice(0, 600)}\n${b.body.toString().slice(0, 600)}`)
    }
    bytes += a.body.length
    headersSeen = [a, b]
  }
  log(`  ${uuids.length} uuids; host and baseline answer the same JSON (mean ${Math.round(bytes / 20)} bytes)`)
  log(`  host headers:     ${headerNames(headersSeen[0])}`)
  log(`  baseline headers: ${headerNames(headersSeen[1])}`)

  const requests = randomPublications(uuids)
  const measured = []
  const backends = await databaseBackends(database.url)
  try {
    const databaseCpu = backends.cpuSeconds
    measured.push(await ctx.measure({ label: "baseline #1", url: baseline.url, server: baseline, requests, databaseCpu }))
    measured.push(await ctx.measure({ label: "host", url: host.url, server: host, requests, databaseCpu }))
    measured.push(await ctx.measure({ label: "baseline #2", url: baseline.url, server: baseline, requests, databaseCpu }))
  } finally {
    await backends.end()
  }
  const [b1, h, b2] = measured
  const base = ctx.meanRow("baseline (mean)", [b1, b2])
  const ratio = h.requestsPerSecond / base.requestsPerSecond

  log("")
  ctx.printTable([b1, b2, base, h])
  log("")
  log(`  ratio host/baseline req/s: ${ratio.toFixed(2)} (informational)`)
  log(`  Postgres CPU per request (informational): host ${micros(h.databaseCpuPerRequest)}, baseline ${micros(base.databaseCpuPerRequest)}`)
  const drift = Math.abs(b1.serverCpuPerRequest - b2.serverCpuPerRequest) / base.serverCpuPerRequest
  if (drift > 0.1) log(`  note: the two baseline runs differ by ${(drift * 100).toFixed(0)}% in CPU per request: the machine is noisy, rerun`)
  if (h.non2xx > 0 || h.errors > 0) log(`  warning: the host had ${h.non2xx} non-2xx answers and ${h.errors} errors during the run`)
  const cpuRatio = ctx.cpuVerdict({ host: h, baseline: base, target: TARGET })
  return {
    publications: uuids.length,
    seedSeconds: database.seedSeconds,
    baseline: base,
    baselineRuns: [b1, b2],
    host: h,
    ratio: cpuRatio,
    requestsPerSecondRatio: ratio,
    target: TARGET,
    pass: cpuRatio !== undefined && cpuRatio >= TARGET
  }
}
