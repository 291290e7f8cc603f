// The load generator (autocannon, in the runner's process) and its accounting.
//
// On a small machine the load generator competes with the server for CPU, so every
// measurement also records how much CPU the runner (= autocannon) and the server used.
// A load generator near 100 % of one core means the number is client-bound: the server
// could do more than was measured.

import autocannon from "autocannon"
import { cpus } from "node:os"
import { watchMemory } from "./processes.mjs"

/**
 * One autocannon run; resolves with autocannon's result. With `latencies`, every 2xx response
 * time (fractional ms) is also recorded there: autocannon's own histogram stores whole
 * milliseconds, too coarse for loopback latencies well under 1 ms.
 */
const cannon = (opts, latencies) =>
  new Promise((resolveRun, reject) => {
    const instance = autocannon(opts, (error, result) => (error ? reject(error) : resolveRun(result)))
    if (latencies) {
      instance.on("response", (_client, statusCode, _bytes, responseTime) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime)
      })
    }
  })

/** A growable Float64Array of samples with exact percentiles. */
class Samples {
  constructor() {
    this.values = new Float64Array(1 << 20)
    this.length = 0
  }
  push(value) {
    if (this.length === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2)
      bigger.set(this.values)
      this.values = bigger
    }
    this.values[this.length++] = value
  }
  percentiles(ps) {
    const sorted = this.values.subarray(0, this.length).sort()
    return ps.map((p) => (this.length === 0 ? NaN : sorted[Math.min(this.length - 1, Math.ceil((p / 100) * this.length) - 1)]))
  }
}

/**
 * Warm-up (discarded), then a measured run against `url` with fixed concurrency.
 * `server` is a process handle (for its CPU use); `label` names the row. `databaseCpu`, if given,
 * is an async function returning the CPU seconds the database has used so far (for Postgres CPU
 * per request). The server's memory is watched over warm-up and measured run together: `rss` at
 * the start, `peakRss` the highest in between (bytes; bench/lib/processes.mjs watchMemory).
 */
export const measure = async ({ label, url, server, connections, pipelining, warmupSeconds, durationSeconds, log, headers, requests, databaseCpu }) => {
  // `requests`: autocannon's request list, e.g. a `setupRequest` choosing each request's path.
  const common = { url, connections, pipelining, timeout: 10, ...(headers ? { headers } : {}), ...(requests ? { requests } : {}) }
  const memory = server?.pid === undefined ? undefined : watchMemory(server.pid)
  if (warmupSeconds > 0) {
    log(`  ${label}: warm-up ${warmupSeconds} s`)
    await cannon({ ...common, duration: warmupSeconds })
  }
  log(`  ${label}: measuring ${durationSeconds} s`)
  const databaseCpu0 = databaseCpu ? await databaseCpu() : undefined
  const serverCpu0 = server?.cpuSeconds()
  const selfCpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  const latencies = new Samples()
  const result = await cannon({ ...common, duration: durationSeconds }, latencies)
  const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9
  const selfCpu = process.cpuUsage(selfCpu0)
  const serverCpu1 = server?.cpuSeconds()
  const { rss, peakRss } = memory?.stop() ?? {}
  const databaseCpu1 = databaseCpu ? await databaseCpu() : undefined

  const [p50, p95, p99, max] = latencies.percentiles([50, 95, 99, 100])
  const ok = result["2xx"]
  if (ok === 0) {
    throw new Error(`${label}: no 2xx responses (errors ${result.errors}, non-2xx ${result.non2xx}, status ${JSON.stringify(result.statusCodeStats)})`)
  }
  const serverCpuSeconds = serverCpu0 === undefined || serverCpu1 === undefined ? undefined : serverCpu1 - serverCpu0
  const databaseCpuSeconds = databaseCpu0 === undefined || databaseCpu1 === undefined ? undefined : databaseCpu1 - databaseCpu0
  // Per answered request, over the same measured window as the CPU reading.
  const answered = ok + result.non2xx
  return {
    label,
    url,
    // The measured run on the monotonic clock in µs: the clock of V8's CPU profiles (for profile-summary --between).
    windowMicros: [Number(t0 / 1000n), Number((t0 + BigInt(Math.round(wallSeconds * 1e9))) / 1000n)],
    requestsPerSecond: ok / result.duration,
    requestsPerSecondMean: result.requests.average,
    latencyP50: p50,
    latencyP95: p95,
    latencyP99: p99,
    latencyMax: max,
    total2xx: ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerSecond: result.throughput.average,
    seconds: result.duration,
    // CPU as a share of one core over the measured run.
    loadgenCpu: (selfCpu.user + selfCpu.system) / 1e6 / wallSeconds,
    serverCpu: serverCpuSeconds === undefined ? undefined : serverCpuSeconds / wallSeconds,
    serverCpuPerRequest: serverCpuSeconds === undefined ? undefined : serverCpuSeconds / answered,
    databaseCpuPerRequest: databaseCpuSeconds === undefined ? undefined : databaseCpuSeconds / answered,
    rss,
    peakRss
  }
}

/** Seconds as whole (or fractional, below 100) microseconds, for CPU per request. */
export const micros = (seconds) =>
  seconds === undefined || Number.isNaN(seconds) ? "n/a" : `${(seconds * 1e6).toFixed(seconds * 1e6 < 100 ? 1 : 0)} µs`

const pct = (x) => (x === undefined ? "n/a" : `${Math.round(x * 100)}%`)
const num = (x, digits = 0) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(digits))

/** Bytes as MiB. */
export const mib = (bytes) => (bytes === undefined || Number.isNaN(bytes) ? "n/a" : (bytes / 1024 / 1024).toFixed(0))

/** Prints rows of `measure` results as an aligned table. */
export const printTable = (rows, out = console.log) => {
  // The Postgres column only when some row measured it.
  const withDatabase = rows.some((r) => r.databaseCpuPerRequest !== undefined)
  // The memory columns only when some row watched the server's memory.
  const withMemory = rows.some((r) => r.peakRss !== undefined)
  const header = [
    "",
    "req/s",
    "p50 ms",
    "p99 ms",
    "max ms",
    "2xx",
    "non-2xx/err",
    "server CPU",
    "loadgen CPU",
    "server CPU/req",
    ...(withDatabase ? ["Postgres CPU/req"] : []),
    ...(withMemory ? ["RSS MiB", "peak RSS MiB"] : [])
  ]
  const lines = rows.map((r) => [
    r.label,
    num(r.requestsPerSecond),
    num(r.latencyP50, 2),
    num(r.latencyP99, 2),
    num(r.latencyMax, 1),
    String(r.total2xx ?? ""),
    r.non2xx === undefined ? "" : `${r.non2xx}/${r.errors}`,
    pct(r.serverCpu),
    pct(r.loadgenCpu),
    micros(r.serverCpuPerRequest),
    ...(withDatabase ? [micros(r.databaseCpuPerRequest)] : []),
    ...(withMemory ? [mib(r.rss), mib(r.peakRss)] : [])
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)))
  const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ")
  out(fmt(header))
  for (const line of lines) out(fmt(line))
}

/**
 * Mean of several measurements of the same target (for the baseline before and after); of memory,
 * the first run's starting RSS and the highest peak.
 */
export const meanRow = (label, rows) => {
  const avg = (key) => {
    const values = rows.map((r) => r[key]).filter((v) => v !== undefined)
    return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length
  }
  return {
    label,
    requestsPerSecond: avg("requestsPerSecond"),
    latencyP50: avg("latencyP50"),
    latencyP99: avg("latencyP99"),
    latencyMax: Math.max(...rows.map((r) => r.latencyMax)),
    serverCpu: avg("serverCpu"),
    loadgenCpu: avg("loadgenCpu"),
    serverCpuPerRequest: avg("serverCpuPerRequest"),
    databaseCpuPerRequest: avg("databaseCpuPerRequest"),
    rss: rows.find((r) => r.rss !== undefined)?.rss,
    peakRss: rows.some((r) => r.peakRss !== undefined) ? Math.max(...rows.map((r) => r.peakRss ?? 0)) : undefined
  }
}

export const machine = () => {
  const list = cpus()
  return `${list.length} × ${list[0]?.model?.trim() ?? "unknown CPU"}, node ${process.version}`
}

/**
 * The headline of the issue-11 benchmarks: server CPU per request, baseline/host (1 = the host
 * costs what the bare server costs). It does not depend on which side was short of CPU or who
 * was the bottleneck, unlike req/s. Returns the ratio (undefined off Linux).
 */
export const cpuVerdict = ({ host, baseline, target, log, hostLabel = "host", baselineLabel = "baseline" }) => {
  const h = host.serverCpuPerRequest
  const b = baseline.serverCpuPerRequest
  if (h === undefined || b === undefined) {
    log("  server CPU per request: n/a (no /proc here)")
    return undefined
  }
  const ratio = b / h
  log(`  server CPU per request: ${hostLabel} ${micros(h)}, ${baselineLabel} ${micros(b)}`)
  log(`  ratio ${baselineLabel}/${hostLabel} server CPU per request: ${ratio.toFixed(2)}  ${ratio >= target ? "PASS" : "BELOW TARGET"} (target ≥ ${target})`)
  return ratio
}
