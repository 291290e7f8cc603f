// Learning calendar: learning.calendar.get of a learner's enrollment in a 200-step course
// with 40 date overrides and a finished pause (every date layered: offset or schedule → override →
// pause), target p95 < 20 ms at one connection, against bench/lib/bare-calendar-server.mjs, a bare
// node:http + pg server running the same statements and computing the same layers, in the same run
// (order: baseline, host, baseline). The course, run, enrollment and overrides are made through the
// host by signed-in sessions (an owner and a learner); the learner reads the calendar with its cookie.
import { join } from "node:path"
import { benchDatabase, signInOnHost, withClient } from "./lib/database.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { latencyAgainstBaseline } from "./lib/latency-vs-baseline.mjs"
import { freePort, get, repoRoot, startProcess } from "./lib/processes.mjs"

export const name = "learning-calendar"
export const description = "learning.calendar.get of a 200-step course with overrides and a pause, vs bare node:http + pg"
export const pin = true

const STEPS = 200
const OVERRIDES = 40
const ORIGIN = "http://localhost:8080"
const TARGET_MS = 20

/** 20 modules of 10 steps: offsets on most, graded quizzes among them. */
const tree = () => {
  const nodes = []
  for (let m = 1; nodes.filter((n) => n.kind === "step").length < STEPS; m++) {
    nodes.push({ nodeKey: `m${m}`, kind: "module", title: `Модуль ${m}` })
    for (let s = 1; s <= 10; s++) {
      nodes.push(s % 4 === 0
        ? { nodeKey: `m${m}-s${s}`, parentKey: `m${m}`, kind: "step", stepType: "quiz", title: `Тест ${m}.${s}`, grading: { maxPoints: 10, attempts: 3 }, unlockOffsetDays: m, dueOffsetDays: m + 7 }
        : { nodeKey: `m${m}-s${s}`, parentKey: `m${m}`, kind: "step", stepType: "text", title: `Урок ${m}.${s}`, body: `Материал ${m}.${s}`, unlockOffsetDays: m - 1, dueOffsetDays: m + 3 })
    }
  }
  return nodes
}

const call = hostCall(ORIGIN)

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx, "calendar")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const owner = await signInOnHost(host.url, database.url, ORIGIN)
  let course = await call(host.url, owner.cookie, "POST", "/api/v1/learning/courses", { requestUuid: crypto.randomUUID(), title: "Курс на 200 шагов", kind: "single" })
  course = await call(host.url, owner.cookie, "PATCH", `/api/v1/learning/courses/${course.uuid}`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, nodes: tree() })
  await call(host.url, owner.cookie, "POST", `/api/v1/learning/courses/${course.uuid}/publish`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, changelog: "" })
  const schedule = new Date(Date.now() - 3 * 86_400_000)
  let runRecord = await call(host.url, owner.cookie, "POST", `/api/v1/learning/courses/${course.uuid}/runs`, {
    requestUuid: crypto.randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: schedule.toISOString(), admission: "open",
    waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 30, maxCount: 3 }
  })
  runRecord = await call(host.url, owner.cookie, "PATCH", `/api/v1/learning/runs/${runRecord.uuid}`, { requestUuid: crypto.randomUUID(), expectedRevision: runRecord.revision, publish: true })
  // A few explicit run dates, so the schedule layer is not only offsets.
  const plan = await call(host.url, owner.cookie, "POST", `/api/v1/learning/runs/${runRecord.uuid}/schedule-preview`, {
    requestUuid: crypto.randomUUID(),
    changes: Array.from({ length: 10 }, (_, i) => ({ nodeKey: `m${i + 1}-s1`, dueAt: new Date(schedule.getTime() + (i + 5) * 86_400_000).toISOString() }))
  })
  await call(host.url, owner.cookie, "POST", `/api/v1/learning/schedule-previews/${plan.uuid}/apply`, { requestUuid: crypto.randomUUID() })
  const learner = await signInOnHost(host.url, database.url, ORIGIN)
  const enrollment = await call(host.url, learner.cookie, "POST", `/api/v1/learning/runs/${runRecord.uuid}/enroll`, { requestUuid: crypto.randomUUID() })
  for (let i = 0; i < OVERRIDES; i++) {
    const m = (i % 20) + 1
    await call(host.url, owner.cookie, "POST", `/api/v1/learning/enrollments/${enrollment.uuid}/overrides`, {
      requestUuid: crypto.randomUUID(),
      nodeKey: `m${m}-s${(i % 9) + 2}`,
      dueAt: new Date(schedule.getTime() + (m + 10) * 86_400_000).toISOString(),
      ...(i % 4 === 0 ? { extraAttempts: 1 } : {}),
      reason: `Перенос ${i}`
    })
  }
  // A finished three-day pause a day after the start: every later date moves.
  await withClient(database.url, (client) =>
    client.query("UPDATE learning_enrollments SET pauses = $1::jsonb, paused_days = 3, pause_count = 1 WHERE uuid = $2",
      [JSON.stringify([{ from: new Date(schedule.getTime() + 86_400_000).toISOString(), days: 3 }]), enrollment.uuid]))

  const port = await freePort()
  const baseline = await startProcess({
    label: "bare-calendar",
    entry: join(repoRoot, "bench", "lib", "bare-calendar-server.mjs"),
    args: [String(port), "127.0.0.1", database.url],
    port,
    readyPath: "/__ready",
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => baseline.stop())

  const path = `/api/v1/learning/enrollments/${enrollment.uuid}/calendar`
  const headers = { cookie: learner.cookie }
  const [a, b] = await Promise.all([get(host.url + path, { headers }), get(baseline.url + path)])
  const items = (answer) => JSON.parse(answer.body).items
  if (a.status !== 200 || b.status !== 200 || items(a).length !== STEPS || items(b).length !== STEPS) {
    throw new Error(`calendar: host ${a.status}, baseline ${b.status}: ${a.body.toString().slice(0, 300)} ${b.body.toString().slice(0, 300)}`)
  }
  const dueOf = (answer) => items(answer).map((item) => item.dueAt).join(",")
  if (dueOf(a) !== dueOf(b)) throw new Error("calendar: the host's and the baseline's due dates differ")
  log(`\n  calendar: host ${a.body.length} bytes, baseline ${b.body.length} bytes, ${STEPS} steps, same due dates`)
  const label = "learning.calendar.get (200 steps, 40 overrides, a pause)"
  const { p95, baselineP95, ratio, host: hostRow, baseline: baseRow } = await latencyAgainstBaseline(ctx, { label, path, host, baseline, headers })
  log(`  ${label}: host p95 at 1 connection ${p95.toFixed(2)} ms (target < ${TARGET_MS} ms: ${p95 < TARGET_MS ? "met" : "NOT met"}); ` +
    `baseline p95 ${baselineP95.toFixed(2)} ms; throughput host/baseline ${ratio.toFixed(2)}`)
  return { steps: STEPS, overrides: OVERRIDES, p95Ms: p95, baselineP95Ms: baselineP95, ratio, host: hostRow, baseline: baseRow }
}
