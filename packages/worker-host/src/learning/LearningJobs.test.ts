import { anonymous } from "@birzha/domain"
import { PostgresBlobStore } from "@birzha/domain/internal"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, type Marketplace, openMarketplace } from "../../../domain/test/marketplace.js"
import { cleanExpired } from "../Retention.js"
import { makeLearningCorrectionsJob, makeLearningEnrollmentsJob, makeLearningJobsJob, makeLearningReviewsJob, makeLearningRunsJob } from "./LearningJobs.js"

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("learning_jobs_worker")
})
afterAll(async () => {
  await m?.close()
})

const runJob = (make: typeof makeLearningJobsJob) => m.runtime.runPromise(Effect.flatMap(make(), (job) => job.run))

const call = async (id: string, actor: Parameters<Marketplace["invoke"]>[1], input: object) => {
  const answer = await m.invoke(id, actor, input)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return bodyOf<{ uuid: string; revision: number; status: string }>(answer)
}

/** A published course of `owner` with these nodes, and a cohort run that started a second ago (started by the run clock). */
const runningCourse = async (owner: Parameters<Marketplace["invoke"]>[1], nodes: ReadonlyArray<object>, pausePolicy: { maxDays: number; maxCount: number }) => {
  const course = await call("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } })
  const edited = await call("learning.courses.update", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: course.revision, nodes } })
  await call("learning.courses.publish", owner, { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } })
  const run = await call("learning.runs.create", owner, {
    path: { course: course.uuid },
    payload: {
      requestUuid: randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 1000).toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy
    }
  })
  await call("learning.runs.update", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, publish: true } })
  await runJob(makeLearningRunsJob)
  return run
}

describe("the worker's learning jobs", () => {
  it("finishes a queued course export, and starts a scheduled run whose start has come", async () => {
    const owner = await m.profile()
    const call = async (id: string, input: object) => {
      const answer = await m.invoke(id, owner, input)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return bodyOf<{ uuid: string; revision: number; status: string; fileUuid?: string; items: Array<{ status: string }> }>(answer)
    }
    const course = await call("learning.courses.create", { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } })
    const nodes = [{ nodeKey: "m1", kind: "module", title: "Модуль" }, { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "Шаг", body: "Текст" }]
    const edited = await call("learning.courses.update", { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: course.revision, nodes } })
    await call("learning.courses.publish", { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } })
    const exported = await call("learning.exports.course", { path: { course: course.uuid }, payload: { requestUuid: randomUUID(), includeCheckers: false } })
    await runJob(makeLearningJobsJob)
    const done = await call("learning.exports.get", { path: { export: exported.uuid } })
    expect([done.status, typeof done.fileUuid]).toEqual(["done", "string"])
    // Kept 7 days: retention leaves it before, and removes the file (row and bytes) after, keeping the job.
    const fileCount = async () => (await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM files WHERE uuid = $1", done.fileUuid!))[0]!.n
    const clean = () => m.runtime.runPromise(Effect.provide(cleanExpired, PostgresBlobStore))
    await clean()
    expect(await fileCount()).toBe(1)
    await m.sql("UPDATE learning_jobs SET expires_at = now() - interval '1 minute' WHERE uuid = $1", exported.uuid)
    const removed = await clean()
    expect(removed["exportFiles"]).toBe(1)
    expect(await fileCount()).toBe(0)
    const expired = await call("learning.exports.get", { path: { export: exported.uuid } })
    expect([expired.status, expired.fileUuid]).toEqual(["done", undefined])

    const run = await call("learning.runs.create", {
      path: { course: course.uuid },
      payload: {
        requestUuid: randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 1000).toISOString(),
        admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
      }
    })
    await call("learning.runs.update", { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, publish: true } })
    await runJob(makeLearningRunsJob)
    const runs = bodyOf<{ items: Array<{ status: string }> }>(await m.invoke("learning.runs.list", anonymous, { path: { course: course.uuid } }))
    expect(runs.items.map((r) => r.status)).toEqual(["running"])
  })
  it("runs the enrollment clock: announces unlocked steps and ends a pause at its end", async () => {
    const owner = await m.profile()
    const learner = await m.profile()
    const nodes = [{ nodeKey: "m1", kind: "module", title: "Модуль" }, { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "Шаг", body: "Текст" }]
    const run = await runningCourse(owner, nodes, { maxDays: 5, maxCount: 1 })
    const enrollment = await call("learning.enrollments.enroll", learner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID() } })
    await runJob(makeLearningEnrollmentsJob)
    const types = async () => (await m.sql<{ type: string }>("SELECT type FROM outbox_events WHERE aggregate_uuid = $1", enrollment.uuid)).map((e) => e.type)
    expect(await types()).toContain("learning.step.available")
    // The clock's wake-ups are no change of the record: the revision is the enrolled one.
    const paused = await call("learning.enrollments.pause", learner, { path: { enrollment: enrollment.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: enrollment.revision } })
    expect(paused.status).toBe("paused")
    await m.sql("UPDATE learning_enrollments SET pause_until = now() - interval '1 second' WHERE uuid = $1", enrollment.uuid)
    await runJob(makeLearningEnrollmentsJob)
    const [row] = await m.sql<{ status: string }>("SELECT status FROM learning_enrollments WHERE uuid = $1", enrollment.uuid)
    expect(row!.status).toBe("active")
    expect(await types()).toContain("learning.enrollment.resume")
  })
  it("announces a review claim past its due time once (learning.review.overdue)", async () => {
    const owner = await m.profile()
    const learner = await m.profile()
    const nodes = [
      { nodeKey: "m1", kind: "module", title: "Модуль" },
      { nodeKey: "essay", parentKey: "m1", kind: "step", stepType: "assignment", title: "Эссе", body: "Текст", grading: { maxPoints: 10, review: { mode: "staff" } } }
    ]
    const run = await runningCourse(owner, nodes, { maxDays: 0, maxCount: 0 })
    const enrollment = await call("learning.enrollments.enroll", learner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID() } })
    await call("learning.enrollments.start", learner, { path: { enrollment: enrollment.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: enrollment.revision } })
    const submission = await call("learning.submissions.create", learner, {
      path: { enrollment: enrollment.uuid, node: "essay" },
      payload: { requestUuid: randomUUID(), reply: "Эссе" }
    })
    const claimed = await call("learning.reviews.claim", owner, { path: { submission: submission.uuid }, payload: { requestUuid: randomUUID() } })
    const overdue = async () =>
      (await m.sql<{ type: string }>("SELECT type FROM outbox_events WHERE aggregate_uuid = $1 AND type = 'learning.review.overdue'", claimed.uuid)).length
    await runJob(makeLearningReviewsJob)
    expect(await overdue()).toBe(0)
    await m.sql("UPDATE learning_review_assignments SET due_at = now() - interval '1 second' WHERE uuid = $1", claimed.uuid)
    await runJob(makeLearningReviewsJob)
    await runJob(makeLearningReviewsJob)
    expect(await overdue()).toBe(1)
  })

  it("runs the corrections clock: an undecided extension expires at its requested due, a resolved appeal closes after 7 days", async () => {
    const owner = await m.profile()
    const learner = await m.profile()
    const nodes = [{ nodeKey: "m1", kind: "module", title: "Модуль" }, { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "Шаг", body: "Текст" }]
    const run = await runningCourse(owner, nodes, { maxDays: 0, maxCount: 0 })
    const [course] = await m.sql<{ uuid: string }>("SELECT course_uuid AS uuid FROM learning_runs WHERE uuid = $1", run.uuid)
    const enrollment = await call("learning.enrollments.enroll", learner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID() } })
    const [extension, appeal, submission] = [randomUUID(), randomUUID(), randomUUID()]
    await m.sql(`INSERT INTO learning_extension_requests (uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, original_due_at,
        requested_due_at, reason) VALUES ($1, $2, $3, $4, $5, 's1', now() - interval '3 days', now() - interval '1 second', 'r')`,
      extension, course!.uuid, run.uuid, enrollment.uuid, learner.profileUuid)
    await m.sql(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, attempt_no, reply, status)
      VALUES ($1, $2, $3, $4, $5, 's1', 1, 1, '"x"'::jsonb, 'graded')`, submission, enrollment.uuid, course!.uuid, run.uuid, learner.profileUuid)
    await m.sql(`INSERT INTO learning_appeals (uuid, submission_uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, reason, initial_points,
        resolved_points, status, resolved_at) VALUES ($1, $2, $3, $4, $5, $6, 's1', 'r', 0, 4, 'resolved', now() - interval '8 days')`,
      appeal, submission, course!.uuid, run.uuid, enrollment.uuid, learner.profileUuid)
    await runJob(makeLearningCorrectionsJob)
    expect(await m.sql("SELECT status FROM learning_extension_requests WHERE uuid = $1", extension)).toEqual([{ status: "expired" }])
    expect(await m.sql("SELECT status, closed_points::float AS closed FROM learning_appeals WHERE uuid = $1", appeal)).toEqual([{ status: "closed", closed: 4 }])
  })
})
