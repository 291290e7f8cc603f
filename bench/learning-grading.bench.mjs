// Learning grading throughput: an external grader (bench/lib/grader-server.mjs, its own
// process, verifying every Standard Webhooks signature) answers after 50 ms; a queue of
// submissions on a step graded by that checker; ONE worker process — `birzha worker`, as
// production starts it — drains it. Prints the sustained jobs/s (target ≥ 200) against a bare
// loop in this script (claims rows with SKIP LOCKED, signs and calls the same grader with the same
// concurrency over a keep-alive agent, writes the verdict), and verifies in the database that
// every queued job was graded (job succeeded, submission accepted, one auto score layer each).
// Second scenario: B's jobs (50 ms grader) offered at a steady rate, alone and then while checker
// A's grader (5 s) holds all of A's slots; B's p95 queue-to-verdict latency with A must stay within
// 20 % of B's without A. The course, checkers (preflighted by the worker), run and one real
// submission per step go through the host; the learners and the queued submissions are written in
// SQL (the submissions as copies of the real one, each with its own learner and attempt).
import { spawn } from "node:child_process"
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import { openSync, closeSync } from "node:fs"
import http from "node:http"
import { join, resolve } from "node:path"
import Pg from "pg"
import { benchDatabase, signInOnHost, withClient } from "./lib/database.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { insertLearners, publishedRun } from "./lib/learning-course.mjs"
import { commandFlags, childCpuSeconds, freePort, repoRoot, startProcess } from "./lib/processes.mjs"

export const name = "learning-grading"
export const description = "learning grading jobs drained by one worker process against an external grader answering in 50 ms, vs a bare SKIP LOCKED loop"

const SECRET = "learning-grading bench: a server secret of 32+ characters"
const ORIGIN = "http://birzha.bench.test"
const GRADER_SECRET = "whsec_" + randomBytes(32).toString("base64")
const LEARNERS = 200
const JOBS = Number(process.env.BENCH_GRADING_JOBS ?? 6000)
/** The fast checker's concurrency: also the bare loop's calls in flight. */
const CONCURRENCY = 64
const TARGET = 200
/** Scenario 2: B's offered jobs/s and for how long; A's slow jobs (its concurrency 8 keeps 8 in flight). */
const B_RATE = 25
const B_SECONDS = 12
const A_JOBS = 40

const call = hostCall(ORIGIN)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const percentile = (sorted, p) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx, "learning_grading")
  const pool = new Pg.Pool({ connectionString: database.url, max: 10 })
  pool.on("error", (error) => log(`  (an idle bench connection failed: ${error.message})`))
  ctx.defer(() => pool.end())
  const q = async (text, params = []) => (await pool.query(text, params)).rows

  const graderPort = await freePort()
  const grader = await startProcess({
    label: "grader", entry: join(repoRoot, "bench", "lib", "grader-server.mjs"), args: [String(graderPort), "127.0.0.1"],
    env: { BENCH_GRADER_SECRET: GRADER_SECRET }, port: graderPort, readyPath: "/__ready", workDir: ctx.workDir
  })
  ctx.defer(() => grader.stop())
  const graderStats = async () => JSON.parse(await (await fetch(`${grader.url}/__stats`)).text())
  const env = { DATABASE_URL: database.url, BIRZHA_SECRET: SECRET, BIRZHA_PUBLIC_ORIGIN: ORIGIN, BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1" }
  const host = await ctx.startHost({ env })
  const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)

  // `birzha worker`, the production entry, with its output in the work directory.
  let workers = 0
  const startWorker = () => {
    const logFile = join(ctx.workDir, `worker-${++workers}.log`)
    const fd = openSync(logFile, "a")
    // BENCH_WORKER_NODE_OPTIONS: node flags for the worker, e.g. "--cpu-prof --cpu-prof-dir=.bench/profiles/grading".
    const flags = (process.env.BENCH_WORKER_NODE_OPTIONS ?? "").split(" ").filter(Boolean)
    const child = spawn(process.execPath, [...commandFlags(), ...flags, resolve(repoRoot, "packages/cli/dist/bin.js"), "worker"], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", fd, fd] })
    closeSync(fd)
    const exited = new Promise((done) => child.once("exit", done))
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGTERM")
      if (await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)])) return
      log(`  (worker ${child.pid} did not stop within 15 s of SIGTERM; killed)`)
      child.kill("SIGKILL")
      await exited
    }
    ctx.defer(stop)
    return { pid: child.pid, stop, logFile }
  }

  // The course, two checkers (preflighted by a worker), the graded steps, a running run.
  const course = await call(host.url, cookie, "POST", "/api/v1/learning/courses", { requestUuid: randomUUID(), title: "Проверка запросов", kind: "single" })
  const makeChecker = (label, delayMs, timeoutMs, concurrency) =>
    call(host.url, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/checkers`, {
      requestUuid: randomUUID(), name: label, kind: "http", url: `http://127.0.0.1:${graderPort}/grade/${delayMs}`, secret: GRADER_SECRET,
      timeoutMs, concurrency, referenceCases: [{ name: "accepts", reply: "SELECT 1", expected: "correct" }]
    })
  const fast = await makeChecker("fast grader (B)", 50, 2000, CONCURRENCY)
  const slow = await makeChecker("slow grader (A)", 5000, 10_000, 8)
  for (const checker of [fast, slow]) {
    await call(host.url, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/checkers/${checker.uuid}/preflight`, { requestUuid: randomUUID() })
  }
  const preflighting = startWorker()
  const preflightDeadline = Date.now() + 60_000
  for (;;) {
    const statuses = await Promise.all([fast, slow].map(async (c) => (await call(host.url, cookie, "GET", `/api/v1/learning/courses/${course.uuid}/checkers/${c.uuid}`)).status))
    if (statuses.every((s) => s === "ready")) break
    if (Date.now() > preflightDeadline) throw new Error(`the checkers were not ready 60 s after their preflight: ${statuses.join(", ")}`)
    await sleep(200)
  }
  await preflighting.stop()
  const nodes = [
    { nodeKey: "m1", kind: "module", title: "Запросы" },
    { nodeKey: "fast", parentKey: "m1", kind: "step", stepType: "code", title: "Быстрый", body: "Запрос", grading: { maxPoints: 10, checkerUuid: fast.uuid } },
    { nodeKey: "slow", parentKey: "m1", kind: "step", stepType: "code", title: "Медленный", body: "Запрос", grading: { maxPoints: 10, checkerUuid: slow.uuid } }
  ]
  const runRow = await publishedRun(call, host.url, cookie, course, nodes)
  const learnerCookie = await withClient(database.url, async (client) => {
    await insertLearners(client, { runUuid: runRow.uuid, courseUuid: course.uuid, count: LEARNERS })
    const token = randomBytes(32).toString("base64url")
    await client.query(`INSERT INTO sessions (token_hash, account_uuid, profile_uuid, expires_at)
      VALUES ($1, md5('la1')::uuid, md5('lp1')::uuid, now() + interval '1 day')`, [createHmac("sha256", SECRET).update(`session\n${token}`).digest("base64url")])
    return `__Host-birzha_session=${token}`
  })
  const enrollment1 = (await q("SELECT md5('le1')::uuid AS u"))[0].u
  // One real submission per step through the host: the templates of the queued copies.
  const template = {}
  for (const step of ["fast", "slow"]) {
    const made = await call(host.url, learnerCookie, "POST", `/api/v1/learning/enrollments/${enrollment1}/steps/${step}/submit`, { requestUuid: randomUUID(), reply: "SELECT 1" })
    if (made.status !== "submitted") throw new Error(`the template submission on ${step} is ${made.status}, not submitted`)
    template[step] = made.uuid
  }
  await q("UPDATE learning_grading_jobs SET status = 'cancelled', finished_at = now() WHERE submission_uuid IN ($1, $2)", [template.fast, template.slow])
  await q("UPDATE learning_submissions SET status = 'cancelled' WHERE uuid IN ($1, $2)", [template.fast, template.slow])

  /** Queues `count` copies of a step's template submission, each a new attempt of learner (n mod LEARNERS); returns the job uuids. */
  let copies = 0
  const enqueue = async (step, count) => {
    const from = copies + 1
    copies += count
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      await client.query(`CREATE TEMP TABLE IF NOT EXISTS bench_copies (n int, s uuid, j uuid) ON COMMIT DELETE ROWS`)
      await client.query(`INSERT INTO bench_copies SELECT g, gen_random_uuid(), gen_random_uuid() FROM generate_series($1::int, $2::int) g`, [from, copies])
      await client.query(`INSERT INTO learning_submissions SELECT (jsonb_populate_record(t, jsonb_build_object('uuid', c.s, 'status', 'submitted',
          'enrollment_uuid', md5('le' || (c.n % ${LEARNERS} + 1))::uuid, 'profile_uuid', md5('lp' || (c.n % ${LEARNERS} + 1))::uuid,
          'attempt_no', 1 + c.n, 'submitted_at', clock_timestamp(), 'created_at', now(), 'updated_at', now()))).*
        FROM learning_submissions t, bench_copies c WHERE t.uuid = $1`, [template[step]])
      const { rows } = await client.query(`INSERT INTO learning_grading_jobs SELECT (jsonb_populate_record(tj, jsonb_build_object('uuid', c.j, 'submission_uuid', c.s,
          'status', 'queued', 'finished_at', NULL, 'enrollment_uuid', md5('le' || (c.n % ${LEARNERS} + 1))::uuid,
          'created_at', clock_timestamp(), 'updated_at', now(), 'next_try_at', now()))).*
        FROM learning_grading_jobs tj, bench_copies c WHERE tj.submission_uuid = $1 RETURNING uuid`, [template[step]])
      await client.query("COMMIT")
      return rows.map((row) => row.uuid)
    } catch (error) {
      await client.query("ROLLBACK")
      throw error
    } finally {
      client.release()
    }
  }

  // ---- scenario 1: the bare loop, then the worker, on queues of JOBS each --------------------------------------------
  await q(`CREATE TABLE bench_baseline_jobs (uuid uuid PRIMARY KEY, body text NOT NULL, status text NOT NULL DEFAULT 'queued', tries int NOT NULL DEFAULT 0,
    lease_until timestamptz, verdict text, result jsonb, created_at timestamptz NOT NULL DEFAULT clock_timestamp(), finished_at timestamptz)`)
  await q(`CREATE INDEX bench_baseline_due ON bench_baseline_jobs (created_at) WHERE status = 'queued'`)
  await q(`INSERT INTO bench_baseline_jobs (uuid, body) SELECT u, json_build_object('jobUuid', u, 'kind', 'grade', 'courseUuid', $1::uuid, 'nodeKey', 'fast',
    'submissionUuid', gen_random_uuid(), 'attemptNo', g, 'reply', 'SELECT 1', 'clue', NULL)::text FROM (SELECT gen_random_uuid() AS u, g FROM generate_series(1, $2::int) g) x`,
    [course.uuid, JOBS])
  const baseline = await bareLoop(pool, `http://127.0.0.1:${graderPort}/grade/50`)
  const [bareCheck] = await q("SELECT count(*) FILTER (WHERE status = 'succeeded' AND verdict = 'accepted')::int AS graded, count(*)::int AS total FROM bench_baseline_jobs")
  if (bareCheck.graded !== JOBS) throw new Error(`the bare loop graded ${bareCheck.graded} of ${JOBS}`)

  const queued = await enqueue("fast", JOBS)
  await q("VACUUM ANALYZE learning_grading_jobs")
  await q("VACUUM ANALYZE learning_submissions")
  const before = await graderStats()
  const worker = startWorker()
  const cpuStart = childCpuSeconds(worker.pid) ?? 0
  const drainDeadline = Date.now() + Math.max(120_000, JOBS * 20)
  for (;;) {
    const [{ left }] = await q("SELECT count(*)::int AS left FROM learning_grading_jobs WHERE uuid = ANY($1) AND status IN ('queued', 'running')", [queued])
    if (left === 0) break
    if (Date.now() > drainDeadline) throw new Error(`the worker left ${left} of ${JOBS} jobs undone after ${(drainDeadline - Date.now()) / 1000 + Math.max(120, JOBS / 50)} s`)
    await sleep(200)
  }
  const workerCpu = (childCpuSeconds(worker.pid) ?? 0) - cpuStart
  const after = await graderStats()
  // Verified in the database: every queued job graded once (succeeded, accepted), its submission accepted with one auto layer.
  const [check] = await q(`SELECT
      count(*) FILTER (WHERE j.status = 'succeeded' AND j.verdict = 'accepted' AND j.tries = 1)::int AS jobs,
      count(*) FILTER (WHERE s.status = 'accepted')::int AS submissions,
      (SELECT count(*)::int FROM learning_score_layers l WHERE l.submission_uuid IN (SELECT submission_uuid FROM learning_grading_jobs WHERE uuid = ANY($1))
        AND l.kind = 'auto' AND l.points = 10) AS layers,
      extract(epoch FROM max(j.finished_at) - min(j.started_at))::float AS span
    FROM learning_grading_jobs j JOIN learning_submissions s ON s.uuid = j.submission_uuid WHERE j.uuid = ANY($1)`, [queued])
  const finished = (await q("SELECT extract(epoch FROM finished_at)::float AS t FROM learning_grading_jobs WHERE uuid = ANY($1) ORDER BY finished_at", [queued])).map((r) => r.t)
  const graderCalls = (after.answered["/grade/50"] ?? 0) - (before.answered["/grade/50"] ?? 0)
  const failures = [
    check.jobs !== JOBS && `${check.jobs} of ${JOBS} jobs succeeded with an accepted verdict on their first try`,
    check.submissions !== JOBS && `${check.submissions} of ${JOBS} submissions accepted`,
    check.layers !== JOBS && `${check.layers} auto score layers for ${JOBS} submissions`,
    graderCalls !== JOBS && `the grader answered ${graderCalls} calls for ${JOBS} jobs`,
    after.badSignatures > 0 && `${after.badSignatures} requests with a bad signature`
  ].filter(Boolean)
  if (failures.length > 0) throw new Error(`the worker did not grade every job: ${failures.join("; ")}`)
  const overall = JOBS / check.span
  const t10 = finished[Math.floor(JOBS * 0.1)]
  const t90 = finished[Math.floor(JOBS * 0.9)]
  const sustained = (Math.floor(JOBS * 0.9) - Math.floor(JOBS * 0.1)) / (t90 - t10)
  const ratio = sustained / baseline.sustained
  log(`  verified: ${check.jobs} jobs succeeded (accepted, first try), ${check.submissions} submissions accepted, ${check.layers} auto layers, ` +
    `${graderCalls} grader calls, ${after.badSignatures} bad signatures; grader in flight at most ${after.maxInFlight["/grade/50"]}`)
  log(`  worker (birzha worker, 1 process): ${sustained.toFixed(0)} jobs/s sustained (10th–90th percentile of finishes; target ≥ ${TARGET}: ` +
    `${sustained >= TARGET ? "met" : "NOT met"}), ${overall.toFixed(0)} jobs/s first claim → last finish; worker CPU ${(workerCpu / check.span * 100).toFixed(0)} % of a core, ` +
    `${(workerCpu / JOBS * 1e6).toFixed(0)} µs/job`)
  log(`  baseline (bare SKIP LOCKED loop, ${CONCURRENCY} calls in flight): ${baseline.sustained.toFixed(0)} jobs/s sustained, ${baseline.overall.toFixed(0)} overall; ` +
    `ratio worker/baseline ${ratio.toFixed(2)}`)

  // ---- scenario 2: B's latency alone, then with A's slow grader holding A's slots ----------------------------------
  const offerB = async () => {
    const jobs = []
    const started = Date.now()
    for (let tick = 0; tick < B_SECONDS * 10; tick++) {
      jobs.push(...await enqueue("fast", Math.round(B_RATE * (tick + 1) / 10) - Math.round(B_RATE * tick / 10)))
      const next = started + (tick + 1) * 100
      await sleep(Math.max(0, next - Date.now()))
    }
    const deadline = Date.now() + 60_000
    while ((await q("SELECT count(*)::int AS n FROM learning_grading_jobs WHERE uuid = ANY($1) AND status <> 'succeeded'", [jobs]))[0].n > 0) {
      if (Date.now() > deadline) throw new Error("B's jobs were not all graded 60 s after the offer ended")
      await sleep(200)
    }
    const latencies = (await q(`SELECT extract(epoch FROM finished_at - created_at)::float * 1000 AS ms FROM learning_grading_jobs WHERE uuid = ANY($1) ORDER BY 1`, [jobs]))
      .map((r) => r.ms)
    return { jobs: jobs.length, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), p99: percentile(latencies, 0.99), max: latencies.at(-1) }
  }
  const alone = await offerB()
  const slowJobs = await enqueue("slow", A_JOBS)
  await sleep(1000)
  const aInFlight = (await graderStats()).maxInFlight["/grade/5000"] ?? 0
  const withA = await offerB()
  const [aState] = await q("SELECT count(*) FILTER (WHERE status = 'running')::int AS running, count(*) FILTER (WHERE status = 'succeeded')::int AS done FROM learning_grading_jobs WHERE uuid = ANY($1)", [slowJobs])
  await q("UPDATE learning_grading_jobs SET status = 'cancelled', finished_at = now() WHERE uuid = ANY($1) AND status = 'queued'", [slowJobs])
  const row = (label, r) => `  ${label.padEnd(34)} ${String(r.jobs).padStart(5)} jobs  p50 ${r.p50.toFixed(0).padStart(5)} ms  p95 ${r.p95.toFixed(0).padStart(5)} ms  p99 ${r.p99.toFixed(0).padStart(5)} ms  max ${r.max.toFixed(0).padStart(5)} ms`
  log(`  checker B (50 ms grader) offered ${B_RATE} jobs/s for ${B_SECONDS} s, queue-to-verdict latency:`)
  log(row("B alone", alone))
  log(row(`B while A (5 s grader) is busy`, withA))
  const change = withA.p95 / alone.p95 - 1
  log(`  A: ${aInFlight} calls in flight at once (its concurrency 8), ${aState.running} running and ${aState.done} done when B's offer ended; ` +
    `B's p95 ${change >= 0 ? "+" : ""}${(change * 100).toFixed(0)} % with A (target within 20 %: ${change <= 0.2 ? "met" : "NOT met"})`)
  await worker.stop()
  return { jobs: JOBS, sustained, overall, baseline, ratio, workerCpuSeconds: workerCpu, verified: check, latency: { alone, withA, change } }
}

/**
 * The bare loop: up to CONCURRENCY calls in flight; claims as many rows as there are free slots
 * (UPDATE … WHERE uuid IN (SELECT … FOR UPDATE SKIP LOCKED) RETURNING), signs each body in the
 * Standard Webhooks scheme, POSTs it over a keep-alive agent, and writes the verdict.
 */
const bareLoop = async (pool, url) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const key = Buffer.from(GRADER_SECRET.slice(6), "base64")
  const post = (id, body) => new Promise((done, fail) => {
    const timestamp = Math.floor(Date.now() / 1000)
    const signature = "v1," + createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")
    const req = http.request(url, {
      method: "POST", agent,
      headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signature, "content-length": Buffer.byteLength(body) }
    }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => done({ status: res.statusCode, body: Buffer.concat(chunks).toString("utf8") }))
    })
    req.on("error", fail)
    req.setTimeout(2000, () => req.destroy(new Error("timeout")))
    req.end(body)
  })
  let inFlight = 0
  const finishes = []
  const started = performance.now()
  let wake
  for (;;) {
    const free = CONCURRENCY - inFlight
    const rows = free === 0 ? [] : (await pool.query(`UPDATE bench_baseline_jobs SET status = 'running', tries = tries + 1, lease_until = now() + interval '1 minute'
      WHERE uuid IN (SELECT uuid FROM bench_baseline_jobs WHERE status = 'queued' ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING uuid, body`, [free])).rows
    for (const row of rows) {
      inFlight++
      post(row.uuid, row.body).then(async (answer) => {
        const parsed = JSON.parse(answer.body)
        await pool.query(`UPDATE bench_baseline_jobs SET status = 'succeeded', verdict = $2, result = $3, lease_until = NULL, finished_at = clock_timestamp()
          WHERE uuid = $1 AND status = 'running'`, [row.uuid, parsed.verdict, answer.body])
        finishes.push(performance.now())
      }).catch(() => {}).finally(() => {
        inFlight--
        wake?.()
      })
    }
    if (rows.length === 0 && inFlight === 0) break
    if (rows.length === 0 || inFlight >= CONCURRENCY) await new Promise((r) => { wake = r; setTimeout(r, 25) })
  }
  agent.destroy()
  finishes.sort((a, b) => a - b)
  const n = finishes.length
  const lo = Math.floor(n * 0.1)
  const hi = Math.floor(n * 0.9)
  return { overall: n / ((finishes.at(-1) - started) / 1000), sustained: (hi - lo) / ((finishes[hi] - finishes[lo]) / 1000) }
}
