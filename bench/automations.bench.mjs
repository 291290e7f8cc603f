// Automation rules end to end: events committed to the outbox (one INSERT, one commit each, by
// writer connections in this process) → the sequencer numbers them → the automations job fans them
// out to the rules of their type (1,000 rules over 100 profiles, 10 per profile, each on another
// event type; the lookup goes through the partial index on the rule's event type, never through
// every rule) → the runner writes each match's notification. The worker is `birzha worker` as a
// separate process on a Postgres server (BENCH_POSTGRES_URL, default the local one), in a database
// made for the run.
//
// Measured from the database's own clocks, for the events of the measured window:
// - evaluation lag: event committed (occurred_at) → its execution row created by the fan-out, p50/p95;
// - event → notification: occurred_at → the notification's created_at, p50/p95;
// - whether every event got its one execution and notification (late: still missing 60 s after).
// Targets: lag p95 < 1 s and event → notification p50 < 100 ms at 1,000 events/s
// (BENCH_AUTOMATION_RATE).
import { spawn } from "node:child_process"
import { closeSync, existsSync, openSync } from "node:fs"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import Pg from "pg"
import { benchDatabase } from "./lib/database.mjs"
import { commandFlags, childCpuSeconds, repoRoot } from "./lib/processes.mjs"

export const name = "automations"
export const description = "events committed → rules evaluated by the worker → notifications (evaluation lag p95, event → notification p50)"

const TARGET_RATE = 1000
const TARGET_LAG_P95_MS = 1000
const TARGET_NOTIFICATION_P50_MS = 100
const PROFILES = 100
const RULES_PER_PROFILE = 10
const WRITERS = 8
const SERVER_SECRET = "bench automations: a server secret of at least 32 characters"
const TYPES = [
  "profile.updated", "publication.draft_saved", "publication.submitted", "publication.hidden", "publication.restored",
  "publication.deleted", "publication.moderated", "file.ready", "favorite.changed", "review.submitted"
]

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export const run = async (ctx) => {
  const { log } = ctx
  const durationSeconds = ctx.options.durationSeconds
  const rate = Number(process.env.BENCH_AUTOMATION_RATE ?? TARGET_RATE)
  const entry = resolve(repoRoot, "packages/cli/dist/bin.js")
  if (!existsSync(entry)) throw new Error("build first (npx -y pnpm@10.34.9 -r build)")

  const database = await benchDatabase(ctx, "automations")
  const env = { DATABASE_URL: database.url, BIRZHA_SECRET: SERVER_SECRET, BIRZHA_DATA_DIR: join(ctx.workDir, "automations-data") }
  const migrate = spawn(process.execPath, [entry, "migrate"], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: "ignore" })
  const migrated = await new Promise((r) => migrate.once("exit", r))
  if (migrated !== 0) throw new Error(`birzha migrate exited with ${migrated}`)

  const pool = new Pg.Pool({ connectionString: database.url, max: WRITERS })
  ctx.defer(() => pool.end())
  // 100 profiles, each with 10 rules (one per type), notification.create, a condition on data.status.
  const profiles = []
  for (let i = 0; i < PROFILES; i++) {
    const { rows: [account] } = await pool.query("INSERT INTO accounts (email) VALUES ($1) RETURNING uuid", [`bench.rules.${i}@example.com`])
    const { rows: [profile] } = await pool.query(
      "INSERT INTO profiles (id, account_uuid, name, type) VALUES ($1, $2, $3, 'Физлицо') RETURNING uuid", [`benchrules${i}`, account.uuid, `Bench ${i}`])
    profiles.push(profile.uuid)
    for (const [j, type] of TYPES.entries()) {
      await pool.query(
        `INSERT INTO automation_rules (uuid, profile_uuid, account_uuid, name, event_type, filter, action, max_runs_per_day, created_via, start_position)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5::jsonb, '{"type":"notification.create"}'::jsonb, 1000, 'session', 0)`,
        [profile.uuid, account.uuid, `Rule ${j}`, type, JSON.stringify({ any: [{ field: "data.status", op: "eq", value: "updated" }, { field: "aggregate.revision", op: "gte", value: 1 }] })]
      )
    }
  }
  log(`  database: ${database.label}; ${PROFILES} profiles × ${RULES_PER_PROFILE} rules; writers: ${WRITERS}, one INSERT per commit; offered ${rate} events/s`)

  const worker = (() => {
    const logFile = join(ctx.workDir, "automations-worker.log")
    const fd = openSync(logFile, "a")
    const child = spawn(process.execPath, [...commandFlags(entry), entry, "worker"], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", fd, fd] })
    closeSync(fd)
    const exit = new Promise((r) => child.once("exit", r))
    ctx.defer(async () => {
      child.kill("SIGTERM")
      await Promise.race([exit, sleep(10_000)])
      child.kill("SIGKILL")
    })
    return child
  })()

  // Each event: a random profile and one of the ten types, about that profile (so it sees it): one rule matches.
  let n = 0
  const insert = (client) => {
    const profile = profiles[n % PROFILES]
    const type = TYPES[Math.floor(n / PROFILES) % TYPES.length]
    n++
    return client.query(
      `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
       VALUES ($2, 'profile', $1::uuid, 1, jsonb_build_object('objectUuid', $1::text, 'status', 'updated'), jsonb_build_object('profileUuid', $1::text))
       RETURNING uuid`, [profile, type])
  }

  const write = async (seconds, perSecond) => {
    const until = performance.now() + seconds * 1000
    const perWriter = perSecond / WRITERS
    const ids = []
    await Promise.all(Array.from({ length: WRITERS }, async () => {
      const client = await pool.connect()
      try {
        const start = performance.now()
        let k = 0
        while (performance.now() < until) {
          const wait = start + (k / perWriter) * 1000 - performance.now()
          if (wait > 1) await sleep(wait)
          const { rows } = await insert(client)
          ids.push(rows[0].uuid)
          k++
        }
      } finally {
        client.release()
      }
    }))
    return ids
  }

  // Ready when a first notification appears.
  await write(0.2, 20)
  const ready = performance.now() + 60_000
  for (;;) {
    const { rows: [row] } = await pool.query("SELECT count(*)::int AS n FROM notifications")
    if (row.n > 0) break
    if (performance.now() > ready) throw new Error("the worker wrote no notification within 60 s")
    await sleep(50)
  }
  await pool.query("SELECT 1")
  const { rows: [mark] } = await pool.query("SELECT now() AS at")

  const cpu0 = childCpuSeconds(worker.pid)
  const t0 = performance.now()
  const ids = await write(durationSeconds, rate)
  const writeSeconds = (performance.now() - t0) / 1000
  // Drain: every event's notification, or 60 s.
  const drainUntil = performance.now() + 60_000
  let done = 0
  for (;;) {
    const { rows: [row] } = await pool.query(
      "SELECT count(*)::int AS n FROM notifications n JOIN outbox_events e ON e.uuid = n.event_uuid WHERE e.occurred_at >= $1", [mark.at])
    done = row.n
    if (done >= ids.length || performance.now() > drainUntil) break
    await sleep(100)
  }
  const elapsed = (performance.now() - t0) / 1000
  const cpu1 = childCpuSeconds(worker.pid)
  const { rows: [stats] } = await pool.query(
    `SELECT
       count(DISTINCT e.uuid)::int AS events,
       count(x.uuid)::int AS executions,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.sequenced_at - e.occurred_at) * 1000) AS seq_p50,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM x.created_at - e.occurred_at) * 1000) AS lag_p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM x.created_at - e.occurred_at) * 1000) AS lag_p95,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM n.created_at - e.occurred_at) * 1000) AS note_p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM n.created_at - e.occurred_at) * 1000) AS note_p95
     FROM outbox_events e
     LEFT JOIN automation_executions x ON x.event_uuid = e.uuid
     LEFT JOIN notifications n ON n.execution_uuid = x.uuid
     WHERE e.occurred_at >= $1 AND e.type = ANY($2)`, [mark.at, TYPES])
  const f = (v, d = 0) => (v === null || v === undefined || !Number.isFinite(Number(v)) ? "—" : Number(v).toFixed(d))
  const committedPerSecond = ids.length / writeSeconds
  log("")
  log("  committed/s  executions  notifications  sequenced p50 ms  lag p50 ms  lag p95 ms  event→notification p50 ms  p95 ms  late  worker CPU")
  log(`  ${f(committedPerSecond).padStart(11)}  ${String(stats.executions).padStart(10)}  ${String(done).padStart(13)}  ${f(stats.seq_p50, 1).padStart(16)}  ${f(stats.lag_p50, 1).padStart(10)}  ${
    f(stats.lag_p95, 1).padStart(10)}  ${f(stats.note_p50, 1).padStart(25)}  ${f(stats.note_p95, 1).padStart(6)}  ${String(ids.length - done).padStart(4)}  ${
    f(cpu0 === undefined || cpu1 === undefined ? NaN : ((cpu1 - cpu0) / elapsed) * 100)} %`)
  const pass = stats.executions === ids.length && Number(stats.lag_p95) < TARGET_LAG_P95_MS && Number(stats.note_p50) < TARGET_NOTIFICATION_P50_MS
  log("")
  log(`  lag p95 ${f(stats.lag_p95, 1)} ms (target < ${TARGET_LAG_P95_MS}), event → notification p50 ${f(stats.note_p50, 1)} ms (target < ${TARGET_NOTIFICATION_P50_MS}) at ${
    f(committedPerSecond)} events/s: ${pass ? "PASS" : "BELOW TARGET"}`)
  return { committedPerSecond, ...stats, notifications: done, late: ids.length - done, pass }
}
