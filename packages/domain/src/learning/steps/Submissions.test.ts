import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ok, only, refused, step as textStep } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import { type Answer, Operations } from "../../operations/Operations.js"
import { currentOperation } from "../../kernel/Operation.js"
import { claimCheckerCalls, finishCheckerCall } from "../grading/CheckerCalls.js"
import type { CourseAuthor, CourseNode, Run } from "../courses/Model.js"
import { advanceRuns } from "../courses/Runs.js"
import type { DemoAttempt, GradingJob, StepView, Submission, Variant } from "./StepModel.js"
import { submissionAllows, submissionTransitions, type SubmissionTrigger } from "./SubmissionMachine.js"
import { claimGradeJobs, createSubmission, finishGradeJob } from "./Submissions.js"
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { PostgresBlobStore } from "../../files/BlobStore.js"
import { runLearningJobs } from "../courses/Jobs.js"
import { assignStaff } from "../staff/Staff.js"

/**
 * The step and submission side of learning L2 through `Operations.invoke` on real Postgres:
 * attempts (consumed, exhausted, refunded), each declarative checker, variants and their clues,
 * demo tries, drafts, sample runs, generations, visibility, bounds, and the end-to-end path
 * enroll → start → submit → accepted → module and course completed → portfolio draft.
 */

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learning_submissions")
  owner = await m.profile({ name: "Автор" })
})
afterAll(async () => {
  await m?.close()
})

const day = 86_400_000
/** Every clue carries this marker; no learner-facing answer may contain it. */
const clueMarker = "CLUE-NEVER-SHOWN"

/** A quiz step (the shared helper's step, with a body naming it). */
const step = (nodeKey: string, parentKey: string, over: Partial<CourseNode> = {}): CourseNode =>
  textStep(nodeKey, parentKey, { stepType: "quiz", body: `Условие ${nodeKey}`, ...over })
const graded = (check: NonNullable<CourseNode["grading"]>["check"], over: Partial<NonNullable<CourseNode["grading"]>> = {}) =>
  ({ maxPoints: 10, passThreshold: 10, check, ...over }) as NonNullable<CourseNode["grading"]>

const pool = [7, 11, 13].map((value) => ({ dataset: { question: `Сколько будет ${value} + 0?` }, clue: { value, note: clueMarker } }))

const tree = (checkerUuid: string): ReadonlyArray<CourseNode> => [
  { nodeKey: "m1", kind: "module", title: "Модуль 1" },
  step("read", "m1", { stepType: "text" }),
  step("exact", "m1", { grading: graded({ kind: "exact", answers: ["42"] }, { attempts: 2 }) }),
  step("pattern", "m1", { grading: graded({ kind: "pattern", pattern: "SELECT\\s+\\*\\s+FROM\\s+\\w+;?", caseInsensitive: true }) }),
  step("numeric", "m1", {
    grading: graded({ kind: "numeric", tolerance: 0.5 }, { attempts: 3 }),
    variants: { mode: "pool", reissue: "per_attempt", pool },
    demo: true
  }),
  step("choice", "m1", { grading: graded({ kind: "choice", correct: ["a", "c"], partial: true }, { passThreshold: 5 }) }),
  step("schema", "m1", {
    grading: graded({ kind: "json_schema", schema: { type: "object", required: ["name"], properties: { name: { type: "string", minLength: 2 } } } })
  }),
  step("many", "m1", { grading: graded({ kind: "exact", answers: ["да"] }) }),
  { nodeKey: "m2", kind: "module", title: "Модуль 2" },
  step("code", "m2", { stepType: "code", grading: { maxPoints: 10, checkerUuid, attempts: 2 } }),
  step("generated", "m2", { stepType: "code", grading: { maxPoints: 10, checkerUuid, check: undefined }, variants: { mode: "generated" } }),
  step("essay", "m2", { stepType: "assignment", grading: { maxPoints: 10, review: { mode: "staff" } } }),
  step("strict", "m2", { grading: graded({ kind: "exact", answers: ["x"] }, { latePolicy: { mode: "refuse" } }), dueOffsetDays: 0 }),
  step("later", "m2", { grading: graded({ kind: "exact", answers: ["x"] }), unlockOffsetDays: 30 })
].map((node) => JSON.parse(JSON.stringify(node)))

/** A published course with a ready external checker, and a running open cohort run that started yesterday. */
const setup = async (nodes?: (checkerUuid: string) => ReadonlyArray<CourseNode>) => {
  const draft = ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс SQL", kind: "single" } }))
  const checkerUuid = randomUUID()
  await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, url, generator_url, status, sample_cases)
    VALUES ($1, $2, $1, 'http', 'https://grader.example/check', 'https://grader.example/generate', 'ready', '[{"input":"1"}]'::jsonb)`, checkerUuid, draft.uuid)
  const edited = ok<CourseAuthor>(await m.invoke("learning.courses.update", owner, {
    path: { course: draft.uuid },
    payload: { requestUuid: randomUUID(), expectedRevision: draft.revision, nodes: (nodes ?? tree)(checkerUuid) }
  }))
  ok(await m.invoke("learning.courses.publish", owner, { path: { course: draft.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } }))
  const run = ok<Run>(await m.invoke("learning.runs.create", owner, {
    path: { course: draft.uuid },
    payload: {
      requestUuid: randomUUID(),
      versionNumber: 1,
      title: "Поток",
      pacing: "cohort",
      startsAt: new Date(Date.now() - day).toISOString(),
      admission: "open",
      waitlist: false,
      enrollmentWindow: {},
      pausePolicy: { maxDays: 14, maxCount: 2 }
    }
  }))
  ok(await m.invoke("learning.runs.update", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, publish: true } }))
  await m.runtime.runPromise(advanceRuns(new Date()))
  return { courseUuid: draft.uuid, runUuid: run.uuid, checkerUuid }
}

/** A new learner enrolled (open admission) and started. */
const learnerIn = async (course: { runUuid: string }, profile?: SessionActor) => {
  const learner = profile ?? await m.profile({ name: "Ученик" })
  const enrollment = ok<{ uuid: string; revision: number; status: string }>(
    await m.invoke("learning.enrollments.enroll", learner, { path: { run: course.runUuid }, payload: { requestUuid: randomUUID() } })
  )
  expect(enrollment.status).toBe("active")
  const started = ok<{ uuid: string; revision: number }>(await m.invoke("learning.enrollments.start", learner, {
    path: { enrollment: enrollment.uuid },
    payload: { requestUuid: randomUUID(), expectedRevision: enrollment.revision }
  }))
  return { learner, enrollment: started.uuid }
}

/** Every learner-facing answer read in these tests, to check that no clue ever appears. */
const seen: Array<string> = []
const as = async (answer: Promise<Answer>) => {
  const result = await answer
  seen.push(JSON.stringify(result.body))
  return result
}
const submit = (learner: SessionActor, enrollment: string, node: string, reply: unknown, extra: Record<string, unknown> = {}) =>
  as(m.invoke("learning.submissions.create", learner, { path: { enrollment, node }, payload: { requestUuid: randomUUID(), reply, ...extra } }))
const getStep = (actor: SessionActor, enrollment: string, node: string) => as(m.invoke("learning.steps.get", actor, { path: { enrollment, node } }))
const attemptsUsed = async (actor: SessionActor, enrollment: string, node: string) => ok<StepView>(await getStep(actor, enrollment, node)).attempts.used

describe("submissions and attempts", () => {
  it("consumes an attempt per submission and refuses the one past the limit with attempts_exhausted; the step fails", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    const first = ok<Submission>(await submit(learner, enrollment, "exact", "41"))
    expect([first.status, first.attemptNo, first.attemptCounted, first.versionNumber, first.score?.verdict, first.score?.passed])
      .toEqual(["graded", 1, true, 1, "wrong", false])
    const second = ok<Submission>(await submit(learner, enrollment, "exact", " 40 "))
    expect(second.attemptNo).toBe(2)
    expect(refused(await submit(learner, enrollment, "exact", "42"))).toEqual([409, "attempts_exhausted"])
    const view = ok<StepView>(await getStep(learner, enrollment, "exact"))
    expect([view.status, view.attempts]).toEqual(["failed", { used: 2, allowed: 2, left: 0 }])
    // An extra attempt from a staff override lifts the limit (the dates' extraAttempts).
    await m.sql(`INSERT INTO learning_date_overrides (uuid, run_uuid, enrollment_uuid, node_key, extra_attempts, origin)
      VALUES ($1, $2, $3, 'exact', 1, 'manual')`, randomUUID(), course.runUuid, enrollment)
    const third = ok<Submission>(await submit(learner, enrollment, "exact", "42"))
    expect([third.status, third.attemptNo, third.score?.points]).toEqual(["accepted", 3, 10])
    const events = await m.sql<{ type: string; data: { status: string } }>(
      "SELECT type, data FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY occurred_at, type", third.uuid)
    expect(events.map((e) => [e.type, e.data.status]).sort()).toEqual([["learning.submission.accepted", "accepted"], ["learning.submission.graded", "graded"]])
  })

  it("refunds a cancelled submission and a platform-failed one; drafts and sample runs never consume", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    // Drafts: saved and revised, nothing counted.
    const draft = ok<{ revision: number }>(await as(m.invoke("learning.drafts.save", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "print(1)" } })))
    expect(refused(await m.invoke("learning.drafts.save", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "x" } })))
      .toEqual([409, "revision_conflict"])
    ok(await m.invoke("learning.drafts.save", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), expectedRevision: draft.revision, reply: "print(2)" } }))
    // Sample runs: queued jobs on the public cases, nothing counted.
    const sample = ok<GradingJob>(await as(m.invoke("learning.sample_runs.create", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "print(2)" } })))
    expect([sample.kind, sample.status]).toEqual(["sample_run", "queued"])
    expect(await attemptsUsed(learner, enrollment, "code")).toBe(0)

    // An external checker's submission waits in the queue; a submission from a stale draft revision is refused.
    expect(refused(await submit(learner, enrollment, "code", "print(2)", { draftRevision: draft.revision }))).toEqual([409, "revision_conflict"])
    const waiting = ok<Submission>(await submit(learner, enrollment, "code", "print(2)", { draftRevision: draft.revision + 1 }))
    expect([waiting.status, waiting.attemptCounted]).toEqual(["submitted", true])
    expect(await attemptsUsed(learner, enrollment, "code")).toBe(1)
    const cancelled = ok<Submission>(await as(m.invoke("learning.submissions.cancel", learner, {
      path: { submission: waiting.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: waiting.revision }
    })))
    expect([cancelled.status, cancelled.attemptCounted]).toEqual(["cancelled", false])
    expect(await attemptsUsed(learner, enrollment, "code")).toBe(0)
    const [job] = await m.sql<{ status: string }>("SELECT status FROM learning_grading_jobs WHERE submission_uuid = $1", waiting.uuid)
    expect(job!.status).toBe("cancelled")

    // A platform failure after the retries: check_failed, refunded, learning.checker.failed.
    const failing = ok<Submission>(await submit(learner, enrollment, "code", "print(3)"))
    const claimed = await m.runtime.runPromise(claimGradeJobs(10))
    const mine = claimed.find((c) => c.submission_uuid === failing.uuid)!
    expect(ok<Submission>(await m.invoke("learning.submissions.get", learner, { path: { submission: failing.uuid } })).status).toBe("checking")
    expect(await m.runtime.runPromise(finishGradeJob(mine.uuid, { _tag: "platform_error", error: "timeout after 10 s" }))).toBe(true)
    // Applied once.
    expect(await m.runtime.runPromise(finishGradeJob(mine.uuid, { _tag: "platform_error", error: "again" }))).toBe(false)
    const failed = ok<Submission>(await as(m.invoke("learning.submissions.get", learner, { path: { submission: failing.uuid } })))
    expect([failed.status, failed.attemptCounted]).toEqual(["check_failed", false])
    expect(await attemptsUsed(learner, enrollment, "code")).toBe(0)
    const checkerEvents = await m.sql<{ type: string }>("SELECT type FROM outbox_events WHERE type = 'learning.checker.failed' AND context->>'submissionUuid' = $1", failing.uuid)
    expect(checkerEvents).toHaveLength(1)

    // A verdict from the external checker grades a submission in `checking`.
    const judged = ok<Submission>(await submit(learner, enrollment, "code", "print(4)"))
    const next = (await m.runtime.runPromise(claimGradeJobs(10))).find((c) => c.submission_uuid === judged.uuid)!
    await m.runtime.runPromise(finishGradeJob(next.uuid, { _tag: "verdict", result: { fraction: 1, verdict: "accepted" } }))
    const accepted = ok<Submission>(await m.invoke("learning.submissions.get", learner, { path: { submission: judged.uuid } }))
    expect([accepted.status, accepted.score?.points, accepted.layers.map((l) => l.kind)]).toEqual(["accepted", 10, ["auto"]])
  })

  it("cancels and applies grade results only where the transition table allows: every status × trigger × role", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    const statuses = ["submitted", "checking", "check_failed", "awaiting_review", "graded", "accepted", "revision_requested", "cancelled"] as const
    const stranger = await m.profile()
    for (const status of statuses) {
      const made = ok<Submission>(await submit(learner, enrollment, "essay", `ответ ${status}`))
      await m.sql("UPDATE learning_submissions SET status = $1 WHERE uuid = $2", status, made.uuid)
      const cancel = (actor: SessionActor) =>
        m.invoke("learning.submissions.cancel", actor, { path: { submission: made.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: made.revision } })
      // Roles first (they change nothing): staff may read but not cancel, a stranger learns nothing.
      expect(refused(await cancel(owner)), status).toEqual([403, "forbidden"])
      expect(refused(await cancel(stranger)), status).toEqual([404, "not_found"])
      const answer = await cancel(learner)
      if (submissionAllows("learning.submissions.cancel", status)) expect(ok<Submission>(answer).status, status).toBe("cancelled")
      else expect(refused(answer), status).toEqual([409, "invalid_state"])
    }
    // The worker's triggers, every status: a grade job's result applies only to a submission in `checking`.
    for (const status of statuses) {
      for (const outcome of [
        { trigger: "worker.failed" as const, to: "check_failed", value: { _tag: "platform_error" as const, error: "timeout" } },
        { trigger: "worker.graded" as const, to: "graded", value: { _tag: "verdict" as const, result: { fraction: 0, verdict: "wrong" as const } } }
      ]) {
        const made = ok<Submission>(await submit(learner, enrollment, "code", `код ${status}`))
        const claimed = (await m.runtime.runPromise(claimGradeJobs(50))).find((c) => c.submission_uuid === made.uuid)!
        await m.sql("UPDATE learning_submissions SET status = $1 WHERE uuid = $2", status, made.uuid)
        const applied = await m.runtime.runPromise(finishGradeJob(claimed.uuid, outcome.value))
        const [after] = await m.sql<{ status: string }>("SELECT status FROM learning_submissions WHERE uuid = $1", made.uuid)
        expect([applied, after!.status], `${outcome.trigger} from ${status}`)
          .toEqual(submissionAllows(outcome.trigger, status) ? [true, outcome.to] : [false, status])
        // Free the attempt for the next round (the step allows 2).
        await m.sql("UPDATE learning_submissions SET attempt_counted = false WHERE uuid = $1", made.uuid)
      }
    }
    // The table itself: every trigger names known states, and only cancel and platform failure refund.
    const refunding = (Object.keys(submissionTransitions) as Array<SubmissionTrigger>).filter((t) => "refunds" in submissionTransitions[t])
    expect(refunding.sort()).toEqual(["learning.submissions.cancel", "worker.failed"])
  })

  it("refuses closed steps (step_locked), late submissions under a refusing policy, ungraded steps and paused enrollments", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    expect(refused(await submit(learner, enrollment, "later", "x"))).toEqual([409, "step_locked"])
    expect(refused(await m.invoke("learning.drafts.save", learner, { path: { enrollment, node: "later" }, payload: { requestUuid: randomUUID(), reply: "x" } })))
      .toEqual([409, "step_locked"])
    const locked = ok<StepView>(await getStep(learner, enrollment, "later"))
    expect([locked.status, locked.body]).toEqual(["locked", undefined])
    expect(refused(await submit(learner, enrollment, "strict", "x"))).toEqual([409, "deadline_passed"])
    expect(refused(await submit(learner, enrollment, "read", "x"))).toEqual([409, "invalid_state"])
    expect(refused(await submit(learner, enrollment, "nope", "x"))).toEqual([404, "not_found"])
    // lockAt passed: locked again.
    await m.sql(`INSERT INTO learning_date_overrides (uuid, run_uuid, enrollment_uuid, node_key, lock_at, origin)
      VALUES ($1, $2, $3, 'pattern', now() - interval '1 minute', 'manual')`, randomUUID(), course.runUuid, enrollment)
    expect(refused(await submit(learner, enrollment, "pattern", "select * from t"))).toEqual([409, "step_locked"])
    await m.sql("UPDATE learning_enrollments SET status = 'paused' WHERE uuid = $1", enrollment)
    expect(refused(await submit(learner, enrollment, "exact", "42"))).toEqual([409, "invalid_state"])
  })
})

describe("submissions.create under load (group commit)", () => {
  it("concurrent submits share transactions yet end as if made one by one: attempts numbered and limited per learner, each its events, step states, keys", async () => {
    const course = await setup()
    const learners = await Promise.all(Array.from({ length: 8 }, () => learnerIn(course)))
    const stranger = await m.profile({ name: "Посторонний" })
    const requests = learners.flatMap(({ enrollment, learner }) => [
      // "exact" allows 2 attempts: of three wrong replies two are graded, the third is refused.
      ...Array.from({ length: 3 }, () => ({ learner, enrollment, node: "exact", reply: "41" })),
      // "many" has no limit: accepted, the step completed.
      { learner, enrollment, node: "many", reply: "да" },
      // A staff-reviewed step takes the single path's attempt inside the batch.
      { learner, enrollment, node: "essay", reply: "Эссе" }
    ]).map((request) => ({ ...request, requestUuid: randomUUID() }))
    const extra = [
      { learner: stranger, enrollment: learners[0]!.enrollment, node: "many", reply: "да", requestUuid: randomUUID() },
      { learner: learners[1]!.learner, enrollment: learners[1]!.enrollment, node: "later", reply: "x", requestUuid: randomUUID() },
      { learner: learners[2]!.learner, enrollment: learners[2]!.enrollment, node: "nowhere", reply: "x", requestUuid: randomUUID() }
    ]
    const replayed = { learner: learners[3]!.learner, enrollment: learners[3]!.enrollment, node: "choice", reply: ["a", "c"], requestUuid: randomUUID() }
    const all = [...requests, ...extra, replayed, replayed, { ...replayed, reply: ["a"] }]
    const answers = await Promise.all(all.map((request) =>
      as(m.invoke("learning.submissions.create", request.learner, {
        path: { enrollment: request.enrollment, node: request.node },
        payload: { requestUuid: request.requestUuid, reply: request.reply }
      }))))
    const mine = answers.slice(0, requests.length)
    for (const [i, { enrollment }] of learners.entries()) {
      const exact = mine.slice(i * 5, i * 5 + 3)
      expect(exact.map((answer) => answer.status).sort()).toEqual([200, 200, 409])
      expect(exact.filter((answer) => answer.status === 409).map(refused)).toEqual([[409, "attempts_exhausted"]])
      const graded = exact.filter((answer) => answer.status === 200).map((answer) => ok<Submission>(answer))
      expect(graded.map((row) => [row.status, row.revision, row.attemptCounted, row.score?.verdict]))
        .toEqual([["graded", 2, true, "wrong"], ["graded", 2, true, "wrong"]])
      expect(graded.map((row) => row.attemptNo).sort()).toEqual([1, 2])
      const accepted = ok<Submission>(mine[i * 5 + 3]!)
      expect([accepted.status, accepted.revision, accepted.attemptNo, accepted.score?.points]).toEqual(["accepted", 3, 1, 10])
      const reviewed = ok<Submission>(mine[i * 5 + 4]!)
      expect([reviewed.status, reviewed.revision, reviewed.attemptNo]).toEqual(["awaiting_review", 2, 1])
      const states = await m.sql<{ node_key: string; status: string; revision: number }>(
        `SELECT node_key, status, revision FROM learning_step_states WHERE enrollment_uuid = $1 AND node_key IN ('exact', 'many') ORDER BY node_key`, enrollment)
      // From available (the start): exact to in_progress, then failed (no attempt left); many straight to completed.
      expect(states.map((row) => [row.node_key, row.status, row.revision])).toEqual([["exact", "failed", 3], ["many", "completed", 2]])
      const events = await m.sql<{ type: string; revision: number; audience: string }>(
        `SELECT e.type, e.aggregate_revision AS revision, e.context->'audience'->>0 AS audience FROM outbox_events e
          JOIN learning_submissions s ON s.uuid = e.aggregate_uuid WHERE s.enrollment_uuid = $1 ORDER BY s.node_key, e.type, e.aggregate_revision`, enrollment)
      const learner = learners[i]!.learner.profileUuid
      const expected = [
        ["learning.submission.graded", 2, learner],
        ["learning.submission.graded", 2, learner],
        ["learning.submission.accepted", 3, learner],
        ["learning.submission.graded", 2, learner]
      ]
      expect(events.filter((event) => event.type.startsWith("learning.submission.")).map((event) => [event.type, event.revision, event.audience]))
        .toEqual(i === 3 ? expect.arrayContaining(expected) : expected)
    }
    expect(answers.slice(requests.length, requests.length + 3).map(refused)).toEqual([[404, "not_found"], [409, "step_locked"], [404, "not_found"]])
    // The same requestUuid three times at once, twice with one body and once with another: one
    // submission, for whichever body reaches the batch first (the order the submits arrive in, not
    // the order they were sent); the same body again gets the same answer, the other body
    // request_conflict.
    const [first, again, conflict] = answers.slice(requests.length + 3)
    if (conflict!.status === 200) {
      expect([first, again].map((answer) => refused(answer!))).toEqual([[409, "request_conflict"], [409, "request_conflict"]])
    } else {
      expect(ok<Submission>(again!)).toEqual(ok<Submission>(first!))
      expect(refused(conflict!)).toEqual([409, "request_conflict"])
    }
    const uuids = answers.filter((answer) => answer.status === 200).map((answer) => ok<Submission>(answer).uuid)
    const [row] = await m.sql<{ submissions: number; transactions: number; keys: number }>(
      `SELECT (SELECT count(*)::int FROM learning_submissions WHERE enrollment_uuid = ANY($1::uuid[])) AS submissions,
        (SELECT count(DISTINCT xmin::text)::int FROM learning_submissions WHERE uuid = ANY($2::uuid[])) AS transactions,
        (SELECT count(*)::int FROM idempotency_keys WHERE request_uuid = ANY($3::uuid[])) AS keys`,
      learners.map((learner) => learner.enrollment), uuids, all.map((request) => request.requestUuid))
    // 8 × (2 graded + 1 accepted + 1 awaiting review) + the replayed one; keys only for those (refusals keep none).
    expect([row?.submissions, row?.keys]).toEqual([33, 33])
    expect(row?.transactions).toBeLessThan(33)
  })

  it("a submit alone (inside a caller's transaction) is the batch path with one item: the same rows, a refusal keeps nothing, a retry answers the stored result", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    const alone = (node: string, reply: unknown, requestUuid = randomUUID(), extra: { readonly draftRevision?: number } = {}) =>
      m.runtime.runPromise(Effect.flatMap(Effect.zip(SqlClient.SqlClient, Operations), ([sql, operations]) =>
        // Run as the registry runs it: the operation's declared enrollment rule is the running one's.
        sql.withTransaction(Effect.either(Effect.locally(
          createSubmission(learner, enrollment, node, { requestUuid, reply, ...extra }),
          currentOperation,
          operations.entries.get("learning.submissions.create")
        )))))
    const outcome = (answer: Either.Either<Submission, { readonly _tag: string }>) =>
      Either.match(answer, { onLeft: (error) => error._tag, onRight: (row) => [row.status, row.revision, row.attemptNo, row.score?.verdict] })
    const key = randomUUID()
    const accepted = await alone("many", "да", key)
    expect(outcome(accepted)).toEqual(["accepted", 3, 1, "accepted"])
    const again = await alone("many", "да", key)
    expect(Either.getOrThrow(again).uuid).toBe(Either.getOrThrow(accepted).uuid)
    expect(outcome(await alone("exact", "41"))).toEqual(["graded", 2, 1, "wrong"])
    expect(outcome(await alone("exact", "41"))).toEqual(["graded", 2, 2, "wrong"])
    const exhausted = randomUUID()
    expect(outcome(await alone("exact", "42", exhausted))).toBe("AttemptsExhausted")
    // A review step and a draft's revision take submitAttempt inside the batch of one.
    expect(outcome(await alone("essay", "Эссе"))).toEqual(["awaiting_review", 2, 1, undefined])
    expect(outcome(await alone("code", "print(1)", randomUUID(), { draftRevision: 7 }))).toBe("RevisionConflict")
    const [kept] = await m.sql<{ submissions: number; keys: number }>(
      `SELECT (SELECT count(*)::int FROM learning_submissions WHERE enrollment_uuid = $1) AS submissions,
        (SELECT count(*)::int FROM idempotency_keys WHERE request_uuid = $2) AS keys`, enrollment, exhausted)
    expect([kept?.submissions, kept?.keys]).toEqual([4, 0])
    const states = await m.sql<{ node_key: string; status: string }>(
      `SELECT node_key, status FROM learning_step_states WHERE enrollment_uuid = $1 AND node_key IN ('exact', 'many', 'essay') ORDER BY node_key`, enrollment)
    expect(states.map((row) => [row.node_key, row.status])).toEqual([["essay", "in_progress"], ["exact", "failed"], ["many", "completed"]])
  })
})

describe("course packages and their checkers", () => {
  it("exports the checkers' specifications without secrets and imports them as drafts the steps name; a bad one fails the import", async () => {
    const course = await setup()
    await m.sql("UPDATE learning_checkers SET secret_sealed = 'sealed-secret' WHERE uuid = $1", course.checkerUuid)
    const work = () => m.runtime.runPromise(Effect.provide(runLearningJobs(), PostgresBlobStore))
    const jobDone = async (uuid: string) => ok<{ status: string; fileUuid?: string; resultCourseUuid?: string; issues: Array<{ code: string; message: string }> }>(
      await m.invoke("learning.exports.get", owner, { path: { export: uuid } }))
    const exported = ok<{ uuid: string }>(await m.invoke("learning.exports.course", owner, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), includeCheckers: true }
    }))
    await work()
    const fileUuid = (await jobDone(exported.uuid)).fileUuid!
    const text = only(await m.sql<{ text: string }>("SELECT convert_from(bytes, 'UTF8') AS text FROM file_blobs WHERE key = $1", fileUuid)).text
    expect(text).not.toContain("sealed-secret")
    const pack = JSON.parse(text) as { checkers: Array<{ uuid: string; url: string }>; course: { nodes: Array<CourseNode> } }
    expect(pack.checkers.map((checker) => [checker.uuid, checker.url])).toEqual([[course.checkerUuid, "https://grader.example/check"]])
    const importAs = async (content: unknown) => {
      await m.sql("UPDATE file_blobs SET bytes = convert_to($1, 'UTF8') WHERE key = $2", JSON.stringify(content), fileUuid)
      const queued = ok<{ uuid: string }>(await m.invoke("learning.courses.import", owner, { payload: { requestUuid: randomUUID(), fileUuid, format: "birzha-course/1" } }))
      await work()
      return jobDone(queued.uuid)
    }
    const imported = await importAs(pack)
    expect([imported.status, imported.issues]).toEqual(["done", []])
    const copy = ok<{ nodes: Array<CourseNode> }>(await m.invoke("learning.courses.author_get", owner, { path: { course: imported.resultCourseUuid! } }))
    const named = [...new Set(copy.nodes.flatMap((node) => node.grading?.checkerUuid ?? []))]
    const checkers = await m.sql<{ uuid: string; status: string; secret_sealed: string | null }>(
      "SELECT uuid::text, status, secret_sealed FROM learning_checkers WHERE course_uuid = $1", imported.resultCourseUuid)
    expect(checkers).toEqual([{ uuid: named[0], status: "draft", secret_sealed: null }])
    // A URL is stored as checkers.create stores it (normalized).
    const normalized = await importAs({ ...pack, checkers: [{ ...pack.checkers[0], url: "https://GRADER.Example:443/a/../check" }] })
    expect((await m.sql<{ url: string }>("SELECT url FROM learning_checkers WHERE course_uuid = $1", normalized.resultCourseUuid))[0]?.url)
      .toBe("https://grader.example/check")
    // A checker a service would refuse fails the import; nothing is created.
    const before = only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_courses")).n
    for (const [checkers, message] of [
      [[{ ...pack.checkers[0], url: "http://127.0.0.1/grade" }], "checkers.0.url: not a public HTTPS URL"],
      [[pack.checkers[0], { ...pack.checkers[0], uuid: pack.checkers[0]!.uuid.toUpperCase() }], `checkers.1.uuid: ${pack.checkers[0]!.uuid.toUpperCase()} is in the package twice`],
      [[{ ...pack.checkers[0], name: "SQL\u0000" }], "checkers.0.name: control characters (other than tab and newline) and lone surrogates are not allowed"]
    ] as const) {
      const failed = await importAs({ ...pack, checkers })
      expect([failed.status, failed.issues.map((issue) => issue.code), failed.issues[0]?.message]).toEqual(["failed", ["invalid_package"], message])
    }
    expect(only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_courses")).n).toBe(before)
  })
})

describe("the enrollment export", () => {
  it("holds the learner's submissions, reviews, course grade and completion, as the learner sees them: no clue", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    ok(await submit(learner, enrollment, "exact", "42"))
    ok(await submit(learner, enrollment, "essay", "Эссе"))
    ok(await submit(learner, enrollment, "numeric", 1))
    const queued = ok<{ uuid: string }>(await m.invoke("learning.exports.enrollment", learner, { path: { enrollment }, payload: { requestUuid: randomUUID(), format: "json" } }))
    await m.runtime.runPromise(Effect.provide(runLearningJobs(), PostgresBlobStore))
    const done = ok<{ status: string; fileUuid: string }>(await m.invoke("learning.exports.get", learner, { path: { export: queued.uuid } }))
    const [file] = await m.sql<{ text: string }>("SELECT convert_from(bytes, 'UTF8') AS text FROM file_blobs WHERE key = $1", done.fileUuid)
    expect(file!.text).not.toContain(clueMarker)
    const record = JSON.parse(file!.text) as {
      submissions: Array<{ nodeKey: string; status: string; reply: unknown }>
      reviews: Array<{ kind: string; status: string }>
      scores: Array<{ points: number; maxPoints: number }>
      completion: { steps: Array<{ nodeKey: string; status: string }> }
    }
    expect(record.submissions.map((row) => [row.nodeKey, row.status, row.reply])).toEqual([
      ["exact", "accepted", "42"],
      ["essay", "awaiting_review", "Эссе"],
      ["numeric", "graded", 1]
    ])
    expect(record.reviews).toEqual([{ submissionUuid: expect.any(String), kind: "staff", status: "pooled" }])
    expect(record.scores.map((score) => score.points)).toEqual([10])
    expect(record.completion.steps.find((step) => step.nodeKey === "exact")?.status).toBe("completed")
  })
})

describe("copies and their checkers", () => {
  it("copies the course's checkers as drafts without secrets and points the steps at them; without them the copy's steps are reported", async () => {
    const course = await setup()
    // The steps name version 1, superseded by a ready version 2 (the current one, copied); a failed version 3 is not carried.
    const v2 = randomUUID()
    await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, version, kind, url, status, name, concurrency, secret_sealed)
      SELECT $1, course_uuid, lineage_uuid, 2, 'http', 'https://grader.example/v2', 'ready', 'SQL', 4, 'sealed' FROM learning_checkers WHERE uuid = $2`, v2, course.checkerUuid)
    await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, version, kind, url, status, name)
      SELECT $1, course_uuid, lineage_uuid, 3, 'http', 'https://grader.example/v3', 'preflight_failed', 'SQL' FROM learning_checkers WHERE uuid = $2`, randomUUID(), course.checkerUuid)
    await m.sql("UPDATE learning_checkers SET status = 'superseded', superseded_by_uuid = $2 WHERE uuid = $1", course.checkerUuid, v2)
    const copy = async (includeCheckers: boolean) =>
      ok<{ uuid: string; nodes: Array<CourseNode>; validation: { errors: number } }>(await m.invoke("learning.courses.copy", owner, {
        path: { course: course.courseUuid },
        payload: { requestUuid: randomUUID(), title: "Копия", includeCheckers }
      }))
    const withCheckers = await copy(true)
    const named = withCheckers.nodes.filter((node) => node.grading?.checkerUuid !== undefined).map((node) => node.grading!.checkerUuid!)
    expect(named).toHaveLength(2)
    expect(new Set(named).size).toBe(1)
    expect(named[0]).not.toBe(course.checkerUuid)
    const [copied] = await m.sql<{ course_uuid: string; lineage_uuid: string; version: number; status: string; secret_sealed: string | null; url: string; name: string; concurrency: number }>(
      "SELECT course_uuid::text, lineage_uuid::text, version, status, secret_sealed, url, name, concurrency FROM learning_checkers WHERE uuid = $1", named[0])
    expect(copied).toEqual({ course_uuid: withCheckers.uuid, lineage_uuid: named[0], version: 1, status: "draft", secret_sealed: null, url: "https://grader.example/v2", name: "SQL", concurrency: 4 })
    expect(only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_checkers WHERE course_uuid = $1", withCheckers.uuid)).n).toBe(1)
    const issues = async (uuid: string) =>
      ok<{ issues: Array<{ code: string; nodeKey?: string }> }>(await m.invoke("learning.courses.validate", owner, { path: { course: uuid } })).issues
    expect((await issues(withCheckers.uuid)).filter((issue) => issue.code === "unknown_checker")).toEqual([])
    // Carrying checkers out needs checkers_manage: an instructor denied it copies the content only.
    const instructor = await m.profile({ name: "Преподаватель" })
    await m.runtime.runPromise(assignStaff({ courseUuid: course.courseUuid, profileUuid: instructor.profileUuid, role: "instructor", denies: ["checkers_manage"], byProfileUuid: owner.profileUuid }))
    const copyAs = (includeCheckers: boolean) => m.invoke("learning.courses.copy", instructor, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), title: "Копия", includeCheckers }
    })
    expect(refused(await copyAs(true))).toEqual([403, "forbidden"])
    ok(await copyAs(false))
    // Without checkers the steps still name the source's, which is not the copy's: reported, and publishing is refused.
    const bare = await copy(false)
    expect((await issues(bare.uuid)).filter((issue) => issue.code === "unknown_checker").map((issue) => issue.nodeKey).sort()).toEqual(["code", "generated"])
    expect(refused(await m.invoke("learning.courses.publish", owner, {
      path: { course: bare.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: 1, changelog: "" }
    }))[0]).toBe(409)
  })
})

describe("uuids in upper case", () => {
  it("finds the enrollment, its step, draft and submission whatever the case of the path's uuid", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    const upper = enrollment.toUpperCase()
    expect(ok<{ uuid: string }>(await m.invoke("learning.enrollments.get", learner, { path: { enrollment: upper } })).uuid).toBe(enrollment)
    const lower = ok<StepView>(await getStep(learner, enrollment, "many"))
    const upperView = ok<StepView>(await getStep(learner, upper, "many"))
    expect([upperView.nodeKey, upperView.title, upperView.status, upperView.attempts]).toEqual([lower.nodeKey, lower.title, lower.status, lower.attempts])
    ok(await m.invoke("learning.drafts.save", learner, { path: { enrollment: upper, node: "many" }, payload: { requestUuid: randomUUID(), reply: "нет" } }))
    expect(ok<Submission>(await submit(learner, upper, "many", "да")).status).toBe("accepted")
    const [state] = await m.sql<{ status: string }>("SELECT status FROM learning_step_states WHERE enrollment_uuid = $1 AND node_key = 'many'", enrollment)
    expect(state?.status).toBe("completed")
  })
})

describe("analytics from the learners' work", () => {
  const work = () => m.runtime.runPromise(Effect.provide(runLearningJobs(), PostgresBlobStore))
  type Cell = { count?: number; suppressed: boolean }
  type Analytics = {
    funnel: Record<string, Cell>
    steps: Array<{ nodeKey: string; started: Cell; completed: Cell }>
    scores: Array<{ bucket: string; learners: Cell }>
    graderLoad: Array<{ reviewerUuid: string; pending: number; decided: number }>
  }

  it("counts steps started and completed, buckets course grades by the steps' selection rule, shows grader load, narrows to a group; the grades CSV carries them", async () => {
    const course = await setup(() => [
      { nodeKey: "m1", kind: "module", title: "Модуль" },
      step("read", "m1", { stepType: "text" }),
      step("a", "m1", { grading: graded({ kind: "exact", answers: ["1"] }, { selection: "best" }) }),
      step("b", "m1", { grading: graded({ kind: "exact", answers: ["2"] }) })
    ].map((node) => JSON.parse(JSON.stringify(node))))
    const learners = await Promise.all(Array.from({ length: 7 }, () => learnerIn(course)))
    // Five learners: right then wrong on both: a keeps its best (10), b its last (0): 50 %. One learner: both right, 100 %. One never submits.
    for (const { enrollment, learner } of learners.slice(0, 5)) {
      for (const [node, reply] of [["a", "1"], ["a", "x"], ["b", "2"], ["b", "x"]] as const) ok(await submit(learner, enrollment, node, reply))
    }
    for (const [node, reply] of [["a", "1"], ["b", "2"]] as const) ok(await submit(learners[5]!.learner, learners[5]!.enrollment, node, reply))
    // Staff reviewers' load: the owner claimed one review of the first learner and decided one of each of the five;
    // another reviewer's two reviews concern one learner only, so that reviewer is left out (as a small cell).
    const helper = await m.profile({ name: "Проверяющий" })
    const review = async (i: number, status: string, reviewer: string) => {
      const [submission] = await m.sql<{ uuid: string }>("SELECT uuid FROM learning_submissions WHERE enrollment_uuid = $1 LIMIT 1", learners[i]!.enrollment)
      await m.sql(`INSERT INTO learning_review_assignments (uuid, submission_uuid, course_uuid, run_uuid, node_key, learner_profile_uuid, pseudonym, kind, status,
          reviewer_profile_uuid) VALUES ($1, $2, $3, $4, 'a', $5, 'Учащийся', 'staff', $6, $7)`,
        randomUUID(), submission!.uuid, course.courseUuid, course.runUuid, learners[i]!.learner.profileUuid, status, reviewer)
    }
    await review(0, "claimed", owner.profileUuid)
    for (let i = 0; i < 5; i++) await review(i, "decided", owner.profileUuid)
    await review(0, "claimed", helper.profileUuid)
    await review(0, "decided", helper.profileUuid)
    const analytics = async (actor: SessionActor, urlParams: Record<string, string> = {}) =>
      m.invoke("learning.analytics.get", actor, { path: { course: course.courseUuid }, urlParams })
    const all = ok<Analytics>(await analytics(owner))
    expect(all.funnel.enrolled).toEqual({ count: 7, suppressed: false })
    expect(all.steps.map((row) => [row.nodeKey, row.started, row.completed])).toEqual([
      ["read", { count: 0, suppressed: false }, { count: 0, suppressed: false }],
      ["a", { count: 6, suppressed: false }, { count: 6, suppressed: false }],
      ["b", { count: 6, suppressed: false }, { count: 6, suppressed: false }]
    ])
    expect(all.scores).toEqual([
      { bucket: "0-19", learners: { count: 0, suppressed: false } },
      { bucket: "20-39", learners: { count: 0, suppressed: false } },
      { bucket: "40-59", learners: { count: 5, suppressed: false } },
      { bucket: "60-79", learners: { count: 0, suppressed: false } },
      { bucket: "80-100", learners: { suppressed: true } }
    ])
    expect(all.graderLoad).toEqual([{ reviewerUuid: owner.profileUuid, pending: 1, decided: 5 }])
    // A group of the five: its members only; its group-scoped analyst must name it; another group is not theirs.
    const group = async (members: ReadonlyArray<string>) => {
      const uuid = randomUUID()
      await m.sql(`INSERT INTO learning_groups (uuid, course_uuid, run_uuid, name, kind, visibility, assignment, member_count, created_by)
        VALUES ($1, $2, $3, 'Группа', 'section', 'separate', 'manual', $4, $5)`, uuid, course.courseUuid, course.runUuid, members.length, owner.profileUuid)
      for (const member of members) await m.sql("INSERT INTO learning_group_members (group_uuid, enrollment_uuid) VALUES ($1, $2)", uuid, member)
      return uuid
    }
    const five = await group(learners.slice(0, 5).map((learner) => learner.enrollment))
    const other = await group([learners[6]!.enrollment])
    const analyst = await m.profile({ name: "Аналитик" })
    await m.runtime.runPromise(assignStaff({ courseUuid: course.courseUuid, profileUuid: analyst.profileUuid, role: "analyst", groupUuid: five, byProfileUuid: owner.profileUuid }))
    const mine = ok<Analytics>(await analytics(analyst, { groupUuid: five }))
    expect([mine.funnel.enrolled, mine.scores.map((row) => row.learners.count ?? "suppressed"), mine.graderLoad.length])
      .toEqual([{ count: 5, suppressed: false }, [0, 0, 5, 0, 0], 1])
    // The group's uuid in upper case names the same group.
    expect(ok<Analytics>(await analytics(analyst, { groupUuid: five.toUpperCase() })).funnel.enrolled).toEqual({ count: 5, suppressed: false })
    expect(refused(await analytics(analyst))).toEqual([403, "forbidden"])
    expect(refused(await analytics(analyst, { groupUuid: other }))).toEqual([404, "not_found"])
    expect(refused(await analytics(owner, { groupUuid: randomUUID() }))).toEqual([404, "not_found"])
    // The grades CSV: each learner's course grade, empty for one without a score.
    const queued = ok<{ uuid: string }>(await m.invoke("learning.analytics.export", owner, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), kind: "grades", pseudonymize: true }
    }))
    await work()
    const done = ok<{ status: string; fileUuid: string }>(await m.invoke("learning.exports.get", owner, { path: { export: queued.uuid } }))
    const [file] = await m.sql<{ text: string }>("SELECT convert_from(bytes, 'UTF8') AS text FROM file_blobs WHERE key = $1", done.fileUuid)
    const scores = file!.text.trim().split("\n").slice(1).map((line) => line.split(",")[3])
    expect([done.status, scores.sort()]).toEqual(["done", ["", "100.00", "50.00", "50.00", "50.00", "50.00", "50.00"]])
  })
})

describe("declarative checkers through submissions.create", () => {
  it("grades exact, pattern, numeric (with the variant's clue), choice (partial) and JSON Schema inline", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    const result = async (node: string, reply: unknown) => {
      const s = ok<Submission>(await submit(learner, enrollment, node, reply))
      return [s.status, s.score?.verdict, s.score?.points]
    }
    expect(await result("exact", "42")).toEqual(["accepted", "accepted", 10])
    expect(await result("pattern", "select *  from users")).toEqual(["accepted", "accepted", 10])
    expect(await result("pattern", "select * from users; drop table users")).toEqual(["graded", "wrong", 0])
    expect(await result("choice", ["a"])).toEqual(["accepted", "partial", 5])
    expect(await result("choice", ["b"])).toEqual(["graded", "wrong", 0])
    expect(await result("schema", { name: "Ann" })).toEqual(["accepted", "accepted", 10])
    expect(await result("schema", { name: 1 })).toEqual(["graded", "wrong", 0])
    // Numeric: the expected value is the learner's variant's clue, not in the rule.
    const variant = ok<Variant>(await as(m.invoke("learning.variants.issue", learner, { path: { enrollment, node: "numeric" }, payload: { requestUuid: randomUUID() } })))
    const value = pool.find((p) => p.dataset.question === (variant.dataset as { question: string }).question)!.clue.value
    const wrong = ok<Submission>(await submit(learner, enrollment, "numeric", value + 2))
    expect([wrong.variantUuid, wrong.score?.verdict]).toEqual([variant.uuid, "wrong"])
    // Per attempt reissue: a new variant with another dataset, pinned by the next submission.
    const next = ok<Variant>(await as(m.invoke("learning.variants.issue", learner, { path: { enrollment, node: "numeric" }, payload: { requestUuid: randomUUID(), reissue: true } })))
    expect([next.n, next.uuid === variant.uuid, JSON.stringify(next.dataset) === JSON.stringify(variant.dataset)]).toEqual([2, false, false])
    const nextValue = pool.find((p) => p.dataset.question === (next.dataset as { question: string }).question)!.clue.value
    const right = ok<Submission>(await submit(learner, enrollment, "numeric", String(nextValue + 0.4)))
    expect([right.variantUuid, right.status, right.score?.verdict]).toEqual([next.uuid, "accepted", "accepted"])
    // The old submission keeps its pin.
    expect(ok<Submission>(await as(m.invoke("learning.submissions.get", learner, { path: { submission: wrong.uuid } }))).variantUuid).toBe(variant.uuid)
    // A review step waits for review; an unsafe pattern never reaches a course (400 at update).
    expect(ok<Submission>(await submit(learner, enrollment, "essay", "эссе")).status).toBe("awaiting_review")
    const draft = ok<CourseAuthor>(await m.invoke("learning.courses.author_get", owner, { path: { course: course.courseUuid } }))
    const unsafe = draft.nodes.map((n) => (n.nodeKey === "pattern" ? { ...n, grading: { maxPoints: 10, check: { kind: "pattern", pattern: "(a+)\\1" } } } : n))
    const answer = await m.invoke("learning.courses.update", owner, { path: { course: course.courseUuid }, payload: { requestUuid: randomUUID(), expectedRevision: draft.revision, nodes: unsafe } })
    expect(refused(answer)).toEqual([400, "invalid_request"])
    expect(JSON.stringify(answer.body)).toContain("grading.check.pattern: backreferences")
  })
})

describe("visibility", () => {
  it("a learner never sees another learner's data nor any clue; staff read, strangers get 404", async () => {
    const course = await setup()
    const a = await learnerIn(course)
    const b = await learnerIn(course)
    const mine = ok<Submission>(await submit(a.learner, a.enrollment, "numeric", 1))
    for (const [id, input] of [
      ["learning.steps.get", { path: { enrollment: a.enrollment, node: "numeric" } }],
      ["learning.submissions.history", { path: { enrollment: a.enrollment, node: "numeric" } }],
      ["learning.submissions.get", { path: { submission: mine.uuid } }]
    ] as const) {
      expect(refused(await m.invoke(id, b.learner, input)), id).toEqual([404, "not_found"])
      ok(await m.invoke(id, owner, input))
    }
    expect(refused(await m.invoke("learning.drafts.save", b.learner, { path: { enrollment: a.enrollment, node: "numeric" }, payload: { requestUuid: randomUUID(), reply: 1 } })))
      .toEqual([404, "not_found"])
    const history = ok<{ items: Array<Submission> }>(await as(m.invoke("learning.submissions.history", a.learner, { path: { enrollment: a.enrollment, node: "numeric" } })))
    expect(history.items.map((s) => s.uuid)).toEqual([mine.uuid])
    const view = ok<StepView>(await getStep(a.learner, a.enrollment, "numeric"))
    expect([view.variant?.uuid, view.lastSubmission?.uuid, view.body, view.grading?.checkedBy]).toEqual([mine.variantUuid, mine.uuid, "Условие numeric", "numeric"])
    // No answer of the rule and no clue in the learner's view.
    expect(JSON.stringify(view)).not.toContain("tolerance")
    for (const body of seen) expect(body).not.toContain(clueMarker)
    const [stored] = await m.sql<{ clue: { note: string } }>("SELECT clue FROM learning_variants WHERE uuid = $1", mine.variantUuid)
    expect(stored!.clue.note).toBe(clueMarker)
  })
})

describe("demo tries", () => {
  it("tries a demo step without enrolling, then applies the try into an enrollment on the same variant (an attempt)", async () => {
    const course = await setup()
    const visitor = await m.profile({ name: "Гость" })
    expect(refused(await m.invoke("learning.demo.try", visitor, { path: { course: course.courseUuid, node: "exact" }, payload: { requestUuid: randomUUID(), reply: "42" } })))
      .toEqual([409, "not_eligible"])
    const attempt = ok<DemoAttempt>(await as(m.invoke("learning.demo.try", visitor, { path: { course: course.courseUuid, node: "numeric" }, payload: { requestUuid: randomUUID(), reply: 0 } })))
    const value = pool.find((p) => p.dataset.question === (attempt.dataset as { question: string }).question)!.clue.value
    const good = ok<DemoAttempt>(await as(m.invoke("learning.demo.try", visitor, { path: { course: course.courseUuid, node: "numeric" }, payload: { requestUuid: randomUUID(), reply: value } })))
    expect([attempt.verdict, good.verdict, good.passed, good.status]).toEqual(["wrong", "accepted", true, "recorded"])
    const progress = ok<{ attempts: Array<DemoAttempt> }>(await as(m.invoke("learning.demo.progress", visitor, { path: { course: course.courseUuid } })))
    expect(progress.attempts.map((a) => a.uuid)).toEqual([good.uuid, attempt.uuid])
    // Nothing of an enrollment exists yet.
    expect(await m.sql("SELECT 1 FROM learning_enrollments WHERE profile_uuid = $1", visitor.profileUuid)).toHaveLength(0)

    const { enrollment } = await learnerIn(course, visitor)
    const applied = ok<Submission>(await as(m.invoke("learning.demo.apply", visitor, {
      path: { enrollment, node: "numeric" },
      payload: { requestUuid: randomUUID(), demoAttemptUuid: good.uuid }
    })))
    expect([applied.status, applied.attemptNo, applied.attemptCounted, applied.demoAttemptUuid]).toEqual(["accepted", 1, true, good.uuid])
    expect(refused(await m.invoke("learning.demo.apply", visitor, { path: { enrollment, node: "numeric" }, payload: { requestUuid: randomUUID(), demoAttemptUuid: good.uuid } })))
      .toEqual([409, "invalid_state"])
    // Another profile's demo attempt is not the caller's.
    const other = await learnerIn(course)
    expect(refused(await m.invoke("learning.demo.apply", other.learner, { path: { enrollment: other.enrollment, node: "numeric" }, payload: { requestUuid: randomUUID(), demoAttemptUuid: attempt.uuid } })))
      .toEqual([404, "not_found"])
    for (const body of seen) expect(body).not.toContain(clueMarker)
  })

  it("allows 20 demo tries of a step a day, the 21st answers 429", async () => {
    const course = await setup()
    const visitor = await m.profile()
    const tryIt = () => m.invoke("learning.demo.try", visitor, { path: { course: course.courseUuid, node: "numeric" }, payload: { requestUuid: randomUUID(), reply: 1 } })
    for (let i = 0; i < 20; i++) ok(await tryIt())
    expect(refused(await tryIt())).toEqual([429, "rate_limited"])
  })
})

describe("generated variants and sample runs", () => {
  it("queues a generation, issues the generated variant's dataset (never its clue) when the generator answers", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    expect(ok<{ status: string }>(await m.invoke("learning.generated_variants.state", learner, { path: { enrollment, node: "generated" } })).status).toBe("none")
    expect(refused(await submit(learner, enrollment, "generated", "x"))).toEqual([409, "invalid_state"])
    const job = ok<GradingJob>(await as(m.invoke("learning.generated_variants.create", learner, { path: { enrollment, node: "generated" }, payload: { requestUuid: randomUUID() } })))
    // While pending, asking again returns the same job.
    expect(ok<GradingJob>(await m.invoke("learning.generated_variants.create", learner, { path: { enrollment, node: "generated" }, payload: { requestUuid: randomUUID() } })).uuid).toBe(job.uuid)
    expect(ok<{ status: string; jobUuid: string }>(await m.invoke("learning.generated_variants.state", learner, { path: { enrollment, node: "generated" } })))
      .toEqual({ status: "pending", jobUuid: job.uuid })
    const calls = (await m.runtime.runPromise(claimCheckerCalls(20))).filter((c) => c.jobUuid === job.uuid)
    expect(calls.map((c) => [c.kind, c.url])).toEqual([["generate", "https://grader.example/generate"]])
    // A 5xx is a platform error: requeued for a retry.
    expect(await m.runtime.runPromise(finishCheckerCall(calls[0]!, { _tag: "answer", statusCode: 503, body: "" }))).toBe("queued")
    await m.sql("UPDATE learning_grading_jobs SET next_try_at = now() WHERE uuid = $1", job.uuid)
    const retry = (await m.runtime.runPromise(claimCheckerCalls(20))).find((c) => c.jobUuid === job.uuid)!
    const answer = JSON.stringify({ dataset: { table: "orders" }, clue: { answers: ["SELECT 1"], note: clueMarker } })
    expect(await m.runtime.runPromise(finishCheckerCall(retry, { _tag: "answer", statusCode: 200, body: answer }))).toBe("succeeded")
    const done = ok<GradingJob>(await as(m.invoke("learning.generated_variants.get", learner, { path: { job: job.uuid } })))
    expect([done.status, (done.result as { dataset: unknown }).dataset]).toEqual(["succeeded", { table: "orders" }])
    const view = ok<StepView>(await getStep(learner, enrollment, "generated"))
    expect(view.variant?.dataset).toEqual({ table: "orders" })
    const submitted = ok<Submission>(await submit(learner, enrollment, "generated", "SELECT 1"))
    expect(submitted.variantUuid).toBe(view.variant?.uuid)
    // Another learner cannot read the job.
    const other = await learnerIn(course)
    expect(refused(await m.invoke("learning.generated_variants.get", other.learner, { path: { job: job.uuid } }))).toEqual([404, "not_found"])
    for (const body of seen) expect(body).not.toContain(clueMarker)
  })

  it("runs sample runs without score or attempt, 30 an hour; a step without a ready checker answers checker_not_ready", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    expect(refused(await m.invoke("learning.sample_runs.create", learner, { path: { enrollment, node: "exact" }, payload: { requestUuid: randomUUID(), reply: "1" } })))
      .toEqual([409, "checker_not_ready"])
    const sample = () => m.invoke("learning.sample_runs.create", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "print(1)" } })
    const first = ok<GradingJob>(await sample())
    const call = (await m.runtime.runPromise(claimCheckerCalls(50))).find((c) => c.jobUuid === first.uuid)!
    expect(JSON.parse(call.body)).toMatchObject({ kind: "sample_run", reply: "print(1)", cases: [{ input: "1" }] })
    await m.runtime.runPromise(finishCheckerCall(call, { _tag: "answer", statusCode: 200, body: JSON.stringify({ verdict: "wrong", cases: [{ input: "1", passed: false }] }) }))
    const result = ok<GradingJob>(await m.invoke("learning.sample_runs.get", learner, { path: { job: first.uuid } }))
    expect([result.status, result.verdict, result.result]).toEqual(["succeeded", "wrong", { cases: [{ input: "1", passed: false }] }])
    for (let i = 1; i < 30; i++) ok(await sample())
    expect(refused(await sample())).toEqual([429, "rate_limited"])
    expect(await attemptsUsed(learner, enrollment, "code")).toBe(0)
    await m.sql("UPDATE learning_checkers SET status = 'suspended' WHERE uuid = $1", course.checkerUuid)
    expect(refused(await m.invoke("learning.generated_variants.create", learner, { path: { enrollment, node: "generated" }, payload: { requestUuid: randomUUID() } })))
      .toEqual([409, "checker_not_ready"])
  })
})

describe("end to end: enroll → start → submit → accepted → completed → portfolio draft", () => {
  const small = (): ReadonlyArray<CourseNode> => [
    { nodeKey: "m1", kind: "module", title: "Введение" },
    step("intro", "m1", { stepType: "text" }),
    step("quiz", "m1", { title: "Первый запрос", grading: graded({ kind: "exact", answers: ["SELECT 1"] }) })
  ].map((node) => JSON.parse(JSON.stringify(node)))

  it("completes the module and the course and makes a private portfolio draft of the accepted work", async () => {
    const course = await setup(small)
    const { enrollment, learner } = await learnerIn(course)
    ok(await m.invoke("learning.steps.acknowledge", learner, { path: { enrollment, node: "intro" }, payload: { requestUuid: randomUUID() } }))
    expect(refused(await m.invoke("learning.steps.acknowledge", learner, { path: { enrollment, node: "quiz" }, payload: { requestUuid: randomUUID() } })))
      .toEqual([409, "invalid_state"])
    const accepted = ok<Submission>(await submit(learner, enrollment, "quiz", "select 1"))
    expect(accepted.status).toBe("accepted")
    const events = await m.sql<{ type: string }>(
      "SELECT type FROM outbox_events WHERE context->>'enrollmentUuid' = $1 OR aggregate_uuid::text = $1 ORDER BY occurred_at, type", enrollment)
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["learning.module.completed", "learning.course.completed", "learning.submission.accepted"]))
    const completion = ok<{ criteriaMet?: boolean }>(await m.invoke("learning.completion.get", learner, { path: { enrollment } }))
    expect(JSON.stringify(completion)).toMatch(/"quiz"/)

    const draft = ok<{ uuid: string; status: string; kind: string; draft: { title: string; description: string } }>(await m.invoke("learning.portfolio.create", learner, {
      path: { enrollment },
      payload: { requestUuid: randomUUID(), submissionUuids: [accepted.uuid], title: "Мой первый SQL", includeFeedback: false }
    }))
    expect([draft.kind, draft.status, draft.draft.title]).toEqual(["portfolio", "draft", "Мой первый SQL"])
    expect(draft.draft.description).toContain("Первый запрос")
    const list = ok<{ items: Array<{ uuid: string }> }>(await m.invoke("portfolio.list", learner, {}))
    expect(list.items.map((p) => p.uuid)).toContain(draft.uuid)
    const saved = await m.sql<{ type: string }>("SELECT type FROM outbox_events WHERE aggregate_uuid = $1", draft.uuid)
    expect(saved.map((e) => e.type)).toEqual(["publication.draft_saved"])
  })

  it("takes 1 to 10 accepted submissions: 10 pass, 11 are refused; a submission not accepted is invalid_state", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    const accepted: Array<string> = []
    for (let i = 0; i < 11; i++) accepted.push(ok<Submission>(await submit(learner, enrollment, "many", "да")).uuid)
    const create = (submissionUuids: ReadonlyArray<string>) =>
      m.invoke("learning.portfolio.create", learner, { path: { enrollment }, payload: { requestUuid: randomUUID(), submissionUuids, title: "Работы", includeFeedback: true } })
    ok(await create(accepted.slice(0, 10)))
    expect(refused(await create(accepted))).toEqual([400, "invalid_request"])
    expect(refused(await create([]))).toEqual([400, "invalid_request"])
    const wrong = ok<Submission>(await submit(learner, enrollment, "pattern", "nope"))
    expect(refused(await create([wrong.uuid]))).toEqual([409, "invalid_state"])
    const other = await learnerIn(course)
    expect(refused(await m.invoke("learning.portfolio.create", other.learner, {
      path: { enrollment },
      payload: { requestUuid: randomUUID(), submissionUuids: [accepted[0]!], title: "Чужое", includeFeedback: false }
    }))).toEqual([404, "not_found"])
  })

  it("is idempotent by requestUuid: a replay answers the first result, another body is request_conflict", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course)
    const payload = { requestUuid: randomUUID(), reply: "41" }
    const first = ok<Submission>(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node: "exact" }, payload }))
    const again = ok<Submission>(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node: "exact" }, payload }))
    expect(again.uuid).toBe(first.uuid)
    expect(await attemptsUsed(learner, enrollment, "exact")).toBe(1)
    expect(refused(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node: "exact" }, payload: { ...payload, reply: "42" } })))
      .toEqual([409, "request_conflict"])
    // The same body on another step is another request, not a replay of this one.
    expect(refused(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node: "pattern" }, payload })))
      .toEqual([409, "request_conflict"])
    expect(refused(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node: "exact" }, payload: { ...payload, requestUuid: randomUUID(), extra: 1 } })))
      .toEqual([400, "invalid_request"])
  })
})
