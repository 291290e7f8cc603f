// getCatalog at 10k publications: the time of one answer and the memory it takes, through the whole
// host on Postgres, against the bare node:http + pg server sending the same rows (same SQL, same
// projection) with JSON.stringify. Both run with --trace-gc, so the peak heap is read from their
// own GC trace; RSS is sampled from /proc every 10 ms. Each answers 10 catalogs one at a time
// (after 2 warm-ups), then 4 at once three times. Order: baseline, host.
import { readFileSync } from "node:fs"
import { demoDatabase, sorted, startBarePgServer } from "./lib/demo-database.mjs"
import { get } from "./lib/processes.mjs"

export const name = "catalog"
export const description = "getCatalog at 10k publications: time and peak memory, host vs bare node:http + pg with JSON.stringify"

const PUBLICATIONS = 10_000
const SEQUENTIAL = 10
/** A few visitors opening the catalog at once: what memory must hold. */
const CONNECTIONS = 4
const PATH = "/api/v1/catalog"

const mib = (bytes) => bytes / 1024 / 1024

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

const sequential = async (url) => {
  for (let i = 0; i < 2; i++) await get(url, { timeoutMs: 60_000 })
  const times = []
  let bytes = 0
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = process.hrtime.bigint()
    const res = await get(url, { timeoutMs: 60_000 })
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`)
    bytes = res.body.length
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(times.length / 2)], max: times[times.length - 1], min: times[0], bytes }
}

/** `CONNECTIONS` catalogs requested at once, `rounds` times: the time until all are answered. */
const together = async (url, rounds = 3) => {
  const times = []
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint()
    const answers = await Promise.all(Array.from({ length: CONNECTIONS }, () => get(url, { timeoutMs: 120_000 })))
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    if (answers.some((res) => res.status !== 200)) throw new Error(`GET ${url}: ${answers.map((res) => res.status).join(", ")}`)
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(times.length / 2)], max: times[times.length - 1] }
}

/** Time, CPU and memory of one server: answers one at a time, then `CONNECTIONS` at once. */
const profile = async (label, server, logFile, idle) => {
  const url = server.url + PATH
  const traceFrom = logSize(logFile)
  const sampler = rssSampler(server.pid)
  try {
    const cpu0 = server.cpuSeconds()
    const alone = await sequential(url)
    const cpuPerAnswer = ((server.cpuSeconds() - cpu0) / (SEQUENTIAL + 2)) * 1000
    const atOnce = await together(url)
    return { label, idleRss: idle, peakRss: sampler.stop(), peakHeap: peakHeapFromTrace(logFile, traceFrom), alone, atOnce, cpuPerAnswer }
  } finally {
    sampler.stop()
  }
}

export const run = async (ctx) => {
  const { log } = ctx
  const database = await demoDatabase(ctx, { publications: PUBLICATIONS })
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url }, nodeOptions: ["--trace-gc"] })
  const baseline = await startBarePgServer(ctx, database.url, ["--trace-gc"])
  // Before the first catalog: what each process holds with nothing to answer.
  const idle = { host: rss(host.pid), baseline: rss(baseline.pid) }

  const [a, b] = await Promise.all([get(host.url + PATH, { timeoutMs: 60_000 }), get(baseline.url + PATH, { timeoutMs: 60_000 })])
  if (a.status !== 200 || b.status !== 200) throw new Error(`catalog: host ${a.status}, baseline ${b.status}`)
  const hostCatalog = JSON.parse(a.body)
  if (JSON.stringify(sorted(hostCatalog)) !== JSON.stringify(sorted(JSON.parse(b.body)))) {
    throw new Error("host and baseline catalogs differ")
  }
  log(`  catalog: ${hostCatalog.profiles.length} profiles, ${hostCatalog.publications.length} publications, ${(mib(a.body.length)).toFixed(1)} MiB of JSON; host and baseline answer the same`)

  const base = await profile("baseline", baseline, baseline.logFile, idle.baseline)
  const h = await profile("host", host, host.logFile, idle.host)

  log("")
  log(`  ${"".padEnd(9)} ${"one answer p50 / min / max ms".padStart(30)} ${"CPU ms/answer".padStart(14)} ${`${CONNECTIONS} at once: all answered ms`.padStart(27)} ${"RSS idle → peak MiB".padStart(21)} ${"peak heap MiB".padStart(14)}`)
  for (const r of [base, h]) {
    log(
      `  ${r.label.padEnd(9)} ${`${r.alone.p50.toFixed(0)} / ${r.alone.min.toFixed(0)} / ${r.alone.max.toFixed(0)}`.padStart(30)} ${r.cpuPerAnswer.toFixed(0).padStart(14)} ${r.atOnce.p50.toFixed(0).padStart(27)} ${`${mib(r.idleRss).toFixed(0)} → ${mib(r.peakRss).toFixed(0)}`.padStart(21)} ${r.peakHeap.toFixed(0).padStart(14)}`
    )
  }
  const timeRatio = h.alone.p50 / base.alone.p50
  const cpuRatio = h.cpuPerAnswer / base.cpuPerAnswer
  const memoryRatio = (h.peakRss - h.idleRss) / Math.max(1, base.peakRss - base.idleRss)
  log("")
  log(`  answer ${mib(a.body.length).toFixed(1)} MiB; one answer host/baseline: ${timeRatio.toFixed(2)}× the time, ${cpuRatio.toFixed(2)}× the CPU`)
  log(`  peak RSS growth host/baseline: ${memoryRatio.toFixed(2)}× (${mib(h.peakRss - h.idleRss).toFixed(0)} vs ${mib(base.peakRss - base.idleRss).toFixed(0)} MiB); peak heap ${h.peakHeap.toFixed(0)} vs ${base.peakHeap.toFixed(0)} MiB`)
  log(`  (the issue sets no target for the catalog: these are the numbers to watch)`)
  return { publications: PUBLICATIONS, bytes: a.body.length, baseline: base, host: h, timeRatio, cpuRatio, memoryRatio }
}
