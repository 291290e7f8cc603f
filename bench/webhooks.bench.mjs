// Webhook delivery end to end: events committed to the outbox (one INSERT, one commit each, by
// writer connections in this process) → the sequencer numbers them → the webhook worker fans out,
// claims, signs and POSTs each to a local receiver (in this process) that answers 200. Measured:
// deliveries/s reaching the receiver and the commit-to-receive latency (INSERT returned → request
// arrived), p50 and p99. The worker is `birzha worker` as a separate process on a Postgres server
// (BENCH_POSTGRES_URL, default the local one), in a database made for the run.
//
// The ceiling, in the same run: the raw Postgres insert rate of the same rows (same writers, same
// connections, into a copy of outbox_events with nothing reading it).
//
// Runs: (1) the ceiling; (2) a light load (BENCH_WEBHOOK_LIGHT_RATE, default 200 events/s): the
// pipeline's own latency without a queue; (3) the target's offered load (BENCH_WEBHOOK_RATE,
// default 2000 events/s); (4) the writers unthrottled, for the most deliveries/s sustained.
// Sustained deliveries/s of a run = its deliveries / (first commit → last delivery).
import { spawn } from "node:child_process"
import { closeSync, existsSync, openSync, realpathSync } from "node:fs"
import { createServer } from "node:http"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import Pg from "pg"
import { benchDatabase } from "./lib/database.mjs"
import { commandFlags, childCpuSeconds, freePort, repoRoot } from "./lib/processes.mjs"

export const name = "webhooks"
export const description = "events committed → signed webhook POSTs answered 2xx by a local receiver (deliveries/s, p50/p99 latency)"

const TARGET_RATE = 2000
const TARGET_P50_MS = 50
const WRITERS = 8
// Endpoints subscribed to every event (BENCH_WEBHOOK_ENDPOINTS): each event is one delivery per endpoint.
const ENDPOINTS = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 1)
const SERVER_SECRET = "bench webhooks: a server secret of at least 32 characters"

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const percentile = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)])

export const run = async (ctx) => {
  const { log } = ctx
  const durationSeconds = ctx.options.durationSeconds
  const warmupSeconds = ctx.options.warmupSeconds
  const offered = Number(process.env.BENCH_WEBHOOK_RATE ?? TARGET_RATE)
  const entry = resolve(repoRoot, "packages/cli/dist/bin.js")
  const server = resolve(repoRoot, "packages/domain/dist/internal.js")
  if (!existsSync(entry) || !existsSync(server)) throw new Error("build first (npx -y pnpm@10.34.9 -r build)")
  const { sealSecret } = await import(server)
  // The same `effect` module instance the built domain uses (Redacted values are tracked per instance).
  const Redacted = await import(pathToFileURL(realpathSync(resolve(repoRoot, "packages/domain/node_modules/effect/dist/esm/Redacted.js"))).href)

  // A database for the run.
  const database = await benchDatabase(ctx, "webhooks")
  const databaseUrl = database.url
  log(`  database: ${database.label}; writers: ${WRITERS} connections, one INSERT per commit; endpoints: ${ENDPOINTS}`)

  const env = { DATABASE_URL: databaseUrl, BIRZHA_SECRET: SERVER_SECRET, BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1", BIRZHA_DATA_DIR: join(ctx.workDir, "webhooks-data") }
  const migrate = spawn(process.execPath, [entry, "migrate"], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: "ignore" })
  const migrated = await new Promise((r) => migrate.once("exit", r))
  if (migrated !== 0) throw new Error(`birzha migrate exited with ${migrated}`)

  // The receiver: records when each webhook-id first arrived at each endpoint (its path), answers 200 at once.
  const received = new Map()
  let requests = 0
  const receiver = createServer((req, res) => {
    const key = `${req.url}|${req.headers["webhook-id"]}`
    req.resume()
    req.on("end", () => {
      requests++
      if (!received.has(key)) received.set(key, performance.now())
      res.end("ok")
    })
  })
  receiver.keepAliveTimeout = 30_000
  const port = await freePort()
  await new Promise((r) => receiver.listen(port, "127.0.0.1", r))
  ctx.defer(() => new Promise((r) => receiver.close(r)))

  // An owner and its active endpoints at the receiver (approved and tested, as the API leaves them).
  const pool = new Pg.Pool({ connectionString: databaseUrl, max: WRITERS })
  ctx.defer(() => pool.end())
  const { rows: [account] } = await pool.query("INSERT INTO accounts (email) VALUES ('bench@example.com') RETURNING uuid")
  const { rows: [profile] } = await pool.query(
    "INSERT INTO profiles (id, account_uuid, name, type) VALUES ('benchprofile', $1, 'Bench', 'Физлицо') RETURNING uuid", [account.uuid])
  const signing = `whsec_${Buffer.alloc(32, 5).toString("base64")}`
  const paths = []
  for (let i = 0; i < ENDPOINTS; i++) {
    const endpointUuid = crypto.randomUUID()
    paths.push(`/hook/${i}`)
    await pool.query(
      `INSERT INTO webhook_endpoints (uuid, profile_uuid, url, event_types, payload_mode, secret_sealed, approved_at, verified_at)
       VALUES ($1, $2, $3, '["profile.updated"]'::jsonb, 'reference', $4, now(), now())`,
      [endpointUuid, profile.uuid, `http://127.0.0.1:${port}/hook/${i}`, sealSecret(Redacted.make(SERVER_SECRET), endpointUuid, signing)])
  }
  /** The deliveries of the committed events: one per endpoint. */
  const deliveriesOf = (committed) => [...committed].flatMap(([id, at]) => paths.map((path) => [`${path}|${id}`, at]))

  const insertEvent = (table) =>
    `INSERT INTO ${table} (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
     VALUES ('profile.updated', 'profile', $1::uuid, 1, jsonb_build_object('objectUuid', $1::text, 'status', 'updated'),
       jsonb_build_object('profileUuid', $1::text)) RETURNING uuid`

  /** WRITERS loops inserting for `seconds`, each at most `rate / WRITERS` per second (Infinity: as fast as they can). */
  const write = async (table, seconds, rate, committed) => {
    const until = performance.now() + seconds * 1000
    const perWriter = rate / WRITERS
    let count = 0
    await Promise.all(Array.from({ length: WRITERS }, async () => {
      const client = await pool.connect()
      try {
        const start = performance.now()
        let n = 0
        while (performance.now() < until) {
          if (Number.isFinite(perWriter)) {
            const due = start + (n / perWriter) * 1000
            const wait = due - performance.now()
            if (wait > 1) await sleep(wait)
          }
          const { rows } = await client.query(insertEvent(table), [profile.uuid])
          committed?.set(rows[0].uuid, performance.now())
          n++
          count++
        }
      } finally {
        client.release()
      }
    }))
    return count
  }

  // (1) The ceiling: the same INSERTs into a copy of the outbox that nothing reads.
  await pool.query("CREATE TABLE bench_ceiling (LIKE outbox_events INCLUDING ALL)")
  if (warmupSeconds > 0) await write("bench_ceiling", warmupSeconds, Infinity)
  const ceilingCount = await write("bench_ceiling", durationSeconds, Infinity)
  const ceiling = ceilingCount / durationSeconds
  log(`  ceiling: raw Postgres inserts ${ceiling.toFixed(0)}/s (${ceilingCount} in ${durationSeconds} s)`)

  // The worker, as `birzha worker`.
  const logFile = join(ctx.workDir, "webhook-worker.log")
  const fd = openSync(logFile, "a")
  const worker = spawn(process.execPath, [...commandFlags(entry), entry, "worker"], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", fd, fd] })
  closeSync(fd)
  const workerExit = new Promise((r) => worker.once("exit", r))
  ctx.defer(async () => {
    worker.kill("SIGTERM")
    await Promise.race([workerExit, sleep(10_000)])
    worker.kill("SIGKILL")
  })
  // Ready when a first event arrives.
  const probe = new Map()
  const probeUntil = performance.now() + 30_000
  await write("outbox_events", 0.05, 20, probe)
  while (!deliveriesOf(probe).every(([key]) => received.has(key))) {
    if (performance.now() > probeUntil) throw new Error(`the worker delivered nothing within 30 s; see ${logFile}`)
    await sleep(20)
  }

  const phase = async (label, rate) => {
    if (warmupSeconds > 0) {
      const warm = new Map()
      await write("outbox_events", warmupSeconds, rate, warm)
      await drain(deliveriesOf(warm), 60_000)
    }
    const committed = new Map()
    const cpu0 = childCpuSeconds(worker.pid)
    const t0 = performance.now()
    const before = received.size
    const count = await write("outbox_events", durationSeconds, rate, committed)
    const writeEnd = performance.now()
    const deliveredDuringWrite = received.size - before
    const expected = deliveriesOf(committed)
    const drained = await drain(expected, 60_000)
    const t1 = performance.now()
    const cpu1 = childCpuSeconds(worker.pid)
    const latencies = expected.map(([key, at]) => (received.get(key) ?? NaN) - at).filter(Number.isFinite).sort((a, b) => a - b)
    const elapsed = (t1 - t0) / 1000
    const row = {
      label,
      offered: Number.isFinite(rate) ? rate : NaN,
      committedPerSecond: count / ((writeEnd - t0) / 1000),
      deliveries: expected.length,
      // Sustained: everything committed in the window, delivered, over the time until the last one arrived.
      deliveredPerSecond: drained / elapsed,
      deliveredDuringWritePerSecond: deliveredDuringWrite / ((writeEnd - t0) / 1000),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1),
      // Not delivered within 60 s after the writers stopped (a backlog still draining, not lost).
      late: expected.length - drained,
      workerCpu: cpu0 === undefined || cpu1 === undefined ? NaN : (cpu1 - cpu0) / elapsed
    }
    log(`  ${label}: ${count} events committed in ${durationSeconds} s, ${drained} of ${expected.length} deliveries done after ${elapsed.toFixed(2)} s`)
    return row
  }

  /** Waits until every expected delivery arrived (or the timeout); returns how many did. */
  const drain = async (expected, timeoutMs) => {
    const until = performance.now() + timeoutMs
    // Deliveries arrive roughly in order: skip the prefix already checked complete.
    let start = 0
    for (;;) {
      while (start < expected.length && received.has(expected[start][0])) start++
      let done = start
      for (let i = start; i < expected.length; i++) if (received.has(expected[i][0])) done++
      if (done === expected.length || performance.now() > until) return done
      await sleep(20)
    }
  }

  const lightRate = Number(process.env.BENCH_WEBHOOK_LIGHT_RATE ?? 200)
  const light = await phase(`offered ${lightRate}/s`, lightRate)
  const fixed = await phase(`offered ${offered}/s`, offered)
  const open = await phase("unthrottled", Infinity)

  const f = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "—")
  log("")
  log("  run            committed/s  delivered/s  p50 ms  p99 ms  max ms  late  worker CPU")
  for (const row of [light, fixed, open]) {
    log(`  ${row.label.padEnd(14)} ${f(row.committedPerSecond).padStart(11)}  ${f(row.deliveredPerSecond).padStart(11)}  ${f(row.p50, 1).padStart(6)}  ${
      f(row.p99, 1).padStart(6)
    }  ${f(row.max, 0).padStart(6)}  ${String(row.late).padStart(4)}  ${f(row.workerCpu * 100)} %`)
  }
  log(`  ceiling        ${f(ceiling).padStart(11)}  (raw inserts of the same rows, nothing delivered)`)
  log(`  receiver requests ${requests}, distinct deliveries ${received.size} (repeats ${requests - received.size})`)
  const best = Math.max(fixed.deliveredPerSecond, open.deliveredPerSecond)
  const pass = best >= TARGET_RATE && fixed.p50 < TARGET_P50_MS
  log("")
  log(`  deliveries/s ${f(best)} (target ≥ ${TARGET_RATE}), ${f((best / ceiling) * 100)} % of the insert ceiling; ` +
    `p50 at ${offered}/s ${f(fixed.p50, 1)} ms (target < ${TARGET_P50_MS}), at ${lightRate}/s ${f(light.p50, 1)} ms: ${pass ? "PASS" : "BELOW TARGET"}`)
  return { ceiling, light, fixed, open, target: { deliveriesPerSecond: TARGET_RATE, p50Ms: TARGET_P50_MS }, pass }
}
