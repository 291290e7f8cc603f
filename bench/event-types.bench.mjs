// GET /api/v1/event-types through the whole host vs a bare node:http server answering the same
// bytes with the same headers (replayed from the host's answer; node adds Date and Connection on
// both sides). Same connections, same pipelining, loopback. Order: baseline, host, baseline; the
// baseline row is the mean of both. Headline: server CPU per request, baseline/host (bench/README.md, "Host overhead").
// The host runs on a Postgres database made for the run (as in production; the read does not touch
// it), so that no embedded database opens in the background of the measurement.

import { benchDatabase } from "./lib/database.mjs"
import { assertSameAnswer, replayableHeaders } from "./lib/responses.mjs"

export const name = "event-types"
export const description = "GET /api/v1/event-types: whole host vs bare node:http with the same bytes and headers"
export const pin = true

const PATH = "/api/v1/event-types"
const TARGET = 0.5

export const run = async (ctx) => {
  const { options, log } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)

  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })

  // The exact bytes and headers the host answers with, fetched once.
  const sample = await ctx.get(host.url + PATH)
  if (sample.status !== 200) {
    throw new Error(`host answered ${sample.status} to GET ${PATH}: ${sample.body.toString("utf8").slice(0, 500)}`)
  }
  const contentType = sample.headers["content-type"]
  const parsed = JSON.parse(sample.body.toString("utf8"))
  const typeCount = Array.isArray(parsed.types) ? parsed.types.length : "?"
  log(`  host answers ${sample.body.length} bytes, content-type ${contentType}, ${typeCount} types`)

  const baseline = await ctx.startBaseline({ body: sample.body, headers: replayableHeaders(sample) })
  assertSameAnswer(`GET ${PATH}`, sample, await ctx.get(baseline.url + PATH), log)

  const rows = []
  rows.push(await ctx.measure({ label: "baseline #1", url: baseline.url + PATH, server: baseline }))
  rows.push(await ctx.measure({ label: "host", url: host.url + PATH, server: host }))
  rows.push(await ctx.measure({ label: "baseline #2", url: baseline.url + PATH, server: baseline }))

  const [b1, h, b2] = rows
  const base = ctx.meanRow("baseline (mean)", [b1, b2])
  const ratio = h.requestsPerSecond / base.requestsPerSecond
  const p99Ratio = h.latencyP99 / base.latencyP99

  log("")
  ctx.printTable([b1, b2, base, h])
  log("")
  log(`  ratio host/baseline req/s: ${ratio.toFixed(2)} (informational: the baseline may be client-bound)`)
  log(`  p99 latency host/baseline: ${p99Ratio.toFixed(2)}×`)
  const drift = Math.abs(b1.serverCpuPerRequest - b2.serverCpuPerRequest) / base.serverCpuPerRequest
  if (drift > 0.1) log(`  note: the two baseline runs differ by ${(drift * 100).toFixed(0)}% in CPU per request: the machine is noisy, rerun`)
  if (base.loadgenCpu !== undefined && base.loadgenCpu > 0.9) {
    log(
      `  note: the load generator used ${Math.round(base.loadgenCpu * 100)}% of a core during the baseline runs, so the` +
        ` baseline is client-bound and its req/s understates the bare server; compare CPU per request.`
    )
  }
  if (h.non2xx > 0 || h.errors > 0) log(`  warning: the host had ${h.non2xx} non-2xx answers and ${h.errors} errors during the run`)
  const cpuRatio = ctx.cpuVerdict({ host: h, baseline: base, target: TARGET })

  return {
    path: PATH,
    responseBytes: sample.body.length,
    contentType,
    baseline: base,
    baselineRuns: [b1, b2],
    host: h,
    ratio: cpuRatio,
    requestsPerSecondRatio: ratio,
    p99Ratio,
    target: TARGET,
    pass: cpuRatio !== undefined && cpuRatio >= TARGET
  }
}
