// Time-driven work: the lag from a due moment to its transition, with ONE worker process —
// `birzha worker`, as production starts it — on a Postgres server. Three kinds, each with MOMENTS
// moments 250 ms apart, all written while the worker is already running (so each must wake it,
// through the `birzha_due` notifications of migration 0030, or be read as its next due moment):
//
//   - run start: cohort runs created and published through the host with `startsAt` a few seconds
//     ahead; lag = the run's `updated_at` when it became running − `startsAt`;
//   - deal auto-completion: deals in `results_submitted` written in SQL with `auto_complete_at` a
//     few seconds ahead; lag = the deal's `updated_at` when it completed − `auto_complete_at`;
//   - deadline reminders: active enrollments in a running run get a due date override through the
//     host, 24 h (the run's reminder hours) plus a few seconds ahead; lag = the
//     `learning.deadline.approaching` event's `occurred_at` − (due − 24 h).
//
// Every timestamp is the database's (`now()` of the transition's transaction), so the runner's
// clock plays no part. Prints p50 / p95 / max per kind; target p95 ≤ 2 s. The old worker polled
// these jobs once a minute: a lag spread evenly over 0–60 s (p50 ≈ 30 s, p95 ≈ 57 s).
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { closeSync, openSync } from "node:fs"
import { join, resolve } from "node:path"
import Pg from "pg"
import { benchDatabase, signInOnHost } from "./lib/database.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { insertLearners, publishedRun } from "./lib/learning-course.mjs"
import { commandFlags, repoRoot } from "./lib/processes.mjs"

export const name = "time-driven"
export const description = "lag from a due moment to its transition (run start, deal auto-completion, deadline reminder) with one worker process"

const SECRET = "time-driven bench: a server secret of 32+ characters"
const ORIGIN = "http://birzha.bench.test"
const MOMENTS = Number(process.env.BENCH_TIME_MOMENTS ?? 20)
const SPACING_MS = 250
const TARGET_P95_MS = 2_000

const call = hostCall(ORIGIN)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const percentile = (sorted, p) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx, "time_driven")
  const pool = new Pg.Pool({ connectionString: database.url, max: 4 })
  pool.on("error", (error) => log(`  (an idle bench connection failed: ${error.message})`))
  ctx.defer(() => pool.end())
  const q = async (text, params = []) => (await pool.query(text, params)).rows

  // The host (no workers with DATABASE_URL) applies the migrations and serves the setup calls.
  const env = { DATABASE_URL: database.url, BIRZHA_SECRET: SECRET, BIRZHA_PUBLIC_ORIGIN: ORIGIN }
  const host = await ctx.startHost({ env })
  const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)

  const logFile = join(ctx.workDir, "worker.log")
  const fd = openSync(logFile, "a")
  const worker = spawn(process.execPath, [...commandFlags(), resolve(repoRoot, "packages/cli/dist/bin.js"), "worker"], {
    cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", fd, fd]
  })
  closeSync(fd)
  const exited = new Promise((done) => worker.once("exit", done))
  ctx.defer(async () => {
    if (worker.exitCode !== null || worker.signalCode !== null) return
    worker.kill("SIGTERM")
    if (await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)])) return
    worker.kill("SIGKILL")
    await exited
  })

  // Setup: a published course with one step, a running run with MOMENTS active learners, and two profiles for the deals.
  const course = await call(host.url, cookie, "POST", "/api/v1/learning/courses", { requestUuid: randomUUID(), title: "Сроки", kind: "single" })
  const nodes = [{ nodeKey: "m1", kind: "module", title: "Модуль" }, { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "Шаг", body: "Текст" }]
  const running = await publishedRun(call, host.url, cookie, course, nodes)
  const client = await pool.connect()
  try {
    await insertLearners(client, { runUuid: running.uuid, courseUuid: course.uuid, count: MOMENTS })
  } finally {
    client.release()
  }
  await q(`INSERT INTO accounts (uuid, email, current_profile_uuid)
    SELECT md5('da' || g)::uuid, 'deal' || g || '@bench.invalid', md5('dp' || g)::uuid FROM generate_series(1, 2) g`)
  await q(`INSERT INTO profiles (uuid, id, account_uuid, name, type, is_public)
    SELECT md5('dp' || g)::uuid, 'deal' || g, md5('da' || g)::uuid, 'Сторона ' || g, 'Физлицо', true FROM generate_series(1, 2) g`)
  // The worker is up and idle (its jobs asleep until their fallback) before any moment is written.
  await sleep(3_000)
  if (worker.exitCode !== null) throw new Error(`the worker exited (${worker.exitCode}); see ${logFile}`)

  const report = []
  const measure = async (label, write, lags) => {
    const firstAt = Date.now() + 3_000
    await write(firstAt)
    const lastAt = firstAt + (MOMENTS - 1) * SPACING_MS
    const deadline = lastAt + 30_000
    for (;;) {
      await sleep(250)
      const rows = await lags(firstAt)
      if (rows.length >= MOMENTS || Date.now() > deadline) {
        const sorted = rows.map((row) => Number(row.lag_ms)).sort((a, b) => a - b)
        const line = { label, done: rows.length, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted.at(-1) ?? NaN, min: sorted[0] ?? NaN }
        report.push(line)
        log(`  ${label}: ${line.done}/${MOMENTS} done; lag p50 ${line.p50.toFixed(0)} ms, p95 ${line.p95.toFixed(0)} ms, ` +
          `min ${line.min.toFixed(0)} ms, max ${line.max.toFixed(0)} ms (target p95 ≤ ${TARGET_P95_MS} ms: ${line.done === MOMENTS && line.p95 <= TARGET_P95_MS ? "met" : "NOT met"})`)
        return
      }
    }
  }

  // 1. Run start: MOMENTS runs published through the host, starting 250 ms apart.
  const runs = []
  await measure("run start", async (firstAt) => {
    for (let i = 0; i < MOMENTS; i++) {
      const made = await call(host.url, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/runs`, {
        requestUuid: randomUUID(), versionNumber: 1, title: `Поток ${i}`, pacing: "cohort", startsAt: new Date(firstAt + i * SPACING_MS).toISOString(),
        admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
      })
      await call(host.url, cookie, "PATCH", `/api/v1/learning/runs/${made.uuid}`, { requestUuid: randomUUID(), expectedRevision: made.revision, publish: true })
      runs.push(made.uuid)
    }
  }, () => q(`SELECT extract(epoch FROM updated_at - starts_at) * 1000 AS lag_ms FROM learning_runs WHERE uuid = ANY($1) AND status = 'running'`, [runs]))

  // 2. Deal auto-completion: MOMENTS deals (each from its accepted offer) handed over, completing 250 ms apart.
  await measure("deal auto-completion", async (firstAt) => {
    await q(`INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body, budget)
      SELECT md5('do' || g)::uuid, 'offer', 'accepted', md5('dp1')::uuid, md5('dp2')::uuid, 'customer', 'Предложение ' || g, '1000 ₽'
      FROM generate_series(1, ${MOMENTS}) g`)
    await q(`INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, origin_relation_uuid, body, budget, auto_complete_at)
      SELECT md5('dd' || g)::uuid, 'deal', 'results_submitted', md5('dp1')::uuid, md5('dp2')::uuid, 'customer', md5('do' || g)::uuid,
        'Сделка ' || g, '1000 ₽', to_timestamp(($1::bigint + (g - 1) * ${SPACING_MS}) / 1000.0)
      FROM generate_series(1, ${MOMENTS}) g`, [firstAt])
  }, (firstAt) => q(`SELECT extract(epoch FROM r.updated_at - h.due) * 1000 AS lag_ms
      FROM relations r JOIN (SELECT md5('dd' || g)::uuid AS uuid, to_timestamp(($1::bigint + (g - 1) * ${SPACING_MS}) / 1000.0) AS due
        FROM generate_series(1, ${MOMENTS}) g) h ON h.uuid = r.uuid
      WHERE r.status = 'completed'`, [firstAt]))

  // 3. Deadline reminders: each learner's step due 24 h + a few seconds ahead (an override through the host).
  let remindersFrom = 0
  await measure("deadline reminder", async (firstAt) => {
    remindersFrom = Date.now()
    for (let i = 0; i < MOMENTS; i++) {
      const [enrollment] = await q(`SELECT md5('le' || $1::int)::uuid AS uuid`, [i + 1])
      await call(host.url, cookie, "POST", `/api/v1/learning/enrollments/${enrollment.uuid}/overrides`, {
        requestUuid: randomUUID(), nodeKey: "s1", dueAt: new Date(firstAt + i * SPACING_MS + 24 * 3_600_000).toISOString(), reason: `Срок ${i}`
      })
    }
  }, () => q(`SELECT extract(epoch FROM e.occurred_at - ((e.data->>'dueAt')::timestamptz - make_interval(hours => (e.data->>'hours')::int))) * 1000 AS lag_ms
      FROM outbox_events e WHERE e.type = 'learning.deadline.approaching' AND e.occurred_at >= to_timestamp($1 / 1000.0)`, [remindersFrom]))

  const met = report.every((line) => line.done === MOMENTS && line.p95 <= TARGET_P95_MS)
  log(`  summary: ${report.map((line) => `${line.label} p95 ${line.p95.toFixed(0)} ms`).join(", ")} — target p95 ≤ ${TARGET_P95_MS} ms ${met ? "met" : "NOT met"}; ` +
    `the old minute poll: p50 ≈ 30 000 ms, p95 ≈ 57 000 ms`)
  return { moments: MOMENTS, kinds: report, pass: met }
}
