// Regrade plan commits at volume (learning corrections): a plan of 10,000 items (full credit on
// 10,000 graded attempts of 0 points) committed through the host and applied by ONE worker
// process — `birzha worker`, as production starts it — chunk by chunk (500 items per transaction,
// a durable cursor). Prints items/s (target ≥ 5,000) against a bare baseline in the same run: this
// script applying a twin plan of 10,000 items with the same chunking and the same rows written by
// hand-made multi-row statements over pg (lock and base check, layers, revision and status,
// audit entries, graded/accepted events, item marks, cursor) — the floor of what the commit must
// write. Both results are verified in the database (one plan layer, one audit entry, two events
// per submission, every submission accepted, the plan committed). The course and the plans go
// through the host; the learners, submissions and first layers are written in SQL. The worker is
// started before the commit and has sequenced the baseline's events when the commit is made; its
// CPU and the database's (all backends) are counted from the commit to the plan's end.
import { spawn } from "node:child_process"
import { closeSync, openSync } from "node:fs"
import { join, resolve } from "node:path"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { benchDatabase, databaseBackends, signInOnHost } from "./lib/database.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { insertLearners, publishedRun } from "./lib/learning-course.mjs"
import { childCpuSeconds, commandFlags, repoRoot } from "./lib/processes.mjs"

export const name = "regrade-plan"
export const description = "a 10,000-item regrade plan committed by one worker process (chunks of 500), items/s vs a bare multi-row SQL baseline"

const SECRET = "regrade-plan bench: a server secret of 32+ characters"
const ORIGIN = "http://birzha.bench.test"
const ITEMS = Number(process.env.BENCH_REGRADE_ITEMS ?? 10_000)
const LEARNERS = 100
const CHUNK = 500
const TARGET = 5000

// BENCH_WORKER_NODE_OPTIONS: extra node flags for the worker (e.g. "--cpu-prof --cpu-prof-dir=DIR" for a profile of the commit).
const workerFlags = (process.env.BENCH_WORKER_NODE_OPTIONS ?? "").split(" ").filter(Boolean)
const call = hostCall(ORIGIN)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx, "regrade_plan")
  const pool = new Pg.Pool({ connectionString: database.url, max: 4 })
  pool.on("error", (error) => log(`  (an idle bench connection failed: ${error.message})`))
  ctx.defer(() => pool.end())
  const q = async (text, params = []) => (await pool.query(text, params)).rows
  const env = { DATABASE_URL: database.url, BIRZHA_SECRET: SECRET, BIRZHA_PUBLIC_ORIGIN: ORIGIN }
  const host = await ctx.startHost({ env })
  const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)

  // Two identical graded steps: the worker's plan on `w`, the baseline's on `b`.
  const course = await call(host.url, cookie, "POST", "/api/v1/learning/courses", { requestUuid: randomUUID(), title: "Пересчёт", kind: "single" })
  const grading = { maxPoints: 10, check: { kind: "exact", answers: ["42"] } }
  const nodes = [
    { nodeKey: "m1", kind: "module", title: "Модуль" },
    { nodeKey: "w", parentKey: "m1", kind: "step", stepType: "quiz", title: "Вопрос W", body: "?", grading },
    { nodeKey: "b", parentKey: "m1", kind: "step", stepType: "quiz", title: "Вопрос B", body: "?", grading }
  ]
  const runRow = await publishedRun(call, host.url, cookie, course, nodes)
  const client = await pool.connect()
  try {
    await insertLearners(client, { runUuid: runRow.uuid, courseUuid: course.uuid, count: LEARNERS })
  } finally {
    client.release()
  }
  // ITEMS graded attempts of 0 points per step, spread over the learners, each with its first (auto) layer.
  for (const step of ["w", "b"]) {
    await q(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, attempt_no,
        reply, status, attempt_counted)
      SELECT gen_random_uuid(), md5('le' || (g % ${LEARNERS} + 1))::uuid, $1, $2, md5('lp' || (g % ${LEARNERS} + 1))::uuid, $3, 1, g, '"0"'::jsonb, 'graded', false
      FROM generate_series(1, $4::int) g`, [course.uuid, runRow.uuid, step, ITEMS])
    await q(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed)
      SELECT gen_random_uuid(), uuid, 'auto', 0, 10, 'wrong', false FROM learning_submissions WHERE node_key = $1 AND course_uuid = $2`, [step, course.uuid])
  }
  await q("VACUUM ANALYZE")
  const plans = {}
  for (const step of ["w", "b"]) {
    plans[step] = await call(host.url, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/regrade-plans`, {
      requestUuid: randomUUID(), nodeKey: step, rule: { kind: "full_credit" }, selector: { runUuid: runRow.uuid }, policy: "any"
    })
    if (plans[step].itemCount !== ITEMS) throw new Error(`the plan of ${step} has ${plans[step].itemCount} items, not ${ITEMS}`)
  }

  // CPU per item, besides items/s: the machine may be shared, and CPU per item does not depend on who else runs.
  // The commit's progress is polled every 5 ms on a connection of its own, whose backend is left
  // out of the worker's Postgres CPU (it is this script's, ~40 µs/item at 600 items/s) and counted apart.
  const poller = new Pg.Client({ connectionString: database.url })
  await poller.connect()
  ctx.defer(() => poller.end())
  const [{ pid: pollerPid }] = (await poller.query("SELECT pg_backend_pid() AS pid")).rows
  const backends = await databaseBackends(database.url, new Set([pollerPid]))
  ctx.defer(() => backends.end())
  const cpuNote = (processSeconds, postgresSeconds) =>
    `CPU ${(processSeconds / ITEMS * 1e6).toFixed(0)} µs/item` + (postgresSeconds === undefined ? "" : ` + Postgres ${(postgresSeconds / ITEMS * 1e6).toFixed(0)} µs/item`)

  // ---- the baseline: this script applies plan b, chunk by chunk ------------------------------------------------------
  await q("UPDATE learning_regrade_plans SET status = 'committing', committed_by = created_by WHERE uuid = $1", [plans.b.uuid])
  const bareCpu = process.cpuUsage()
  const barePg = await backends.cpuSeconds()
  const bareStarted = performance.now()
  for (;;) {
    const applied = await bareChunk(pool, plans.b.uuid)
    if (applied === 0) break
  }
  const bareSeconds = (performance.now() - bareStarted) / 1000
  const bareUsage = process.cpuUsage(bareCpu)
  const bareProcessSeconds = (bareUsage.user + bareUsage.system) / 1e6
  const barePgSeconds = barePg === undefined ? undefined : (await backends.cpuSeconds()) - barePg
  const bare = ITEMS / bareSeconds
  await verify(q, plans.b.uuid, "b", course.uuid)

  // ---- the host: commit through the API, one worker process applies it -------------------------------------------------
  const logFile = join(ctx.workDir, "worker.log")
  const fd = openSync(logFile, "a")
  const worker = spawn(process.execPath, [...commandFlags(), ...workerFlags, resolve(repoRoot, "packages/cli/dist/bin.js"), "worker"], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", fd, fd] })
  closeSync(fd)
  const exited = new Promise((done) => worker.once("exit", done))
  ctx.defer(async () => {
    if (worker.exitCode === null && worker.signalCode === null) {
      worker.kill("SIGTERM")
      await exited
    }
  })
  // The worker first sequences what is already in the outbox (the baseline's events), so that the
  // measured part is the commit with its own events, as a worker in production meets it.
  const settleDeadline = Date.now() + 120_000
  // Then the readers of those events (the learning notifier, the rules' fan-out) have caught up, so
  // that none of the baseline's downstream work is left for the idle pause and the commit.
  const behind = "SELECT (SELECT count(*) FROM outbox_events WHERE position IS NULL) + (SELECT count(*) FROM learning_notification_queue WHERE status = 'pending') " +
    "+ (SELECT last_position FROM event_sequence) * 2 - (SELECT position FROM learning_notifier_cursor) - (SELECT position FROM automation_cursor) AS n"
  while (Number((await q(behind))[0].n) > 0) {
    if (Date.now() > settleDeadline) throw new Error(`the worker did not sequence the outbox and catch up within 120 s (log: ${logFile})`)
    await sleep(100)
  }
  // The worker's idle CPU (its jobs' polls) over the pause, worker and Postgres, per second: a cost
  // that goes on while the commit runs, so its share of the CPU per item grows as the commit slows.
  const idleCpu = childCpuSeconds(worker.pid) ?? 0
  const idlePg = await backends.cpuSeconds()
  const idleStarted = performance.now()
  await sleep(3000)
  const idleSeconds = (performance.now() - idleStarted) / 1000
  const idleWorker = ((childCpuSeconds(worker.pid) ?? 0) - idleCpu) / idleSeconds
  const idlePostgres = idlePg === undefined ? undefined : ((await backends.cpuSeconds()) - idlePg) / idleSeconds
  const committing = await call(host.url, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/regrade-plans/${plans.w.uuid}/commit`, { requestUuid: randomUUID() })
  if (committing.status !== "committing") throw new Error(`the commit answered ${committing.status}, not committing`)
  const started = performance.now()
  const cpuStart = childCpuSeconds(worker.pid) ?? 0
  const pgStart = await backends.cpuSeconds()
  const pollerStart = childCpuSeconds(pollerPid)
  // Polled every 5 ms: the first chunk seen applied starts the clock, the plan seen committed stops it.
  let first
  const deadline = Date.now() + Math.max(120_000, ITEMS * 20)
  for (;;) {
    const { rows: [plan] } = await poller.query({ name: "plan-progress", text: "SELECT cursor, status FROM learning_regrade_plans WHERE uuid = $1", values: [plans.w.uuid] })
    const now = performance.now()
    if (first === undefined && plan.cursor > 0) first = { at: now, cursor: plan.cursor }
    if (plan.status === "committed") {
      const workerCpu = (childCpuSeconds(worker.pid) ?? 0) - cpuStart
      const workerPg = pgStart === undefined ? undefined : (await backends.cpuSeconds()) - pgStart
      const pollerCpu = pollerStart === undefined ? undefined : (childCpuSeconds(pollerPid) ?? pollerStart) - pollerStart
      const windowSeconds = (now - started) / 1000
      const applying = (ITEMS - first.cursor) / ((now - first.at) / 1000)
      const whole = ITEMS / ((now - started) / 1000)
      await verify(q, plans.w.uuid, "w", course.uuid)
      log(`  verified: both plans committed; per submission one plan layer of 10 points, one score.plan audit entry, graded + accepted events, status accepted`)
      log(`  worker (birzha worker, 1 process, chunks of ${CHUNK}): ${applying.toFixed(0)} items/s from its first chunk to the last ` +
        `(target ≥ ${TARGET}: ${applying >= TARGET ? "met" : "NOT met"}); ${whole.toFixed(0)} items/s from the commit's answer (the corrections job's pass every 2 s included); ` +
        `worker ${cpuNote(workerCpu, workerPg)}`)
      log(`  worker idle (its jobs' polls, the 3 s before the commit): ${(idleWorker * 1000).toFixed(0)} ms/s` +
        (idlePostgres === undefined ? "" : ` + Postgres ${(idlePostgres * 1000).toFixed(0)} ms/s`) +
        (pollerCpu === undefined ? "" : `; this script's progress polls (left out): Postgres ${(pollerCpu / ITEMS * 1e6).toFixed(0)} µs/item`))
      log(`  baseline (bare multi-row SQL from this script, chunks of ${CHUNK}): ${bare.toFixed(0)} items/s; ${cpuNote(bareProcessSeconds, barePgSeconds)}`)
      log(`  ratio worker/baseline items/s ${(applying / bare).toFixed(2)}` +
        (workerPg === undefined || barePgSeconds === undefined ? "" : `; CPU per item baseline/worker ${((bareProcessSeconds + barePgSeconds) / (workerCpu + workerPg)).toFixed(2)}`))
      worker.kill("SIGTERM")
      await exited
      return {
        items: ITEMS, workerItemsPerSecond: applying, workerWholeItemsPerSecond: whole, baselineItemsPerSecond: bare, ratio: applying / bare,
        workerCpuSeconds: workerCpu, workerPostgresCpuSeconds: workerPg, baselineCpuSeconds: bareProcessSeconds, baselinePostgresCpuSeconds: barePgSeconds,
        workerIdleCpuPerSecond: idleWorker, workerIdlePostgresCpuPerSecond: idlePostgres, commitSeconds: windowSeconds
      }
    }
    if (Date.now() > deadline) throw new Error(`the worker had applied ${plan.cursor} of ${ITEMS} items when the bench gave up (log: ${logFile})`)
    await sleep(5)
  }
}

/** The committed plan's rows: every item applied once with full credit, its audit entry and its two events. */
const verify = async (q, planUuid, step, courseUuid) => {
  const [check] = await q(`SELECT p.status, p.cursor,
      (SELECT count(*)::int FROM learning_score_layers l WHERE l.kind = 'plan' AND l.source_uuid = p.uuid AND l.points = 10) AS layers,
      (SELECT count(DISTINCT l.submission_uuid)::int FROM learning_score_layers l WHERE l.kind = 'plan' AND l.source_uuid = p.uuid) AS submissions,
      (SELECT count(*)::int FROM learning_submissions s WHERE s.course_uuid = $3 AND s.node_key = $2 AND s.status = 'accepted' AND s.revision = 3) AS accepted,
      (SELECT count(*)::int FROM learning_audit_events a JOIN learning_submissions s ON s.uuid = a.subject_uuid
        WHERE a.action = 'score.plan' AND s.node_key = $2 AND s.course_uuid = $3) AS audit,
      (SELECT count(*)::int FROM outbox_events o JOIN learning_submissions s ON s.uuid = o.aggregate_uuid WHERE s.node_key = $2 AND s.course_uuid = $3) AS events
    FROM learning_regrade_plans p WHERE p.uuid = $1`, [planUuid, step, courseUuid])
  const want = { status: "committed", cursor: ITEMS, layers: ITEMS, submissions: ITEMS, accepted: ITEMS, audit: ITEMS, events: 2 * ITEMS }
  if (JSON.stringify(check) !== JSON.stringify(want)) throw new Error(`plan ${step} did not commit as it should: ${JSON.stringify(check)} instead of ${JSON.stringify(want)}`)
}

/**
 * One chunk of the bare baseline in one transaction: the plan locked, its next items, their
 * submissions locked with the base re-checked, then one statement each for the layers, the
 * submissions' revision and status, the audit entries, the events, the items' marks and the cursor.
 */
const bareChunk = async (pool, planUuid) => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const { rows: [plan] } = await client.query("SELECT uuid, cursor, item_count, committed_by, course_uuid FROM learning_regrade_plans WHERE uuid = $1 AND status = 'committing' FOR UPDATE", [planUuid])
    if (plan === undefined) {
      await client.query("COMMIT")
      return 0
    }
    const { rows: items } = await client.query(`SELECT n, submission_uuid, base, new_points, new_verdict FROM learning_regrade_plan_items
      WHERE plan_uuid = $1 AND n > $2 ORDER BY n LIMIT ${CHUNK}`, [planUuid, plan.cursor])
    const { rows: submissions } = await client.query(`SELECT s.uuid, s.status, s.revision, s.enrollment_uuid, s.run_uuid, s.profile_uuid, s.node_key,
        (SELECT md5(coalesce(string_agg(l.uuid::text || CASE WHEN l.revoked_at IS NULL THEN '' ELSE 'r' END, ',' ORDER BY l.created_at, l.uuid), ''))
          FROM learning_score_layers l WHERE l.submission_uuid = s.uuid) AS base
      FROM learning_submissions s WHERE s.uuid = ANY($1::uuid[]) ORDER BY s.uuid FOR UPDATE OF s`, [items.map((item) => item.submission_uuid)])
    const byUuid = new Map(submissions.map((row) => [row.uuid, row]))
    if (items.some((item) => byUuid.get(item.submission_uuid).base !== item.base)) throw new Error("baseline: a base moved")
    const layers = items.map((item) => ({ uuid: randomUUID(), submission_uuid: item.submission_uuid, points: Number(item.new_points), verdict: item.new_verdict }))
    await client.query(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed, late, released, only_if_higher,
        source_uuid, by_profile_uuid, reason)
      SELECT l.uuid, l.submission_uuid, 'plan', l.points, 10, l.verdict, true, false, true, false, $2::uuid, $3, 'regrade plan ' || $2::text || ': full_credit'
      FROM jsonb_to_recordset($1::jsonb) AS l(uuid uuid, submission_uuid uuid, points numeric, verdict text)`, [JSON.stringify(layers), planUuid, plan.committed_by])
    const { rows: updated } = await client.query(`UPDATE learning_submissions s SET revision = s.revision + 2, status = 'accepted', updated_at = now()
      WHERE s.uuid = ANY($1::uuid[]) RETURNING s.uuid, s.revision`, [items.map((item) => item.submission_uuid)])
    const revisions = new Map(updated.map((row) => [row.uuid, row.revision]))
    await client.query(`INSERT INTO learning_audit_events (course_uuid, actor_profile_uuid, action, subject_kind, subject_uuid, enrollment_uuid, before, after, reason)
      SELECT $2, $3, 'score.plan', 'submission', a.subject_uuid, a.enrollment_uuid, a.before, a.after, 'regrade plan ' || $4::text || ': full_credit'
      FROM jsonb_to_recordset($1::jsonb) AS a(subject_uuid uuid, enrollment_uuid uuid, before jsonb, after jsonb)`, [JSON.stringify(layers.map((layer) => {
      const row = byUuid.get(layer.submission_uuid)
      return {
        subject_uuid: row.uuid,
        enrollment_uuid: row.enrollment_uuid,
        before: { points: 0, maxPoints: 10, verdict: "wrong", passed: false },
        after: { layerUuid: layer.uuid, kind: "plan", points: layer.points, maxPoints: 10, verdict: layer.verdict, passed: true, changedLayerUuid: layer.uuid, changedLayerKind: "plan" }
      }
    })), plan.course_uuid, plan.committed_by, planUuid])
    const events = layers.flatMap((layer) => {
      const row = byUuid.get(layer.submission_uuid)
      const context = { profileUuid: row.profile_uuid, audience: [row.profile_uuid], courseUuid: plan.course_uuid, runUuid: row.run_uuid, enrollmentUuid: row.enrollment_uuid, nodeKey: row.node_key, submissionUuid: row.uuid }
      const revision = revisions.get(row.uuid)
      return [
        { uuid: randomUUID(), type: "learning.submission.graded", revision: revision - 1, data: { objectUuid: row.uuid, status: "graded" }, context, aggregate_uuid: row.uuid },
        { uuid: randomUUID(), type: "learning.submission.accepted", revision, data: { objectUuid: row.uuid, status: "accepted" }, context, aggregate_uuid: row.uuid }
      ]
    })
    await client.query(`INSERT INTO outbox_events (uuid, type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
      SELECT e.uuid, e.type, 'learning_submission', e.aggregate_uuid, e.revision, e.data, e.context
      FROM jsonb_to_recordset($1::jsonb) AS e(uuid uuid, type text, aggregate_uuid uuid, revision int, data jsonb, context jsonb)`, [JSON.stringify(events)])
    await client.query(`UPDATE learning_regrade_plan_items i SET applied_layer_uuid = m.layer, done_at = now()
      FROM jsonb_to_recordset($2::jsonb) AS m(n int, layer uuid) WHERE i.plan_uuid = $1 AND i.n = m.n`,
    [planUuid, JSON.stringify(items.map((item, i) => ({ n: item.n, layer: layers[i].uuid })))])
    const cursor = items.at(-1)?.n ?? plan.cursor
    await client.query(`UPDATE learning_regrade_plans SET cursor = $2::int, status = CASE WHEN $2::int >= item_count THEN 'committed' ELSE status END,
        committed_at = CASE WHEN $2::int >= item_count THEN now() ELSE committed_at END WHERE uuid = $1`, [planUuid, cursor])
    await client.query("COMMIT")
    return items.length
  } catch (error) {
    await client.query("ROLLBACK")
    throw error
  } finally {
    client.release()
  }
}
