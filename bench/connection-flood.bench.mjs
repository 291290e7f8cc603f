// One address floods the host with silent connections (1,000 from 127.0.0.2, each reopened a
// second after the host closes it) while another (127.0.0.3) asks for /api/healthz, one request
// per new connection, one after another, for 12 s (past two first-byte timeouts of the default
// 5 s). Baseline: the same requests for as long with no flood, before (after a warm-up) and after. Figures: answered and failed requests, latency p50/p95/max in each phase, how many flood
// connections the host held at once, and how many it refused or timed out. The whole of
// 127/8 is loopback on Linux, so the two addresses need no setup.

import http from "node:http"
import net from "node:net"
import { benchDatabase } from "./lib/database.mjs"

export const name = "connection-flood"
export const description = "healthz from one address while another holds 1,000 silent connections, vs no flood"

const FLOOD = 1_000
const REOPEN_MS = 1_000
const PHASE_MS = 12_000
const GREEDY = "127.0.0.2"
const OTHER = "127.0.0.3"

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** One GET on a new connection from `localAddress`: its latency in ms, or the error. */
const timedGet = (url, localAddress) =>
  new Promise((resolve) => {
    const started = process.hrtime.bigint()
    const req = http.get(url, { agent: false, localAddress, timeout: 10_000 }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }))
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", (error) => resolve({ error: error.code ?? error.message }))
  })

const percentile = (sorted, p) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

const phase = async (url, durationMs = PHASE_MS) => {
  const latencies = []
  const errors = {}
  let asked = 0
  for (const until = Date.now() + durationMs; Date.now() < until; asked++) {
    const answer = await timedGet(url, OTHER)
    if (answer.status === 200) latencies.push(answer.ms)
    else errors[answer.error ?? `status ${answer.status}`] = (errors[answer.error ?? `status ${answer.status}`] ?? 0) + 1
  }
  latencies.sort((a, b) => a - b)
  return { asked, ok: latencies.length, errors, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), max: latencies.at(-1) ?? NaN }
}

/** Keeps FLOOD silent connections from GREEDY, each reopened REOPEN_MS after it closes. */
const flood = (port) => {
  let stopped = false
  let opened = 0
  let closedEarly = 0
  let heldPeak = 0
  const sockets = new Map()
  const one = () => {
    if (stopped) return
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: GREEDY })
    const started = Date.now()
    sockets.set(socket, started)
    opened++
    socket.on("error", () => undefined)
    socket.on("close", () => {
      sockets.delete(socket)
      if (Date.now() - started < 500) closedEarly++
      setTimeout(one, REOPEN_MS)
    })
  }
  // Connections alive for more than half a second: those the host holds (it closes the others at once).
  const held = () => [...sockets.values()].filter((started) => Date.now() - started > 500).length
  const sampler = setInterval(() => (heldPeak = Math.max(heldPeak, held())), 250)
  for (let i = 0; i < FLOOD; i++) one()
  return {
    stats: () => ({ opened, closedEarly, heldPeak }),
    stop: () => {
      stopped = true
      clearInterval(sampler)
      for (const socket of sockets.keys()) socket.destroy()
    }
  }
}

const row = (label, r) =>
  `  ${label.padEnd(10)} ok ${String(r.ok).padStart(5)}/${String(r.asked).padEnd(5)}  errors ${JSON.stringify(r.errors)}  ` +
  `p50 ${r.p50.toFixed(2)} ms  p95 ${r.p95.toFixed(2)} ms  max ${r.max.toFixed(2)} ms`

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })
  const url = `${host.url}/api/healthz`
  const port = Number(new URL(host.url).port)

  await phase(url, 2_000)
  const quiet = await phase(url)
  const attack = flood(port)
  ctx.defer(() => attack.stop())
  await sleep(1_500)
  const during = await phase(url)
  const stats = attack.stats()
  attack.stop()
  await sleep(500)
  const after = await phase(url)

  log("")
  log(row("no flood", quiet))
  log(row("flood", during))
  log(row("after", after))
  log(
    `  flood: ${stats.opened} connections opened from ${GREEDY}, ${stats.closedEarly} closed by the host within 0.5 s, ` +
      `at most ${stats.heldPeak} held longer at once`
  )
  log(`  p95 flood/no flood (mean of before and after): ${(during.p95 / ((quiet.p95 + after.p95) / 2)).toFixed(2)}; failed during the flood: ${during.asked - during.ok} of ${during.asked}`)
  return { quiet, during, after, flood: stats }
}
