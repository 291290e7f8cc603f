// The cost of tracing: GET /api/v1/auth/session with a session cookie (a keyed-hash lookup, two SQL
// statements) through the whole host, three ways in the same run: tracing off (no OTEL_* variable),
// tracing on at 100 % sampling exporting OTLP/HTTP (protobuf, the specification's default) to a
// receiver in this process that reads and drops every batch, and, when BENCH_BEFORE_ENTRY names the
// bin.js of a build from before tracing existed, that build. Order: off, on, off (and before
// between them when given); the off row is the mean of both. Headline: server CPU per request,
// on/off and off/before (bench/README.md, "tracing").
import { createServer } from "node:http"
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { benchDatabase, signInOnHost } from "./lib/database.mjs"
import { micros } from "./lib/load.mjs"
import { freePort, get, startProcess } from "./lib/processes.mjs"

export const name = "tracing"
export const description = "GET /api/v1/auth/session: tracing off vs OTLP export at 100 % (and the build before tracing, when given)"
export const pin = true

const ORIGIN = "http://localhost:8080"
const PATH = "/api/v1/auth/session"

/** An OTLP/HTTP receiver that reads every batch and answers 200: counts requests and bytes. */
const startSink = async () => {
  const counts = { requests: 0, bytes: 0 }
  const server = createServer((req, res) => {
    req.on("data", (chunk) => {
      counts.bytes += chunk.length
    })
    req.on("end", () => {
      counts.requests++
      res.writeHead(200, { "content-type": "application/x-protobuf" })
      res.end()
    })
  })
  const port = await freePort()
  await new Promise((done) => server.listen(port, "127.0.0.1", done))
  return { url: `http://127.0.0.1:${port}`, counts, stop: () => new Promise((done) => server.close(done)) }
}

export const run = async (ctx) => {
  const { log, options } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)
  const sink = await startSink()
  ctx.defer(() => sink.stop())
  const secret = "tracing bench: a server secret of at least 32 characters"
  const env = { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN, BIRZHA_SECRET: secret }
  const off = await ctx.startHost({ env })
  const on = await ctx.startHost({ env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "birzha-bench" } })
  const beforeEntry = process.env.BENCH_BEFORE_ENTRY
  let before
  if (beforeEntry !== undefined && beforeEntry !== "") {
    const entry = resolve(beforeEntry)
    if (!existsSync(entry)) throw new Error(`BENCH_BEFORE_ENTRY: ${entry} does not exist`)
    const port = await freePort()
    before = await startProcess({
      label: "before",
      entry,
      args: ["serve"],
      nodeOptions: ["--max-semi-space-size=64", "--min-semi-space-size=16", ...options.hostNodeOptions],
      env: { ...env, BIRZHA_PORT: String(port), BIRZHA_HOST: "127.0.0.1" },
      port,
      readyPath: "/api/readyz",
      workDir: ctx.workDir,
      core: ctx.serverCore
    })
    ctx.defer(() => before.stop())
    log(`  before: ${entry} (pid ${before.pid})`)
  } else {
    log("  before: not measured (BENCH_BEFORE_ENTRY names the bin.js of a build from before tracing)")
  }

  const { cookie, email } = await signInOnHost(off.url, database.url, ORIGIN)
  const headers = { cookie }
  for (const host of [off, on, ...(before ? [before] : [])]) {
    const sample = await get(host.url + PATH, { headers })
    if (sample.status !== 200) throw new Error(`session answered ${sample.status}: ${sample.body.toString("utf8").slice(0, 300)}`)
  }
  log(`  signed in as ${email}; all hosts answer 200`)

  const rows = []
  rows.push(await ctx.measure({ label: "off #1", url: off.url + PATH, server: off, headers }))
  if (before) rows.push(await ctx.measure({ label: "before #1", url: before.url + PATH, server: before, headers }))
  const exportedBefore = { ...sink.counts }
  rows.push(await ctx.measure({ label: "on (OTLP 100 %)", url: on.url + PATH, server: on, headers }))
  // Spans wait up to 5 s in the batch: the last of the run arrive after it.
  await new Promise((done) => setTimeout(done, 6_000))
  const exported = { requests: sink.counts.requests - exportedBefore.requests, bytes: sink.counts.bytes - exportedBefore.bytes }
  if (before) rows.push(await ctx.measure({ label: "before #2", url: before.url + PATH, server: before, headers }))
  rows.push(await ctx.measure({ label: "off #2", url: off.url + PATH, server: off, headers }))

  const [o1, ...rest] = rows
  const o2 = rest.at(-1)
  const traced = rows.find((row) => row.label.startsWith("on"))
  const offMean = ctx.meanRow("off (mean)", [o1, o2])
  const beforeRows = rows.filter((row) => row.label.startsWith("before"))
  const beforeMean = beforeRows.length === 2 ? ctx.meanRow("before (mean)", beforeRows) : undefined
  log("")
  ctx.printTable([...rows, offMean, ...(beforeMean ? [beforeMean] : [])])
  log("")
  const onCost = traced.serverCpuPerRequest / offMean.serverCpuPerRequest
  log(`  exported during the traced run: ${exported.requests} OTLP requests, ${(exported.bytes / 1024 / 1024).toFixed(1)} MiB`)
  log(`  server CPU per request: off ${micros(offMean.serverCpuPerRequest)}, on ${micros(traced.serverCpuPerRequest)}${beforeMean ? `, before ${micros(beforeMean.serverCpuPerRequest)}` : ""}`)
  log(`  tracing on / off (CPU per request): ${onCost.toFixed(3)}`)
  let offCost
  if (beforeMean) {
    offCost = offMean.serverCpuPerRequest / beforeMean.serverCpuPerRequest
    log(`  tracing off / before (CPU per request): ${offCost.toFixed(3)} (target ≤ 1.03)`)
  }
  const drift = Math.abs(o1.serverCpuPerRequest - o2.serverCpuPerRequest) / offMean.serverCpuPerRequest
  if (drift > 0.1) log(`  note: the two off runs differ by ${(drift * 100).toFixed(0)}% in CPU per request: the machine is noisy, rerun`)
  for (const row of rows) if (row.non2xx > 0 || row.errors > 0) log(`  warning: ${row.label} had ${row.non2xx} non-2xx answers and ${row.errors} errors`)
  return {
    path: PATH,
    off: offMean,
    offRuns: [o1, o2],
    on: traced,
    before: beforeMean,
    exported,
    onOverOff: onCost,
    offOverBefore: offCost,
    pass: offCost === undefined ? undefined : offCost <= 1.03
  }
}
