// Learning teaching dashboard: learning.teaching.get of the owner of a course with
// 5,000 learners in two runs and 50,000 submissions (10,000 review assignments, 2,000 appeals,
// 5,000 community threads, 2,500 extension requests, incidents and checkers: every count of the
// dashboard has records to look through), target p95 < 30 ms at one connection, against
// bench/lib/bare-teaching-server.mjs, a bare node:http + pg server running the same statement (the
// caller's assignments on the course and its waiting records by run in one UNION ALL), in the same run
// (order: baseline, host, baseline). The course and its runs are made through the host by a
// signed-in owner; learners, submissions and the waiting records are written with set-based SQL.
import { join } from "node:path"
import { benchDatabase, signInOnHost, withClient } from "./lib/database.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { latencyAgainstBaseline } from "./lib/latency-vs-baseline.mjs"
import { freePort, get, repoRoot, startProcess } from "./lib/processes.mjs"

export const name = "learning-teaching"
export const description = "learning.teaching.get of a course with 5,000 learners and 50,000 submissions, vs bare node:http + pg"
export const pin = true

const LEARNERS = 5000
const STEPS = 10
const ORIGIN = "http://localhost:8080"
const TARGET_MS = 30

const call = hostCall(ORIGIN)

/** Seeds the learners and every kind of waiting record in set-based statements; returns the expected counts. */
const seed = async (client, log, { course, runs, owner }) => {
  const step = async (label, text, values = []) => {
    const t0 = Date.now()
    const result = await client.query(text, values)
    log(`  seed ${label}: ${result.rowCount ?? 0} rows, ${Date.now() - t0} ms`)
  }
  // Learner g is in the first run unless g % 5 = 0 (a fifth in the second); profile 0 is a staff reviewer.
  const runOf = (g) => `(CASE WHEN ${g} % 5 = 0 THEN $2::uuid ELSE $1::uuid END)`
  await step("accounts", `INSERT INTO accounts (uuid, email, current_profile_uuid)
    SELECT md5('ta' || g)::uuid, 'teach' || g || '@bench.invalid', md5('tp' || g)::uuid FROM generate_series(0, ${LEARNERS}) g`)
  await step("profiles", `INSERT INTO profiles (uuid, id, account_uuid, name, type, is_public)
    SELECT md5('tp' || g)::uuid, 'teach' || g, md5('ta' || g)::uuid, 'Ученик ' || g, 'Физлицо', false FROM generate_series(0, ${LEARNERS}) g`)
  await step("reviewer", `INSERT INTO learning_staff (uuid, course_uuid, profile_uuid, role, status) VALUES (md5('ts0')::uuid, $1, md5('tp0')::uuid, 'reviewer', 'active')`, [course])
  await step("enrollments", `INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status, started_at)
    SELECT md5('te' || g)::uuid, ${runOf("g")}, $3, md5('tp' || g)::uuid, 'active', now() FROM generate_series(1, ${LEARNERS}) g`, [...runs, course])
  // Ten submissions per learner (one per step); steps 3 and 7 are reviewed, step 5 may be appealed.
  await step("submissions", `INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number,
      attempt_no, reply, status, graded_at)
    SELECT md5('tsub' || g || '-' || k)::uuid, md5('te' || g)::uuid, $3, ${runOf("g")}, md5('tp' || g)::uuid, 's' || k, 1, 1, '{"text": "Ответ"}',
      CASE WHEN k IN (3, 7) AND g % 10 < 3 THEN 'awaiting_review' ELSE 'graded' END, now()
    FROM generate_series(1, ${LEARNERS}) g, generate_series(1, ${STEPS}) k`, [...runs, course])
  // Review assignments: pooled (g % 10 < 2), claimed (= 2: by the owner when g % 20 = 2, else the reviewer), decided; every 50th a peer one.
  await step("review assignments", `INSERT INTO learning_review_assignments (uuid, submission_uuid, course_uuid, run_uuid, node_key, learner_profile_uuid,
      pseudonym, kind, status, reviewer_profile_uuid, claimed_at, created_at)
    SELECT md5('tra' || g || '-' || k)::uuid, md5('tsub' || g || '-' || k)::uuid, $3, ${runOf("g")}, 's' || k, md5('tp' || g)::uuid, 'Учащийся ' || g,
      CASE WHEN g % 50 = 1 THEN 'peer' ELSE 'staff' END,
      CASE WHEN g % 10 < 2 THEN 'pooled' WHEN g % 10 = 2 THEN 'claimed' ELSE 'decided' END,
      CASE WHEN g % 10 < 2 THEN NULL WHEN g % 20 = 2 THEN $4::uuid ELSE md5('tp0')::uuid END,
      CASE WHEN g % 10 < 2 THEN NULL ELSE now() END, now() - g * interval '1 second'
    FROM generate_series(1, ${LEARNERS}) g, (VALUES (3), (7)) AS s(k)`, [...runs, course, owner])
  await step("appeals", `INSERT INTO learning_appeals (uuid, submission_uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, reason,
      initial_points, status, created_at)
    SELECT md5('tap' || g)::uuid, md5('tsub' || g || '-5')::uuid, $3, ${runOf("g")}, md5('te' || g)::uuid, md5('tp' || g)::uuid, 's5', 'Прошу пересмотреть', 1,
      CASE WHEN g % 25 = 0 THEN 'open' WHEN g % 25 = 5 THEN 'escalated' ELSE 'closed' END, now() - g * interval '1 second'
    FROM generate_series(1, ${LEARNERS}) g WHERE g % 5 = 0 OR g % 5 = 1`, [...runs, course])
  await step("threads", `INSERT INTO learning_threads (uuid, course_uuid, run_uuid, enrollment_uuid, learner_profile_uuid, author_profile_uuid, author_role,
      visibility, title, status, last_author_role, message_count, created_at)
    SELECT md5('tth' || g)::uuid, $3, ${runOf("g")}, md5('te' || g)::uuid, md5('tp' || g)::uuid, md5('tp' || g)::uuid, 'learner', 'private', 'Вопрос ' || g,
      CASE WHEN g % 5 = 0 THEN 'open' WHEN g % 5 = 1 THEN 'answered' ELSE 'resolved' END,
      CASE WHEN g % 5 = 1 THEN 'staff' ELSE 'learner' END, 2, now() - g * interval '1 second'
    FROM generate_series(1, ${LEARNERS}) g`, [...runs, course])
  await step("extension requests", `INSERT INTO learning_extension_requests (uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, original_due_at,
      requested_due_at, reason, status, created_at)
    SELECT md5('tx' || g)::uuid, $3, ${runOf("g")}, md5('te' || g)::uuid, md5('tp' || g)::uuid, now() + interval '1 day', now() + interval '3 days', 'Болел',
      CASE WHEN g % 10 = 0 THEN 'requested' ELSE 'approved' END, now() - g * interval '1 second'
    FROM generate_series(1, ${LEARNERS}) g WHERE g % 2 = 0`, [...runs, course])
  await step("incidents", `INSERT INTO learning_incidents (uuid, course_uuid, run_uuid, kind, window_from, window_to, description, status, created_by)
    SELECT md5('ti' || g)::uuid, $3, ${runOf("g")}, 'platform_outage', now() - interval '2 hours', now() - interval '1 hour', 'Сбой ' || g,
      CASE WHEN g % 4 = 0 THEN 'open' ELSE 'resolved' END, $4
    FROM generate_series(1, 20) g`, [...runs, course, owner])
  await step("checkers", `INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, rules, status, error_streak)
    SELECT md5('tk' || g)::uuid, $1, md5('tl' || g)::uuid, 'declarative', '{}', CASE WHEN g = 1 THEN 'suspended' ELSE 'ready' END,
      CASE WHEN g <= 2 THEN 3 ELSE 0 END
    FROM generate_series(1, 6) g`, [course])
  await step("analyze", "VACUUM ANALYZE")
  const n = (text, values) => client.query(text, values).then((r) => r.rows[0].n)
  return {
    reviewsToClaim: await n("SELECT count(*)::int AS n FROM learning_review_assignments WHERE course_uuid = $1 AND kind = 'staff' AND status = 'pooled'", [course]),
    reviewsClaimed: await n("SELECT count(*)::int AS n FROM learning_review_assignments WHERE course_uuid = $1 AND reviewer_profile_uuid = $2 AND status = 'claimed'", [course, owner]),
    appealsOpen: await n("SELECT count(*)::int AS n FROM learning_appeals WHERE course_uuid = $1 AND status = 'open'", [course]),
    threadsUnanswered: await n("SELECT count(*)::int AS n FROM learning_threads WHERE course_uuid = $1 AND status = 'open' AND last_author_role = 'learner'", [course]),
    extensionsPending: await n("SELECT count(*)::int AS n FROM learning_extension_requests WHERE course_uuid = $1 AND status = 'requested'", [course]),
    incidentsOpen: await n("SELECT count(*)::int AS n FROM learning_incidents WHERE course_uuid = $1 AND status = 'open'", [course]),
    checkersSuspended: 1,
    checkersFailing: 1
  }
}

/**
 * The course of this benchmark, made through a started host by a signed-in owner and seeded:
 * also the scene of `web-teaching.bench.mjs` (the teaching pages over the same data).
 */
export const teachingScene = async (ctx, label = "teaching") => {
  const { log } = ctx
  const database = await benchDatabase(ctx, label)
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const owner = await signInOnHost(host.url, database.url, ORIGIN)
  let course = await call(host.url, owner.cookie, "POST", "/api/v1/learning/courses", { requestUuid: crypto.randomUUID(), title: "Курс на 5000 учащихся", kind: "single" })
  const nodes = [{ nodeKey: "m1", kind: "module", title: "Модуль" }]
  for (let k = 1; k <= STEPS; k++) nodes.push({ nodeKey: `s${k}`, parentKey: "m1", kind: "step", stepType: "text", title: `Шаг ${k}`, body: "Текст" })
  course = await call(host.url, owner.cookie, "PATCH", `/api/v1/learning/courses/${course.uuid}`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, nodes })
  await call(host.url, owner.cookie, "POST", `/api/v1/learning/courses/${course.uuid}/publish`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, changelog: "" })
  const runs = []
  for (const title of ["Весенний поток", "Осенний поток"]) {
    const created = await call(host.url, owner.cookie, "POST", `/api/v1/learning/courses/${course.uuid}/runs`, {
      requestUuid: crypto.randomUUID(), versionNumber: 1, title, pacing: "cohort", startsAt: new Date(Date.now() - 86_400_000).toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
    })
    runs.push(created.uuid)
  }
  const { ownerProfile, expected } = await withClient(database.url, async (client) => {
    const { rows: [row] } = await client.query("SELECT owner_profile_uuid FROM learning_courses WHERE uuid = $1", [course.uuid])
    return { ownerProfile: row.owner_profile_uuid, expected: await seed(client, log, { course: course.uuid, runs, owner: row.owner_profile_uuid }) }
  })
  return { database, host, owner, course, runs, ownerProfile, expected }
}

export const run = async (ctx) => {
  const { log } = ctx
  const { database, host, owner, course, ownerProfile, expected } = await teachingScene(ctx)

  const port = await freePort()
  const baseline = await startProcess({
    label: "bare-teaching",
    entry: join(repoRoot, "bench", "lib", "bare-teaching-server.mjs"),
    args: [String(port), "127.0.0.1", database.url, ownerProfile],
    port,
    readyPath: "/__ready",
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => baseline.stop())

  const path = `/api/v1/learning/teaching/courses/${course.uuid}`
  const headers = { cookie: owner.cookie }
  const [a, b] = await Promise.all([get(host.url + path, { headers }), get(baseline.url + path)])
  const counts = (answer) => JSON.stringify(JSON.parse(answer.body).counts)
  if (a.status !== 200 || b.status !== 200 || counts(a) !== JSON.stringify(expected) || counts(b) !== counts(a)) {
    throw new Error(`teaching: host ${a.status}, baseline ${b.status}, expected ${JSON.stringify(expected)}: ${a.body.toString().slice(0, 400)} ${b.body.toString().slice(0, 400)}`)
  }
  log(`\n  teaching: host and baseline answer the expected counts ${counts(a)}`)
  const label = "learning.teaching.get (5,000 learners, 50,000 submissions)"
  const { p95, baselineP95, ratio, host: hostRow, baseline: baseRow } = await latencyAgainstBaseline(ctx, { label, path, host, baseline, headers })
  const p95Ratio = p95 / baselineP95
  log(`  ${label}: host p95 at 1 connection ${p95.toFixed(2)} ms (target < ${TARGET_MS} ms: ${p95 < TARGET_MS ? "met" : "NOT met"}); ` +
    `baseline p95 ${baselineP95.toFixed(2)} ms (host/baseline p95 ${p95Ratio.toFixed(2)}); throughput host/baseline at 50 connections ${ratio.toFixed(2)}`)
  return { learners: LEARNERS, submissions: LEARNERS * STEPS, p95Ms: p95, baselineP95Ms: baselineP95, p95Ratio, ratio, host: hostRow, baseline: baseRow }
}
