// The host's resident memory: RSS when readyz first answers 200 on Postgres, RSS after
// an idle pause, and the peak during the `auth-session` load (GET /api/v1/auth/session with a real
// session cookie, as bench/auth-session.bench.mjs), with the host's CPU per request in the same
// run, for several young-generation settings of Node. Each setting is a fresh host on a fresh
// database (the migrations run as at a real start). RSS is VmRSS from /proc/<pid>/status; the
// peak is VmHWM (the process's high-water mark) read after the load, so it covers the whole life
// of the host, start-up included. See bench/README.md, "`memory`".
//
// BENCH_MEMORY_FLAGS: the settings to compare, separated by `;` (each a list of node flags added
// after the command's own first line; `shipped` is that line alone). Default:
// "shipped;--max-semi-space-size=64 --min-semi-space-size=1;--max-semi-space-size=16 --min-semi-space-size=1;--max-semi-space-size=32 --min-semi-space-size=32".
// BENCH_MEMORY_IDLE: seconds the host stays idle after ready before the load (default 10), long
// enough for V8's memory reducer (which starts 8 s after a full collection) to shrink the heap of
// an idle host, as a host that waited for traffic has.
import { readFileSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { benchDatabase, signInOnHost } from "./lib/database.mjs"
import { micros } from "./lib/load.mjs"
import { commandFlags, get } from "./lib/processes.mjs"

export const name = "memory"
export const description = "host RSS at ready, after idle and at the peak of the auth-session load, with CPU/request, per young-generation setting"
export const pin = true

/** The target: RSS at ready on Postgres. */
const READY_TARGET_MB = 120
const ORIGIN = "http://localhost:8080"
const PATH = "/api/v1/auth/session"

const memoryOf = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN)
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const settings = () =>
  (process.env.BENCH_MEMORY_FLAGS ?? "shipped;--max-semi-space-size=64 --min-semi-space-size=1;--max-semi-space-size=16 --min-semi-space-size=1;--max-semi-space-size=32 --min-semi-space-size=32")
    .split(";")
    .map((text) => text.trim())
    .filter((text) => text !== "")

export const run = async (ctx) => {
  const { log, options } = ctx
  const idleSeconds = Number(process.env.BENCH_MEMORY_IDLE ?? 10)
  log(`  shipped flags (bin.js first line): ${commandFlags().join(" ") || "(none)"}`)
  log(`  connections ${options.connections}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s; idle ${idleSeconds} s after ready`)
  const rows = []
  for (const setting of settings()) {
    const extra = setting === "shipped" ? [] : setting.split(/\s+/)
    const database = await benchDatabase(ctx, "memory")
    const secret = randomBytes(32).toString("base64url")
    const host = await ctx.startHost({ nodeOptions: extra, env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN, BIRZHA_SECRET: secret } })
    // startHost returns as soon as readyz answered 200: this is the RSS at ready.
    const atReady = memoryOf(host.pid)
    await sleep(idleSeconds * 1000)
    const afterIdle = memoryOf(host.pid)
    const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)
    const sample = await get(host.url + PATH, { headers: { cookie } })
    if (sample.status !== 200) throw new Error(`session answered ${sample.status}: ${sample.body.toString("utf8").slice(0, 300)}`)
    const load = await ctx.measure({ label: setting, url: host.url + PATH, server: host, headers: { cookie } })
    const afterLoad = memoryOf(host.pid)
    rows.push({ setting, readyAfterMs: host.readyAfterMs, atReady: atReady.rss, afterIdle: afterIdle.rss, peak: afterLoad.peak, afterLoad: afterLoad.rss, load })
    await host.stopAndReport()
  }
  log("")
  const header = ["host flags", "ready ms", "RSS at ready MB", `after ${idleSeconds} s idle`, "peak (load) MB", "after load", "req/s", "server CPU/req"]
  const lines = rows.map((r) => [
    r.setting,
    String(r.readyAfterMs),
    r.atReady.toFixed(0),
    r.afterIdle.toFixed(0),
    r.peak.toFixed(0),
    r.afterLoad.toFixed(0),
    r.load.requestsPerSecond.toFixed(0),
    micros(r.load.serverCpuPerRequest)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)))
  for (const line of [header, ...lines]) log(line.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "))
  log("")
  const shipped = rows.find((r) => r.setting === "shipped")
  if (shipped !== undefined) {
    log(`  RSS at ready (shipped flags): ${shipped.atReady.toFixed(0)} MB  ${shipped.atReady <= READY_TARGET_MB ? "PASS" : "ABOVE TARGET"} (target ≤ ${READY_TARGET_MB} MB)`)
  }
  return { idleSeconds, rows: rows.map(({ load, ...rest }) => ({ ...rest, requestsPerSecond: load.requestsPerSecond, serverCpuPerRequest: load.serverCpuPerRequest })) }
}
