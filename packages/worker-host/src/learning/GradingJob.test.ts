import { appendScoreLayer, signingKey } from "@birzha/domain/internal"
import { MetricsServerLive } from "@birzha/infrastructure"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runningCourse } from "../../../domain/test/learning.js"
import { bodyOf, type Marketplace, openMarketplace } from "../../../domain/test/marketplace.js"
import { parsePrometheusText, sampleValue } from "../../../../testing/prometheus.js"
import { makeLearningGradingJob } from "./GradingJob.js"

/**
 * Grading end to end: a real external grader in this process
 * (an HTTP server that verifies every Standard Webhooks signature) answers correct, wrong, slow,
 * 500 and garbage; the grading worker keeps verdicts apart from platform errors, retries platform
 * errors without costing an attempt, trips the circuit breaker after five in a row, and drains
 * the queue on resume. Staff diagnostics never hold the secret; learners see none of them.
 */

let m: Marketplace
let grader: http.Server
let port: number
const secret = "whsec_" + Buffer.from("the grader's own secret, 32 bytes").toString("base64")
const calls: Array<{ id: string; body: { reply?: unknown; caseIndex?: number; jobUuid: string; courseUuid?: string } }> = []
let badSignatures = 0
/** Calls in flight per course, and the most at once: other tests' jobs may come due while a test runs. */
const inFlightOf = new Map<string, number>()
const maxInFlightOf = new Map<string, number>()
/** How the grader answers a reply. */
let behaviour: (reply: unknown) => { status: number; body: string; delayMs?: number } = () => ok200({ verdict: "accepted", score: 1 })
const ok200 = (body: unknown) => ({ status: 200, body: JSON.stringify(body) })

const verify = (headers: http.IncomingHttpHeaders, body: string) => {
  const id = String(headers["webhook-id"] ?? "")
  const timestamp = String(headers["webhook-timestamp"] ?? "")
  const expected = "v1," + createHmac("sha256", signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")
  const given = String(headers["webhook-signature"] ?? "")
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
    && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300
}

beforeAll(async () => {
  m = await openMarketplace("learning_grading")
  grader = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      if (!verify(req.headers, raw)) {
        badSignatures++
        res.writeHead(401).end()
        return
      }
      const body = JSON.parse(raw) as { reply?: unknown; caseIndex?: number; jobUuid: string; courseUuid?: string }
      calls.push({ id: String(req.headers["webhook-id"]), body })
      const course = body.courseUuid ?? ""
      inFlightOf.set(course, (inFlightOf.get(course) ?? 0) + 1)
      maxInFlightOf.set(course, Math.max(maxInFlightOf.get(course) ?? 0, inFlightOf.get(course)!))
      const answer = behaviour(body.reply)
      setTimeout(() => {
        inFlightOf.set(course, inFlightOf.get(course)! - 1)
        if (!res.destroyed) res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body)
      }, answer.delayMs ?? 0)
    })
  })
  await new Promise<void>((resolve) => grader.listen(0, "127.0.0.1", resolve))
  port = (grader.address() as AddressInfo).port
})
afterAll(async () => {
  grader?.closeAllConnections()
  await new Promise((resolve) => grader?.close(resolve))
  await m?.close()
})

const ok = <A>(answer: { status: number; body: unknown }): A => {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(200)
  return bodyOf<A>(answer as never)
}
const errorOf = (answer: { status: number; body: unknown }) => ({ status: answer.status, code: (answer.body as { error?: { code?: string } }).error?.code })

const runWorker = () => m.runtime.runPromise(Effect.scoped(Effect.flatMap(makeLearningGradingJob({ allowHttpLoopback: true }), (job) => job.run)))

/** The grader answers by reply: correct, wrong, slow (past the timeout), boom (500), garbage (not JSON, echoing the secret). */
const byReply = (reply: unknown) => {
  switch (reply) {
    case "correct":
      return ok200({ verdict: "accepted", score: 1, feedback: "well done" })
    case "wrong":
      return ok200({ verdict: "wrong", score: 0, feedback: "row 3 differs" })
    case "slow":
      return { ...ok200({ verdict: "accepted", score: 1 }), delayMs: 1500 }
    case "boom":
      return { status: 500, body: "{}" }
    default:
      return { status: 200, body: `GARBAGE-MARKER ${secret}` }
  }
}

interface CheckerView {
  uuid: string
  status: string
  revision: number
  version: number
  lineageUuid: string
  errorStreak: number
  hasSecret: boolean
}

const newCourse = async () => {
  const owner = await m.profile()
  const course = ok<{ uuid: string; revision: number }>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Запросы", kind: "single" } }))
  return { owner, course }
}

const createHttpChecker = async (owner: Awaited<ReturnType<typeof m.profile>>, courseUuid: string, extra: Record<string, unknown> = {}) =>
  ok<CheckerView>(await m.invoke("learning.checkers.create", owner, {
    path: { course: courseUuid },
    payload: {
      requestUuid: randomUUID(),
      name: "SQL grader",
      kind: "http",
      url: `http://127.0.0.1:${port}/grade`,
      secret,
      // Far above the grader's immediate answers: on a loaded machine a late answer would be a
      // platform error (a timeout) the test did not ask for. The test of a slow grader sets 500 ms.
      timeoutMs: 10_000,
      referenceCases: [{ name: "right", reply: "correct", expected: "correct" }, { name: "off by one", reply: "wrong", expected: "wrong" }],
      ...extra
    }
  }))

const preflight = async (owner: Awaited<ReturnType<typeof m.profile>>, courseUuid: string, checkerUuid: string) => {
  behaviour = byReply
  const job = ok<{ uuid: string; kind: string; status: string }>(await m.invoke("learning.checkers.preflight", owner, {
    path: { course: courseUuid, checker: checkerUuid },
    payload: { requestUuid: randomUUID() }
  }))
  await runWorker()
  return job
}

/** A published course whose step is graded by a ready external checker, and an active learner. */
const setup = async (checkerExtra: Record<string, unknown> = {}) => {
  const { course, owner } = await newCourse()
  const checker = await createHttpChecker(owner, course.uuid, checkerExtra)
  await preflight(owner, course.uuid, checker.uuid)
  const nodes = [
    { nodeKey: "m1", kind: "module", title: "Модуль" },
    { nodeKey: "q", parentKey: "m1", kind: "step", stepType: "code", title: "Запрос", body: "Напишите запрос", grading: { maxPoints: 10, checkerUuid: checker.uuid } }
  ]
  const { enrollment, learner, run } = await runningCourse(m, owner, course, nodes)
  const submit = async (reply: string) =>
    ok<{ uuid: string; status: string }>(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node: "q" }, payload: { requestUuid: randomUUID(), reply } }))
  const checkerNow = async () => ok<CheckerView>(await m.invoke("learning.checkers.get", owner, { path: { course: course.uuid, checker: checker.uuid } }))
  const attemptsUsed = async () => ok<{ attempts: { used: number } }>(await m.invoke("learning.steps.get", learner, { path: { enrollment, node: "q" } })).attempts.used
  return { owner, learner, course: course.uuid, run, checker, enrollment, submit, checkerNow, attemptsUsed }
}

const jobOf = async (submissionUuid: string) =>
  (await m.sql<{ uuid: string; status: string; tries: number; platform_error: string | null; verdict: string | null }>(
    "SELECT uuid, status, tries, platform_error, verdict FROM learning_grading_jobs WHERE submission_uuid = $1", submissionUuid))[0]!
const statusOf = async (submissionUuid: string) => (await m.sql<{ status: string }>("SELECT status FROM learning_submissions WHERE uuid = $1", submissionUuid))[0]!.status
const makeDue = (checkerUuid: string) => m.sql("UPDATE learning_grading_jobs SET next_try_at = now() WHERE checker_uuid = $1 AND status = 'queued'", checkerUuid)
const failedEvents = async (checkerUuid: string) =>
  (await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM outbox_events WHERE type = 'learning.checker.failed' AND aggregate_uuid = $1", checkerUuid))[0]!.n

describe("the learning grading worker", () => {
  it("preflights an external checker against its reference cases through signed calls, and fails a grader that accepts everything", async () => {
    const { course, owner } = await newCourse()
    const checker = await createHttpChecker(owner, course.uuid)
    expect([checker.status, checker.version, checker.hasSecret, checker.lineageUuid]).toEqual(["draft", 1, true, checker.uuid])
    calls.length = 0
    const job = await preflight(owner, course.uuid, checker.uuid)
    expect(job).toMatchObject({ kind: "preflight", status: "queued" })
    expect(calls.map((call) => call.id).sort()).toEqual([`${job.uuid}.0`, `${job.uuid}.1`])
    const result = ok<{ passed: boolean; cases: Array<{ verdict: string; passed: boolean }> }>(
      await m.invoke("learning.preflights.get", owner, { path: { course: course.uuid, job: job.uuid } }))
    expect(result).toMatchObject({ status: "succeeded", passed: true, cases: [{ verdict: "accepted", passed: true }, { verdict: "wrong", passed: true }] })
    expect(ok<CheckerView>(await m.invoke("learning.checkers.get", owner, { path: { course: course.uuid, checker: checker.uuid } })).status).toBe("ready")

    const lax = await createHttpChecker(owner, course.uuid)
    behaviour = () => ok200({ verdict: "accepted", score: 1 })
    const laxJob = ok<{ uuid: string }>(await m.invoke("learning.checkers.preflight", owner, { path: { course: course.uuid, checker: lax.uuid }, payload: { requestUuid: randomUUID() } }))
    await runWorker()
    expect(ok<{ passed: boolean; cases: Array<{ passed: boolean }> }>(await m.invoke("learning.preflights.get", owner, { path: { course: course.uuid, job: laxJob.uuid } })))
      .toMatchObject({ passed: false, cases: [{ passed: true }, { passed: false, expected: "wrong", verdict: "accepted" }] })
    expect(ok<CheckerView>(await m.invoke("learning.checkers.get", owner, { path: { course: course.uuid, checker: lax.uuid } })).status).toBe("preflight_failed")
    expect(await failedEvents(lax.uuid)).toBe(1)
    const history = ok<{ items: Array<{ action: string; toStatus: string }> }>(
      await m.invoke("learning.checkers.control_history", owner, { path: { course: course.uuid, checker: lax.uuid } }))
    expect(history.items.map((item) => item.action)).toEqual(["preflight_failed", "preflight"])
    expect(badSignatures).toBe(0)
  })

  it("maps correct and wrong answers to verdicts and slow, 500 and garbage answers to platform errors; retried, no attempt lost", async () => {
    // 500 ms: the slow reply (1.5 s) times out.
    const s = await setup({ timeoutMs: 500 })
    behaviour = byReply
    const replies = ["correct", "wrong", "slow", "boom", "garbage"] as const
    const made = Object.fromEntries(await Promise.all(replies.map(async (reply) => [reply, await s.submit(reply)] as const)))
    await runWorker()
    expect(await statusOf(made.correct!.uuid)).toBe("accepted")
    expect(await statusOf(made.wrong!.uuid)).toBe("graded")
    const wrongView = ok<{ score?: { points: number; verdict: string; feedback: string } }>(await m.invoke("learning.submissions.get", s.learner, { path: { submission: made.wrong!.uuid } }))
    expect(wrongView.score).toMatchObject({ points: 0, verdict: "wrong", feedback: "row 3 differs" })
    const errors = {
      slow: await jobOf(made.slow!.uuid),
      boom: await jobOf(made.boom!.uuid),
      garbage: await jobOf(made.garbage!.uuid)
    }
    expect(errors.slow).toMatchObject({ status: "queued", tries: 1, platform_error: "no answer within 500 ms" })
    expect(errors.boom).toMatchObject({ status: "queued", tries: 1, platform_error: "the grader answered 500" })
    expect(errors.garbage).toMatchObject({ status: "queued", tries: 1, platform_error: "the grader's answer is not JSON" })
    for (const reply of ["slow", "boom", "garbage"] as const) expect(await statusOf(made[reply]!.uuid)).toBe("checking")

    // Staff diagnostics: the call's status, latency, key id and answer, the secret redacted.
    const diagnostics = await m.invoke("learning.grading.diagnostics", s.owner, { path: { course: s.course, job: errors.garbage.uuid } })
    const garbage = ok<{ calls: Array<{ httpStatus: number; keyId: string; response: string; mapping: string; latencyMs: number }> }>(diagnostics)
    expect(garbage.calls[0]).toMatchObject({ httpStatus: 200, mapping: "platform error: the grader's answer is not JSON" })
    expect(garbage.calls[0]!.keyId).toMatch(/^key_[0-9a-f]{12}$/)
    expect(garbage.calls[0]!.response).toContain("GARBAGE-MARKER [redacted]")
    expect(JSON.stringify(diagnostics.body)).not.toContain(secret)
    expect(ok<{ calls: Array<{ error: string }> }>(await m.invoke("learning.grading.diagnostics", s.owner, { path: { course: s.course, job: errors.slow.uuid } })).calls[0]!.error)
      .toBe("no answer within 500 ms")
    // The learner sees neither the diagnostics nor anything of the platform errors (the course is theirs to know: 403; a stranger's: 404).
    expect(errorOf(await m.invoke("learning.grading.diagnostics", s.learner, { path: { course: s.course, job: errors.garbage.uuid } }))).toEqual({ status: 403, code: "forbidden" })
    expect(errorOf(await m.invoke("learning.grading.diagnostics", await m.profile(), { path: { course: randomUUID(), job: errors.garbage.uuid } })).status).toBe(404)
    expect(errorOf(await m.invoke("learning.grading.diagnostics", s.owner, { path: { course: s.course, job: randomUUID() } })).status).toBe(404)
    expect(errorOf(await m.invoke("learning.checkers.get", s.learner, { path: { course: s.course, checker: s.checker.uuid } })).status).toBe(403)
    for (const reply of replies) {
      const view = JSON.stringify((await m.invoke("learning.submissions.get", s.learner, { path: { submission: made[reply]!.uuid } })).body)
      expect(view).not.toContain("GARBAGE-MARKER")
      expect(view).not.toContain(secret)
      expect(view).not.toContain("grader answered")
    }

    // The grader recovers: the retried jobs are graded on their second try; every attempt is still counted once.
    behaviour = () => ok200({ verdict: "accepted", score: 1 })
    await makeDue(s.checker.uuid)
    await runWorker()
    for (const reply of ["slow", "boom", "garbage"] as const) {
      expect(await jobOf(made[reply]!.uuid)).toMatchObject({ status: "succeeded", tries: 2, verdict: "accepted" })
      expect(await statusOf(made[reply]!.uuid)).toBe("accepted")
    }
    expect(await s.attemptsUsed()).toBe(5)
    expect((await s.checkerNow()).errorStreak).toBe(0)
    const usage = ok<{ items: Array<{ kind: string; calls: number; verdicts: number; platformErrors: number; errorRate: number }> }>(
      await m.invoke("learning.grading.usage", s.owner, {
        path: { course: s.course },
        urlParams: { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString() }
      }))
    const grade = usage.items.find((item) => item.kind === "grade")!
    expect(grade).toMatchObject({ calls: 8, verdicts: 5, platformErrors: 3, errorRate: 0.375 })
    expect(usage.items.find((item) => item.kind === "preflight")).toMatchObject({ calls: 2, verdicts: 2 })
    expect(badSignatures).toBe(0)
  })

  it("moves the metrics page as it grades: calls by kind and outcome, their time, each job's time from queue to verdict", async () => {
    // The page a worker serves with BIRZHA_METRICS_PORT (`birzha worker`), here on this test's database.
    let metricsUrl = ""
    const scope = Effect.runSync(Scope.make())
    await m.runtime.runPromise(Layer.buildWithScope(MetricsServerLive({ host: "127.0.0.1", port: 0 }, (address) => (metricsUrl = address.url)), scope))
    try {
      const scrape = async () => parsePrometheusText(await (await fetch(metricsUrl)).text())
      const s = await setup()
      behaviour = byReply
      const before = await scrape()
      const value = (families: typeof before, name: string, labels: Record<string, string> = {}) => sampleValue(families, name, labels) ?? 0
      const made = await Promise.all(["correct", "wrong", "boom"].map((reply) => s.submit(reply)))
      await runWorker()
      expect([await statusOf(made[0]!.uuid), await statusOf(made[1]!.uuid)]).toEqual(["accepted", "graded"])
      const after = await scrape()
      expect(after.get("birzha_grading_calls_total")?.type).toBe("counter")
      expect(after.get("birzha_grading_job_duration_seconds")?.type).toBe("histogram")
      // Two verdicts, one platform error queued again (other tests' jobs falling due may add to these).
      const graded = { kind: "grade", outcome: "graded" }
      expect(value(after, "birzha_grading_calls_total", graded)).toBeGreaterThanOrEqual(value(before, "birzha_grading_calls_total", graded) + 2)
      const retried = { kind: "grade", outcome: "queued" }
      expect(value(after, "birzha_grading_calls_total", retried)).toBeGreaterThanOrEqual(value(before, "birzha_grading_calls_total", retried) + 1)
      const calls = { checker_kind: "http" }
      expect(value(after, "birzha_grading_call_duration_seconds_count", calls)).toBeGreaterThanOrEqual(value(before, "birzha_grading_call_duration_seconds_count", calls) + 3)
      // Only the two graded jobs ended: the retried one is still open.
      const jobs = { kind: "grade" }
      expect(value(after, "birzha_grading_job_duration_seconds_count", jobs)).toBeGreaterThanOrEqual(value(before, "birzha_grading_job_duration_seconds_count", jobs) + 2)
      expect(value(after, "birzha_grading_job_duration_seconds_sum", jobs)).toBeGreaterThan(value(before, "birzha_grading_job_duration_seconds_sum", jobs))
      // The queue gauges, read from the database at the scrape: two more jobs succeeded, one waits.
      expect(value(after, "birzha_grading_jobs", { status: "succeeded" })).toBeGreaterThanOrEqual(value(before, "birzha_grading_jobs", { status: "succeeded" }) + 2)
      expect(value(after, "birzha_grading_jobs", { status: "queued" })).toBeGreaterThanOrEqual(1)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("applies the answers still coming back when it is stopped: no job is left running for another worker to grade again", async () => {
    // The setup's timeout is far above the grader's 300 ms: on a loaded machine an answer that came
    // back late would be a platform error (queued again), which is not what this test is about.
    const s = await setup({ concurrency: 16 })
    behaviour = () => ({ ...ok200({ verdict: "accepted", score: 1 }), delayMs: 300 })
    const made = await Promise.all(Array.from({ length: 12 }, () => s.submit("correct")))
    const jobs = await Promise.all(made.map((submission) => jobOf(submission.uuid)))
    const called = () => calls.filter((call) => jobs.some((job) => job.uuid === call.body.jobUuid)).length
    // As the worker loop runs a job: uninterruptible but for its waits.
    const worker = m.runtime.runFork(Effect.scoped(Effect.flatMap(makeLearningGradingJob({ allowHttpLoopback: true }), (job) => Effect.uninterruptible(job.run))))
    for (let waited = 0; called() < jobs.length && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(called()).toBe(jobs.length)
    // Stopped (as on SIGTERM) while every call is out: the calls finish and every answer is applied.
    await m.runtime.runPromise(Fiber.interrupt(worker))
    const after = await Promise.all(made.map((submission) => jobOf(submission.uuid)))
    expect(after.map((job) => [job.status, job.tries])).toEqual(jobs.map(() => ["succeeded", 1]))
    expect(await Promise.all(made.map((submission) => statusOf(submission.uuid)))).toEqual(made.map(() => "accepted"))
    expect(called()).toBe(jobs.length)
  })

  it("fails a grade after 3 platform errors: check_failed, the attempt refunded, learning.checker.failed; a 4xx is not retried", async () => {
    // The grader answers at once; the setup's timeout far above it keeps a busy machine's late
    // answer from being another platform error (a timeout) than the one this test counts.
    const s = await setup()
    behaviour = byReply
    const boom = await s.submit("boom")
    for (let i = 0; i < 3; i++) {
      await runWorker()
      await makeDue(s.checker.uuid)
    }
    expect(await jobOf(boom.uuid)).toMatchObject({ status: "failed", tries: 3, platform_error: "the grader answered 500" })
    expect(await statusOf(boom.uuid)).toBe("check_failed")
    expect(await s.attemptsUsed()).toBe(0)
    expect(await failedEvents(s.checker.uuid)).toBe(1)
    expect((await s.checkerNow()).status).toBe("ready")
    behaviour = () => ({ status: 422, body: "{}" })
    const refused = await s.submit("anything")
    await runWorker()
    expect(await jobOf(refused.uuid)).toMatchObject({ status: "failed", tries: 1, platform_error: "the grader answered 422" })
    expect(await s.attemptsUsed()).toBe(0)
  })

  it("suspends the checker after five platform errors in a row; resume drains the queue and no attempt is lost", async () => {
    // The setup's timeout, far above the grader's immediate answer, as above. Counted for this
    // test's course: the metrics test leaves a job queued for a retry 5 s later, which comes due (and
    // reaches the grader) while this test runs on a loaded machine.
    const s = await setup()
    behaviour = () => ({ status: 503, body: "{}" })
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => s.submit("boom")))
    await runWorker()
    const suspended = await s.checkerNow()
    expect([suspended.status, suspended.errorStreak]).toEqual(["suspended", 5])
    expect(await failedEvents(s.checker.uuid)).toBe(1)
    const history = ok<{ items: Array<{ action: string; actorUuid?: string; reason: string }> }>(
      await m.invoke("learning.checkers.control_history", s.owner, { path: { course: s.course, checker: s.checker.uuid } }))
    expect(history.items[0]).toMatchObject({ action: "auto_suspend", reason: expect.stringContaining("5 platform errors in a row") })
    expect(history.items[0]!.actorUuid).toBeUndefined()
    // Submissions keep queueing; nothing is dispatched while suspended.
    const later = await s.submit("boom")
    await makeDue(s.checker.uuid)
    const before = calls.length
    await runWorker()
    expect(calls.slice(before).filter((call) => call.body.courseUuid === s.course)).toEqual([])
    expect(await statusOf(later.uuid)).toBe("submitted")
    for (const made of first) expect((await jobOf(made.uuid)).status).toBe("queued")
    expect(await s.attemptsUsed()).toBe(6)

    behaviour = () => ok200({ verdict: "accepted", score: 1 })
    const resumed = ok<CheckerView>(await m.invoke("learning.checkers.resume", s.owner, {
      path: { course: s.course, checker: s.checker.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: suspended.revision, reason: "grader fixed" }
    }))
    expect([resumed.status, resumed.errorStreak]).toEqual(["ready", 0])
    await runWorker()
    for (const made of [...first, later]) expect(await statusOf(made.uuid)).toBe("accepted")
    expect(await s.attemptsUsed()).toBe(6)
    expect(errorOf(await m.invoke("learning.checkers.resume", s.owner, {
      path: { course: s.course, checker: s.checker.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: resumed.revision, reason: "again" }
    }))).toEqual({ status: 409, code: "invalid_state" })
  })

  it("never runs more calls of one checker at once than its concurrency", async () => {
    // A timeout far above the answer's delay: a call timed out under load is retried while the
    // grader still counts the abandoned one, which is not what this test is about. Counted for
    // this test's course: earlier tests' retries may come due (and reach the grader) meanwhile.
    const s = await setup({ concurrency: 2, timeoutMs: 10_000 })
    behaviour = () => ({ ...ok200({ verdict: "accepted", score: 1 }), delayMs: 150 })
    const made = await Promise.all([1, 2, 3, 4, 5, 6].map(() => s.submit("x")))
    maxInFlightOf.set(s.course, 0)
    await runWorker()
    for (const one of made) expect([await statusOf(one.uuid), (await jobOf(one.uuid)).tries]).toEqual(["accepted", 1])
    expect(maxInFlightOf.get(s.course)).toBe(2)
  })

  it("records each grading's latency: a grade answered close to the timeout is a near_timeout override candidate, a quick one is not", async () => {
    // A timeout far above a quick answer's time on a busy machine: the slowish answer (82 % of it)
    // is near it, the quick one never is, however loaded the machine is.
    const s = await setup({ timeoutMs: 5_000 })
    behaviour = (reply) => ({ ...ok200({ verdict: "accepted", score: 1 }), delayMs: reply === "slowish" ? 4_100 : 0 })
    const slowish = await s.submit("slowish")
    const quick = await s.submit("quick")
    await runWorker()
    expect([await statusOf(slowish.uuid), await statusOf(quick.uuid)]).toEqual(["accepted", "accepted"])
    const latency = async (submissionUuid: string) =>
      (await m.sql<{ ms: number }>("SELECT (diagnostics->>'latencyMs')::int AS ms FROM learning_grading_jobs WHERE submission_uuid = $1", submissionUuid))[0]!.ms
    expect(await latency(slowish.uuid)).toBeGreaterThanOrEqual(4_100)
    expect(await latency(quick.uuid)).toBeLessThan(4_000)
    const candidates = ok<{ items: Array<{ submissionUuid: string; reason: string; detail: string }> }>(
      await m.invoke("learning.automatic_overrides.candidates", s.owner, { path: { course: s.course } }))
    expect(candidates.items.map((c) => [c.submissionUuid, c.reason])).toEqual([[slowish.uuid, "near_timeout"]])
    expect(candidates.items[0]!.detail).toContain("5000 ms")
  })

  it("lists submissions inside an incident's window on its checker as incident_window regrade candidates", async () => {
    const s = await setup()
    const other = await setup()
    behaviour = () => ok200({ verdict: "accepted", score: 1 })
    const inside = await s.submit("first")
    const elsewhere = await other.submit("first")
    await new Promise((resolve) => setTimeout(resolve, 20))
    const windowEnd = new Date()
    await new Promise((resolve) => setTimeout(resolve, 20))
    const after = await s.submit("second")
    await runWorker()
    const candidates = async (of: typeof s, reason?: string) =>
      ok<{ items: Array<{ submissionUuid: string; reason: string; incidentUuid?: string; checkerUuid?: string }> }>(
        await m.invoke("learning.regrades.candidates", of.owner, { path: { course: of.course }, urlParams: reason === undefined ? {} : { reason } })).items
    expect(await candidates(s)).toEqual([])
    const incident = ok<{ uuid: string }>(await m.invoke("learning.incidents.create", s.owner, {
      path: { run: s.run },
      payload: {
        requestUuid: randomUUID(), kind: "checker_outage", window: { from: new Date(Date.now() - 3_600_000).toISOString(), to: windowEnd.toISOString() },
        checkerUuid: s.checker.uuid, description: "the grader answered from a stale image"
      }
    }))
    expect((await candidates(s)).map((c) => [c.submissionUuid, c.reason, c.incidentUuid, c.checkerUuid]))
      .toEqual([[inside.uuid, "incident_window", incident.uuid, s.checker.uuid]])
    expect((await candidates(s, "incident_window")).map((c) => c.submissionUuid)).toEqual([inside.uuid])
    expect(await candidates(s, "older_version")).toEqual([])
    // Another course's submission in the same time window is not this incident's.
    expect(await candidates(other)).toEqual([])
    expect(await statusOf(after.uuid)).toBe("accepted")
    expect(await statusOf(elsewhere.uuid)).toBe("accepted")
  })

  it("regrades with a newer checker version: dry run old → new, plan_stale on a concurrent change, apply a subset as regrade layers, requeue a failed check, skip frozen items", async () => {
    const s = await setup()
    behaviour = byReply
    const wrong = await s.submit("wrong")
    const correct = await s.submit("correct")
    const boom = await s.submit("boom")
    for (let i = 0; i < 3; i++) {
      await runWorker()
      await makeDue(s.checker.uuid)
    }
    expect([await statusOf(wrong.uuid), await statusOf(correct.uuid), await statusOf(boom.uuid)]).toEqual(["graded", "accepted", "check_failed"])

    // A new version of the lineage (the secret carried over); the old one is superseded once it is ready.
    const v2 = ok<CheckerView & { replaces: string }>(await m.invoke("learning.checkers.create", s.owner, {
      path: { course: s.course },
      payload: {
        requestUuid: randomUUID(), name: "SQL grader v2", kind: "http", url: `http://127.0.0.1:${port}/grade`, timeoutMs: 10_000, replaces: s.checker.uuid,
        referenceCases: [{ reply: "correct", expected: "correct" }, { reply: "wrong", expected: "wrong" }]
      }
    }))
    expect([v2.version, v2.lineageUuid, v2.replaces, v2.hasSecret, v2.status]).toEqual([2, s.checker.uuid, s.checker.uuid, true, "draft"])
    expect((await s.checkerNow()).status).toBe("ready")
    await preflight(s.owner, s.course, v2.uuid)
    expect(ok<{ status: string; supersededBy: string }>(await m.invoke("learning.checkers.get", s.owner, { path: { course: s.course, checker: s.checker.uuid } })))
      .toMatchObject({ status: "superseded", supersededBy: v2.uuid })
    const candidates = ok<{ items: Array<{ submissionUuid: string; reason: string; newerCheckerUuid?: string }> }>(
      await m.invoke("learning.regrades.candidates", s.owner, { path: { course: s.course } }))
    expect(candidates.items.map((c) => [c.submissionUuid, c.reason, c.newerCheckerUuid]).sort()).toEqual([
      [boom.uuid, "check_failed", v2.uuid],
      [correct.uuid, "older_version", v2.uuid],
      [wrong.uuid, "older_version", v2.uuid]
    ].sort())

    // v2 gives half credit where v1 gave none.
    behaviour = (reply) => ok200(reply === "wrong" ? { verdict: "partial", score: 0.5 } : { verdict: "accepted", score: 1 })
    const createRegrade = async () => {
      const made = ok<{ uuid: string; status: string; progress: { total: number } }>(await m.invoke("learning.regrades.create", s.owner, {
        path: { course: s.course },
        payload: { requestUuid: randomUUID(), selector: { nodeKey: "q", which: "all" }, checkerUuid: v2.uuid, policy: "any" }
      }))
      expect([made.status, made.progress.total]).toEqual(["computing", 3])
      await runWorker()
      return ok<{ uuid: string; status: string; items: Array<{ uuid: string; submissionUuid: string; status: string; old?: { points: number }; new?: { points: number } }> }>(
        await m.invoke("learning.regrades.get", s.owner, { path: { course: s.course, regrade: made.uuid } }))
    }
    const dry = await createRegrade()
    expect(dry.status).toBe("ready")
    const item = (submissionUuid: string) => dry.items.find((one) => one.submissionUuid === submissionUuid)!
    expect(item(wrong.uuid)).toMatchObject({ status: "computed", old: { points: 0 }, new: { points: 5 } })
    expect(item(correct.uuid)).toMatchObject({ status: "computed", old: { points: 10 }, new: { points: 10 } })
    expect(item(boom.uuid).old).toBeUndefined()
    // The dry run changed nothing: no layer, no status, no attempt.
    expect(await statusOf(wrong.uuid)).toBe("graded")
    expect(await s.attemptsUsed()).toBe(2)

    // A concurrent score change makes the plan stale: refused whole, nothing applied.
    await m.runtime.runPromise(appendScoreLayer({ submissionUuid: correct.uuid, kind: "override", points: 9, verdict: "accepted", reason: "manual", byProfileUuid: s.owner.profileUuid }))
    expect(errorOf(await m.invoke("learning.regrades.apply", s.owner, { path: { course: s.course, regrade: dry.uuid }, payload: { requestUuid: randomUUID() } })))
      .toEqual({ status: 409, code: "plan_stale" })
    expect((await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_score_layers WHERE kind = 'regrade' AND submission_uuid = $1", wrong.uuid))[0]!.n).toBe(0)

    const fresh = await createRegrade()
    const pick = (submissionUuid: string) => fresh.items.find((one) => one.submissionUuid === submissionUuid)!.uuid
    const applied = ok<{ status: string; items: Array<{ submissionUuid: string; status: string; skipped?: string; layerUuid?: string }> }>(
      await m.invoke("learning.regrades.apply", s.owner, {
        path: { course: s.course, regrade: fresh.uuid },
        payload: { requestUuid: randomUUID(), itemUuids: [pick(wrong.uuid), pick(boom.uuid)] }
      }))
    expect(applied.status).toBe("applied")
    const outcome = (uuid: string) => applied.items.find((one) => one.submissionUuid === uuid)!
    expect(outcome(wrong.uuid)).toMatchObject({ status: "applied" })
    expect(outcome(boom.uuid).status).toBe("requeued")
    expect(outcome(correct.uuid).status).toBe("computed")
    const learnerView = ok<{ score: { points: number; verdict: string } }>(await m.invoke("learning.submissions.get", s.learner, { path: { submission: wrong.uuid } }))
    expect(learnerView.score).toMatchObject({ points: 5, verdict: "partial" })
    expect(await statusOf(boom.uuid)).toBe("submitted")
    await runWorker()
    expect(await statusOf(boom.uuid)).toBe("accepted")
    const audit = await m.sql<{ action: string }>("SELECT action FROM learning_audit_events WHERE subject_uuid = $1 ORDER BY created_at", wrong.uuid)
    expect(audit.map((row) => row.action)).toContain("score.regrade")
    // The first layer stays as it was.
    expect((await m.sql<{ kind: string; points: string }>("SELECT kind, points::text FROM learning_score_layers WHERE submission_uuid = $1 ORDER BY created_at", wrong.uuid))
      .map((row) => [row.kind, Number(row.points)])).toEqual([["auto", 0], ["regrade", 5]])

    // Frozen grades: items are skipped and listed, the rest still commits; an expired regrade answers 410.
    behaviour = () => ok200({ verdict: "accepted", score: 1 })
    const later = await createRegrade()
    await m.sql("UPDATE learning_runs SET finished_at = now() - interval '40 days' WHERE uuid = $1", s.run)
    const frozen = ok<{ frozen: Array<string>; items: Array<{ status: string; skipped?: string }> }>(
      await m.invoke("learning.regrades.apply", s.owner, { path: { course: s.course, regrade: later.uuid }, payload: { requestUuid: randomUUID() } }))
    expect(frozen.frozen).toHaveLength(3)
    expect(frozen.items.every((one) => one.skipped === "frozen")).toBe(true)
    await m.sql("UPDATE learning_runs SET finished_at = NULL WHERE uuid = $1", s.run)
    const expiring = await createRegrade()
    await m.sql("UPDATE learning_regrades SET expires_at = now() - interval '1 minute' WHERE uuid = $1", expiring.uuid)
    expect(errorOf(await m.invoke("learning.regrades.apply", s.owner, { path: { course: s.course, regrade: expiring.uuid }, payload: { requestUuid: randomUUID() } })))
      .toEqual({ status: 410, code: "plan_expired" })
    expect(errorOf(await m.invoke("learning.regrades.create", s.owner, {
      path: { course: s.course },
      payload: { requestUuid: randomUUID(), selector: { nodeKey: "q" }, checkerUuid: s.checker.uuid, policy: "any" }
    }))).toEqual({ status: 409, code: "checker_not_ready" })
  })
})
