// getCatalog at 10k and 100k publications: what the host's memory does while it answers (RSS at
// ready, the peak while answering, the rise) and the time of one answer, through the whole host on
// Postgres. The catalog is streamed (docs/decisions.md, "The catalog is streamed"), so the rise
// must not grow with the catalog: the issue's targets are ≤ 50 MB at 10k and ≤ 60 MB at 100k.
// At the first size (10k) the bare node:http + pg server sending the same rows with JSON.stringify
// answers too (same SQL, same projection, checked equal), for time and CPU; it builds the whole
// document in memory, so it is left out at 100k. Every process runs with --trace-gc (the peak heap
// is read from its own GC trace); RSS is sampled from /proc every 10 ms. Each size gets a host of
// its own (RSS at ready is a fresh host's), which answers `SEQUENTIAL` catalogs one at a time
// after a warm-up, then `CONNECTIONS` at once twice. The reader counts the bytes and drops them.
// BENCH_CATALOG_SIZES=2000,5000 runs other sizes (a short check).
import { readFileSync } from "node:fs"
import http from "node:http"
import { demoDatabase, sorted, startBarePgServer } from "./lib/demo-database.mjs"
import { get } from "./lib/processes.mjs"

export const name = "catalog"
export const description = "getCatalog at 10k and 100k publications: host RSS at ready, peak and rise while answering, time (bare node:http + pg at 10k)"

const SIZES = (process.env.BENCH_CATALOG_SIZES ?? "10000,100000").split(",").map(Number)
/** The issue's ceiling on the host's RSS rise while answering, by size (bytes). */
const RISE_TARGET = (size) => (size <= 10_000 ? 50e6 : 60e6)
const SEQUENTIAL = 5
/** A few visitors opening the catalog at once: what memory must hold. */
const CONNECTIONS = 4
const PATH = "/api/v1/catalog"

const mib = (bytes) => bytes / 1024 / 1024
const mb = (bytes) => bytes / 1e6

/** Resident set size of a process now (bytes), from /proc. */
const rss = (pid) => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match ? Number(match[1]) * 1024 : 0
}

/** Samples a process's RSS every 10 ms until stopped; resolves with the peak. */
const rssSampler = (pid) => {
  let peak = rss(pid)
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rss(pid))
    } catch {
      // the process ended
    }
  }, 10)
  return { stop: () => (clearInterval(timer), peak) }
}

/** The largest heap use V8 reported before a collection in a --trace-gc log, since `fromOffset`. */
const peakHeapFromTrace = (file, fromOffset) => {
  const text = readFileSync(file, "utf8").slice(fromOffset)
  let peak = 0
  for (const match of text.matchAll(/(?:Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Sweep)[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/g)) {
    peak = Math.max(peak, Number(match[1]))
  }
  return peak
}

const logSize = (file) => readFileSync(file, "utf8").length

/**
 * One catalog read to its end and dropped as it arrives (the reader holds nothing): status, bytes,
 * and whether it ended as HTTP ends an answer (a broken stream is an error here).
 */
const drain = (url, timeoutMs = 300_000) =>
  new Promise((resolveDrain, reject) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      let bytes = 0
      res.on("data", (chunk) => (bytes += chunk.length))
      res.on("error", () => {})
      res.on("close", () =>
        res.complete ? resolveDrain({ status: res.statusCode, bytes }) : reject(new Error(`GET ${url}: the answer broke off after ${bytes} bytes`)))
    })
    req.on("timeout", () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)))
    req.on("error", reject)
  })

const sequential = async (url) => {
  await drain(url)
  const times = []
  let bytes = 0
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = process.hrtime.bigint()
    const res = await drain(url)
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`)
    bytes = res.bytes
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(times.length / 2)], max: times[times.length - 1], min: times[0], bytes }
}

/** `CONNECTIONS` catalogs requested at once, `rounds` times: the time until all are answered. */
const together = async (url, rounds = 2) => {
  const times = []
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint()
    const answers = await Promise.all(Array.from({ length: CONNECTIONS }, () => drain(url)))
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    if (answers.some((res) => res.status !== 200)) throw new Error(`GET ${url}: ${answers.map((res) => res.status).join(", ")}`)
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(times.length / 2)], max: times[times.length - 1] }
}

/**
 * Time, CPU and memory of one server: one at a time (after a warm-up), then `CONNECTIONS` at once.
 * `ready` is its RSS before its first catalog; the peaks are of each phase.
 */
const profile = async (label, server, ready) => {
  const url = server.url + PATH
  const traceFrom = logSize(server.logFile)
  const alonePeak = rssSampler(server.pid)
  const cpu0 = server.cpuSeconds()
  let alone
  try {
    alone = await sequential(url)
  } finally {
    alonePeak.stop()
  }
  const cpuPerAnswer = ((server.cpuSeconds() - cpu0) / (SEQUENTIAL + 1)) * 1000
  const atOncePeak = rssSampler(server.pid)
  let atOnce
  try {
    atOnce = await together(url)
  } finally {
    atOncePeak.stop()
  }
  const peakAlone = alonePeak.stop()
  const peakAtOnce = atOncePeak.stop()
  return {
    label,
    readyRss: ready,
    peakAlone,
    peakAtOnce,
    peakRss: Math.max(peakAlone, peakAtOnce),
    peakHeap: peakHeapFromTrace(server.logFile, traceFrom),
    alone,
    atOnce,
    cpuPerAnswer
  }
}

const row = (r) =>
  `  ${r.label.padEnd(16)} ${`${r.alone.p50.toFixed(0)} / ${r.alone.min.toFixed(0)} / ${r.alone.max.toFixed(0)}`.padStart(22)} ${r.cpuPerAnswer.toFixed(0).padStart(10)} ${r.atOnce.p50.toFixed(0).padStart(14)} ${mib(r.readyRss).toFixed(0).padStart(10)} ${`${mib(r.peakAlone).toFixed(0)} / ${mib(r.peakAtOnce).toFixed(0)}`.padStart(18)} ${mb(r.peakRss - r.readyRss).toFixed(1).padStart(9)} ${r.peakHeap.toFixed(0).padStart(10)}`

export const run = async (ctx) => {
  const { log } = ctx
  const database = await demoDatabase(ctx, { publications: SIZES[0] })
  const results = []
  for (const size of SIZES) {
    if (size !== SIZES[0]) await database.fill(size)
    log(`\n  -- ${size} publications`)
    const host = await ctx.startHost({ env: { DATABASE_URL: database.url }, nodeOptions: ["--trace-gc"] })
    // The bare server builds the whole document: at the first size only (at 100k it would hold gigabytes).
    const baseline = size === SIZES[0] && size <= 10_000 ? await startBarePgServer(ctx, database.url, ["--trace-gc"]) : undefined
    // Before the first catalog: what each process holds with nothing to answer.
    const ready = { host: rss(host.pid), baseline: baseline === undefined ? 0 : rss(baseline.pid) }

    if (baseline !== undefined) {
      // The same document (parsed, sorted): read whole here, so checked before anything is measured.
      const [a, b] = await Promise.all([get(host.url + PATH, { timeoutMs: 120_000 }), get(baseline.url + PATH, { timeoutMs: 120_000 })])
      if (a.status !== 200 || b.status !== 200) throw new Error(`catalog: host ${a.status}, baseline ${b.status}`)
      const hostCatalog = JSON.parse(a.body)
      if (JSON.stringify(sorted(hostCatalog)) !== JSON.stringify(sorted(JSON.parse(b.body)))) throw new Error("host and baseline catalogs differ")
      log(`  catalog: ${hostCatalog.profiles.length} profiles, ${hostCatalog.publications.length} publications; host and baseline answer the same`)
    }
    const base = baseline === undefined ? undefined : await profile("bare node:http", baseline, ready.baseline)
    const h = await profile("host", host, ready.host)
    const bytes = h.alone.bytes
    await host.stopAndReport()
    if (baseline !== undefined) await baseline.stop()

    log("")
    log(`  ${"".padEnd(16)} ${"one answer p50/min/max".padStart(22)} ${"CPU ms".padStart(10)} ${`${CONNECTIONS} at once ms`.padStart(14)} ${"ready MiB".padStart(10)} ${"peak MiB 1 / 4".padStart(18)} ${"rise MB".padStart(9)} ${"heap MiB".padStart(10)}`)
    for (const r of base === undefined ? [h] : [base, h]) log(row(r))
    const rise = h.peakRss - h.readyRss
    const target = RISE_TARGET(size)
    log("")
    log(`  answer ${mib(bytes).toFixed(1)} MiB; host RSS ${mib(h.readyRss).toFixed(0)} MiB at ready, peak ${mib(h.peakRss).toFixed(0)} MiB: rise ${mb(rise).toFixed(1)} MB (target ≤ ${mb(target)} MB: ${rise <= target ? "met" : "NOT met"})`)
    if (base !== undefined) {
      log(`  one answer host/bare: ${(h.alone.p50 / base.alone.p50).toFixed(2)}× the time, ${(h.cpuPerAnswer / base.cpuPerAnswer).toFixed(2)}× the CPU`)
    }
    results.push({ publications: size, bytes, host: h, baseline: base, rise, target, met: rise <= target })
  }
  return { sizes: results }
}
