// GET /api/v1/event-types through the whole host vs a bare node:http server answering the
// same bytes with the same content-type. Same connections, same pipelining, loopback.
// Order: baseline, host, baseline; the baseline row in the ratio is the mean of both.

export const name = "event-types"
export const description = "GET /api/v1/event-types: whole host vs bare node:http with the same bytes"

const PATH = "/api/v1/event-types"
const TARGET = 0.5

export const run = async (ctx) => {
  const { options, log } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)

  const host = await ctx.startHost()

  // The exact bytes the host answers with, fetched once.
  const sample = await ctx.get(host.url + PATH)
  if (sample.status !== 200) {
    throw new Error(`host answered ${sample.status} to GET ${PATH}: ${sample.body.toString("utf8").slice(0, 500)}`)
  }
  const contentType = sample.headers["content-type"]
  const parsed = JSON.parse(sample.body.toString("utf8"))
  const typeCount = Array.isArray(parsed.types) ? parsed.types.length : "?"
  log(`  host answers ${sample.body.length} bytes, content-type ${contentType}, ${typeCount} types`)

  const baseline = await ctx.startBaseline({ body: sample.body, contentType })
  const check = await ctx.get(baseline.url + PATH)
  if (!check.body.equals(sample.body) || check.headers["content-type"] !== contentType) {
    throw new Error("baseline does not answer the host's bytes")
  }
  log(`  host headers:     ${headerNames(sample)}`)
  log(`  baseline headers: ${headerNames(check)}`)

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
  log(`  ratio host/baseline req/s: ${ratio.toFixed(2)}  ${ratio >= TARGET ? "PASS" : "BELOW TARGET"} (target ≥ ${TARGET})`)
  log(`  p99 latency host/baseline: ${p99Ratio.toFixed(2)}×`)
  const drift = Math.abs(b1.requestsPerSecond - b2.requestsPerSecond) / base.requestsPerSecond
  if (drift > 0.1) log(`  note: the two baseline runs differ by ${(drift * 100).toFixed(0)}%: the machine is noisy, rerun`)
  if (base.loadgenCpu !== undefined && base.loadgenCpu > 0.9) {
    log(
      `  note: the load generator used ${Math.round(base.loadgenCpu * 100)}% of a core during the baseline runs, so the` +
        ` baseline is partly client-bound; the bare server could go faster and the ratio is an upper bound.`
    )
  }
  let cpuRatio
  if (h.serverCpu !== undefined && base.serverCpu !== undefined) {
    const hostUs = (h.serverCpu / h.requestsPerSecond) * 1e6
    const baseUs = (base.serverCpu / base.requestsPerSecond) * 1e6
    cpuRatio = baseUs / hostUs
    log(
      `  server CPU per request: host ${hostUs.toFixed(1)} µs, baseline ${baseUs.toFixed(1)} µs` +
        ` (baseline/host ${cpuRatio.toFixed(2)}: the ratio without the load generator's limits)`
    )
  }
  if (h.non2xx > 0 || h.errors > 0) log(`  warning: the host had ${h.non2xx} non-2xx answers and ${h.errors} errors during the run`)

  return {
    path: PATH,
    responseBytes: sample.body.length,
    contentType,
    baseline: base,
    baselineRuns: [b1, b2],
    host: h,
    ratio,
    p99Ratio,
    cpuRatio,
    target: TARGET,
    pass: ratio >= TARGET
  }
}

const headerNames = (res) => {
  const names = []
  for (let i = 0; i < res.rawHeaders.length; i += 2) names.push(res.rawHeaders[i].toLowerCase())
  return names.join(", ")
}
