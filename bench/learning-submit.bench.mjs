// Learning submissions: learning.submissions.create on a declaratively checked step
// (exact), sustained by 100 learners at the runner's connections, each request a new requestUuid
// (graded inline, accepted, two events each), with a worker process sequencing the events;
// target ≥ 500/s with every event sequenced. Against bench/lib/bare-learning-submit-server.mjs, a
// bare node:http + pg server running the same transaction, in the same run (baseline, host). The
// course is created and published through the host; the learners' accounts, sessions and active
// enrollments are written in SQL.
import { spawn } from "node:child_process"
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import { join, resolve } from "node:path"
import { benchDatabase, signInOnHost, withClient } from "./lib/database.mjs"
import { micros } from "./lib/load.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { insertLearners, publishedRun } from "./lib/learning-course.mjs"
import { commandFlags, freePort, repoRoot, startProcess } from "./lib/processes.mjs"

export const name = "learning-submit"
export const description = "learning.submissions.create on a declaratively graded step, sustained with events sequenced, vs bare node:http + pg"

const SECRET = "learning-submit bench: a server secret of 32+ characters"
const ORIGIN = "http://birzha.bench.test"
const LEARNERS = 100
const TARGET = 500

const call = hostCall(ORIGIN)

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx, "learning_submit")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_SECRET: SECRET, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)
  const course = await call(host.url, cookie, "POST", "/api/v1/learning/courses", { requestUuid: randomUUID(), title: "Основы SQL", kind: "single" })
  const nodes = [
    { nodeKey: "m1", kind: "module", title: "Запросы" },
    { nodeKey: "q1", parentKey: "m1", kind: "step", stepType: "quiz", title: "Первый запрос", body: "Выберите всё", grading: { maxPoints: 10, check: { kind: "exact", answers: ["SELECT 1"] } } }
  ]
  const run = await publishedRun(call, host.url, cookie, course, nodes)
  const learners = await withClient(database.url, async (client) => {
    await insertLearners(client, { runUuid: run.uuid, courseUuid: course.uuid, count: LEARNERS })
    const out = []
    for (let i = 1; i <= LEARNERS; i++) {
      const token = randomBytes(32).toString("base64url")
      await client.query(`INSERT INTO sessions (token_hash, account_uuid, profile_uuid, expires_at)
        VALUES ($1, md5('la' || $2)::uuid, md5('lp' || $2)::uuid, now() + interval '1 day')`, [createHmac("sha256", SECRET).update(`session\n${token}`).digest("base64url"), i])
      const { rows: [row] } = await client.query("SELECT md5('le' || $1)::uuid AS u", [i])
      out.push({ cookie: `__Host-birzha_session=${token}`, path: `/api/v1/learning/enrollments/${row.u}/steps/q1/submit` })
    }
    await client.query("CHECKPOINT")
    return out
  })

  const port = await freePort()
  const baseline = await startProcess({
    label: "bare-learning-submit",
    entry: join(repoRoot, "bench", "lib", "bare-learning-submit-server.mjs"),
    args: [String(port), "127.0.0.1", database.url],
    env: { BENCH_SERVER_SECRET: SECRET },
    port,
    readyPath: "/__ready",
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => baseline.stop())
  const worker = spawn(process.execPath, [...commandFlags(), resolve(repoRoot, "packages/cli/dist/bin.js"), "worker"], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: database.url, BIRZHA_SECRET: SECRET },
    stdio: "ignore"
  })
  ctx.defer(() => new Promise((done) => { worker.once("exit", done); worker.kill("SIGTERM") }))

  const requests = [{
    method: "POST",
    setupRequest: (req) => {
      const learner = learners[Math.floor(Math.random() * learners.length)]
      return {
        ...req,
        path: learner.path,
        headers: { ...req.headers, cookie: learner.cookie, origin: ORIGIN, "content-type": "application/json" },
        body: JSON.stringify({ requestUuid: randomUUID(), reply: Math.random() < 0.7 ? "select 1" : "SELECT 2" })
      }
    }
  }]
  for (const target of [host, baseline]) {
    const probe = await fetch(target.url + learners[0].path, {
      method: "POST",
      headers: { cookie: learners[0].cookie, origin: ORIGIN, "content-type": "application/json" },
      body: JSON.stringify({ requestUuid: randomUUID(), reply: "SELECT 1" })
    })
    const text = await probe.text()
    if (probe.status !== 200 || !text.includes("accepted")) throw new Error(`submit on ${target === host ? "the host" : "the baseline"} answered ${probe.status}: ${text.slice(0, 300)}`)
  }
  const bare = await ctx.measure({ label: "submissions.create baseline", url: baseline.url, server: baseline, requests })
  const sent = await ctx.measure({ label: "submissions.create host", url: host.url, server: host, requests })
  ctx.printTable([bare, sent])
  if (bare.non2xx > 0 || sent.non2xx > 0) throw new Error(`non-2xx answers: baseline ${bare.non2xx}, host ${sent.non2xx}`)
  // Requests still in flight when the load stops commit a moment later: wait until no new
  // submission appears (300 ms apart) before checking that every event was sequenced.
  const count = async () => withClient(database.url, async (client) => (await client.query("SELECT count(*)::int AS n FROM learning_submissions")).rows[0].n)
  for (let last = -1, now = await count(); now !== last; await new Promise((r) => setTimeout(r, 300)), last = now, now = await count());
  const drainStart = Date.now()
  const pending = async () => withClient(database.url, async (client) => (await client.query(
    "SELECT count(*)::int AS n FROM outbox_events WHERE type LIKE 'learning.submission.%' AND position IS NULL")).rows[0].n)
  while ((await pending()) > 0 && Date.now() - drainStart < 120_000) await new Promise((r) => setTimeout(r, 100))
  const lagSeconds = (Date.now() - drainStart) / 1000
  const { sequenced, unsequenced, submissions } = await withClient(database.url, async (client) => (await client.query(`SELECT
    (SELECT count(*)::int FROM outbox_events WHERE type LIKE 'learning.submission.%' AND position IS NOT NULL) AS sequenced,
    (SELECT count(*)::int FROM outbox_events WHERE type LIKE 'learning.submission.%' AND position IS NULL) AS unsequenced,
    (SELECT count(*)::int FROM learning_submissions) AS submissions`)).rows[0])
  const ratio = sent.requestsPerSecond / bare.requestsPerSecond
  log(`  submissions.create: ${sent.requestsPerSecond.toFixed(0)} /s sustained (target ≥ ${TARGET}: ${sent.requestsPerSecond >= TARGET && unsequenced === 0 ? "met" : "NOT met"}), ` +
    `p99 ${sent.latencyP99.toFixed(1)} ms; ${submissions} submissions, ${sequenced} events sequenced, ${unsequenced} not, the last ${lagSeconds.toFixed(1)} s ` +
    `after the load; server CPU/req ${micros(sent.serverCpuPerRequest)}`)
  log(`  baseline (bare node:http + pg, the same transaction): ${bare.requestsPerSecond.toFixed(0)} /s, server CPU/req ${micros(bare.serverCpuPerRequest)}; ` +
    `host/baseline ${ratio.toFixed(2)}`)
  return { learners: LEARNERS, host: sent, baseline: bare, ratio, sequenced, unsequenced, submissions, lagSeconds }
}
