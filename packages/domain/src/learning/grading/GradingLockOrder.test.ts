import { SqlClient } from "@effect/sql"
import { Cause, Deferred, Effect, Exit, Fiber } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ok, only } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import { eventually } from "../../../../../testing/progress.js"
import { loadEnrollment } from "../enrollments/EnrollmentRepository.js"
import type { CourseAuthor, Run } from "../courses/Model.js"
import { advanceRuns } from "../courses/Runs.js"
import type { Submission } from "../steps/StepModel.js"
import { recordStepProgress } from "../steps/StepStates.js"
import { claimGradeJobs, finishGradeJob } from "../steps/Submissions.js"

/**
 * The lock order of docs/decisions.md ("Lock order") between the grading worker and a learner's
 * command, on real Postgres, interleaved deterministically: the learner's transaction holds the
 * enrollment (as every learner command does first) while the worker applies a verdict that
 * completes a step; then the learner locks that step's state. Before, the worker held the step
 * state and waited for the enrollment (completion), so the learner's lock closed a cycle and
 * Postgres aborted one of them (40P01). Now the worker waits for the enrollment before anything.
 */

let m: Marketplace
let owner: SessionActor
beforeAll(async () => {
  m = await openMarketplace("learning_lock_order")
  owner = await m.profile({ name: "Автор" })
})
afterAll(async () => {
  await m?.close()
})

/** A running course whose module holds two steps graded by an external checker, and a started learner. */
const setup = async () => {
  const draft = ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } }))
  const checkerUuid = randomUUID()
  await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, url, status)
    VALUES ($1, $2, $1, 'http', 'https://grader.example/check', 'ready')`, checkerUuid, draft.uuid)
  const step = (nodeKey: string) => ({
    nodeKey, parentKey: "m1", kind: "step", stepType: "code", title: nodeKey, body: "Напишите запрос",
    grading: { maxPoints: 10, checkerUuid, attempts: 5 }
  })
  const edited = ok<CourseAuthor>(await m.invoke("learning.courses.update", owner, {
    path: { course: draft.uuid },
    payload: { requestUuid: randomUUID(), expectedRevision: draft.revision, nodes: [{ nodeKey: "m1", kind: "module", title: "Модуль" }, step("q1"), step("q2")] }
  }))
  ok(await m.invoke("learning.courses.publish", owner, { path: { course: draft.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } }))
  const run = ok<Run>(await m.invoke("learning.runs.create", owner, {
    path: { course: draft.uuid },
    payload: {
      requestUuid: randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 86_400_000).toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
    }
  }))
  ok(await m.invoke("learning.runs.update", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, publish: true } }))
  await m.runtime.runPromise(advanceRuns(new Date()))
  const learner = await m.profile({ name: "Ученик" })
  const enrolled = ok<{ uuid: string; revision: number }>(await m.invoke("learning.enrollments.enroll", learner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID() } }))
  ok(await m.invoke("learning.enrollments.start", learner, { path: { enrollment: enrolled.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: enrolled.revision } }))
  return { learner, enrollment: enrolled.uuid }
}

/** Backends of the test database waiting for a row or transaction lock. */
const lockWaiters = async () =>
  only(await m.sql<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
  )).n

/** A failure's SQLSTATE (40P01: deadlock detected) and cause, for the assertion's message. */
const causeOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return ""
  const error = Cause.squash(exit.cause) as { readonly cause?: { readonly code?: string } }
  return `${error.cause?.code ?? ""} ${Cause.pretty(exit.cause)}`
}


describe("grading and a learner's command take the enrollment before its step states", () => {
  it("a verdict that completes a step while the learner holds the enrollment and then locks that step: both commit, no deadlock", async () => {
    const { enrollment, learner } = await setup()
    // Both steps submitted; q2's answer is graded (accepted) at once, so q1's verdict completes the module and the course.
    const submitted = await Promise.all(["q1", "q2"].map(async (node) =>
      ok<Submission>(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node }, payload: { requestUuid: randomUUID(), reply: `ответ ${node}` } }))))
    const jobs = await m.runtime.runPromise(claimGradeJobs(10))
    const jobOf = (submission: Submission) => jobs.find((job) => job.submission_uuid === submission.uuid)!.uuid
    const accepted = { _tag: "verdict", result: { fraction: 1, verdict: "accepted" } } as const
    await m.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(finishGradeJob(jobOf(submitted[1]!), accepted))))

    const outcome = await m.runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const held = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      // The learner's command: the enrollment first, then (after the worker started) the step's state.
      const learnerSide = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* loadEnrollment(enrollment, { lock: true })
        yield* Deferred.succeed(held, undefined)
        yield* Deferred.await(go)
        return yield* recordStepProgress(enrollment, "q1", "in_progress")
      })))
      yield* Deferred.await(held)
      const workerSide = yield* Effect.fork(sql.withTransaction(finishGradeJob(jobOf(submitted[0]!), accepted)))
      // The worker runs until it waits for a lock the learner holds.
      yield* Effect.promise(() => eventually(async () => (await lockWaiters()) >= 1, Boolean, "the worker to wait for the learner", { everyMs: 20 }))
      yield* Deferred.succeed(go, undefined)
      return { learner: yield* Fiber.await(learnerSide), worker: yield* Fiber.await(workerSide) }
    }))
    expect(Exit.isSuccess(outcome.learner), causeOf(outcome.learner)).toBe(true)
    expect(Exit.isSuccess(outcome.worker), causeOf(outcome.worker)).toBe(true)
    expect(outcome.worker).toEqual(Exit.succeed(true))
    // The worker's verdict applied after the learner's commit: the step, the module and the course completed once.
    const states = await m.sql<{ node_key: string; status: string }>(
      "SELECT node_key, status FROM learning_step_states WHERE enrollment_uuid = $1 ORDER BY node_key", enrollment)
    expect(states.map((row) => [row.node_key, row.status])).toEqual([["m1", "completed"], ["q1", "completed"], ["q2", "completed"]])
    const events = await m.sql<{ type: string }>(
      "SELECT type FROM outbox_events WHERE type IN ('learning.module.completed', 'learning.course.completed') AND aggregate_uuid = $1 ORDER BY type", enrollment)
    expect(events.map((row) => row.type)).toEqual(["learning.course.completed", "learning.module.completed"])
  })
})
