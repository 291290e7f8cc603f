// getPublication throughput: GET /api/v1/publications/{uuid} through the whole host (Postgres, 10k
// demo publications, a random uuid of the set per request) against a bare node:http + pg server
// doing the same primary-key read (the same SQL: the publication joined with its owner, the same
// JSON). Order: baseline, host, baseline; the baseline row in the ratio is the mean of both.
import { demoDatabase, sorted, startBarePgServer } from "./lib/demo-database.mjs"
import { get } from "./lib/processes.mjs"

export const name = "get-publication"
export const description = "GET /api/v1/publications/{uuid} at 10k publications: host vs bare node:http + pg, same SQL"

const PUBLICATIONS = 10_000
const TARGET = 0.5

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
  for (const uuid of uuids.slice(0, 20)) {
    const [a, b] = await Promise.all([get(`${host.url}/api/v1/publications/${uuid}`), get(`${baseline.url}/api/v1/publications/${uuid}`)])
    if (a.status !== 200 || b.status !== 200) throw new Error(`GET ${uuid}: host ${a.status}, baseline ${b.status}: ${a.body.toString().slice(0, 300)}`)
    if (JSON.stringify(sorted(JSON.parse(a.body))) !== JSON.stringify(sorted(JSON.parse(b.body)))) {
      throw new Error(`host and baseline answer differently for ${uuid}:\n${a.body.toString().slice(0, 600)}\n${b.body.toString().slice(0, 600)}`)
    }
    bytes += a.body.length
  }
  log(`  ${uuids.length} uuids; host and baseline answer the same JSON (mean ${Math.round(bytes / 20)} bytes)`)

  const requests = randomPublications(uuids)
  const measured = []
  measured.push(await ctx.measure({ label: "baseline #1", url: baseline.url, server: baseline, requests }))
  measured.push(await ctx.measure({ label: "host", url: host.url, server: host, requests }))
  measured.push(await ctx.measure({ label: "baseline #2", url: baseline.url, server: baseline, requests }))
  const [b1, h, b2] = measured
  const base = ctx.meanRow("baseline (mean)", [b1, b2])
  const ratio = h.requestsPerSecond / base.requestsPerSecond

  log("")
  ctx.printTable([b1, b2, base, h])
  log("")
  log(`  ratio host/baseline req/s: ${ratio.toFixed(2)}  ${ratio >= TARGET ? "PASS" : "BELOW TARGET"} (target ≥ ${TARGET})`)
  const drift = Math.abs(b1.requestsPerSecond - b2.requestsPerSecond) / base.requestsPerSecond
  if (drift > 0.1) log(`  note: the two baseline runs differ by ${(drift * 100).toFixed(0)}%: the machine is noisy, rerun`)
  let cpuRatio
  if (h.serverCpu !== undefined && base.serverCpu !== undefined) {
    const hostUs = (h.serverCpu / h.requestsPerSecond) * 1e6
    const baseUs = (base.serverCpu / base.requestsPerSecond) * 1e6
    cpuRatio = baseUs / hostUs
    log(`  server CPU per request: host ${hostUs.toFixed(1)} µs, baseline ${baseUs.toFixed(1)} µs (baseline/host ${cpuRatio.toFixed(2)})`)
  }
  if (h.non2xx > 0 || h.errors > 0) log(`  warning: the host had ${h.non2xx} non-2xx answers and ${h.errors} errors during the run`)
  return { publications: uuids.length, seedSeconds: database.seedSeconds, baseline: base, baselineRuns: [b1, b2], host: h, ratio, cpuRatio, target: TARGET, pass: ratio >= TARGET }
}
