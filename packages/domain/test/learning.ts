import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import type { SessionActor } from "../src/kernel/Authentication.js"
import type { CourseAuthor, CourseNode, Run } from "../src/learning/courses/Model.js"
import { advanceRuns } from "../src/learning/courses/Runs.js"
import type { Answer } from "../src/operations/Operations.js"
import { bodyOf, codeOf, type Marketplace, okBody } from "./marketplace.js"

/** A command body: a fresh requestUuid and the fields given (their literal types kept, for typed calls). */
export function command(): { readonly requestUuid: string }
export function command<const Extra extends object>(extra: Extra): { readonly requestUuid: string } & Extra
export function command(extra: object = {}) {
  return { requestUuid: randomUUID(), ...extra }
}

export interface TestCourse {
  readonly uuid: string
  /** Its first run (a draft, open admission). */
  readonly run: string
}

/** Another run of the course: cohort-paced, open admission, starting tomorrow. */
export const addRun = async (m: Marketplace, owner: SessionActor, courseUuid: string) =>
  okBody<Run>(await m.invoke("learning.runs.create", owner, {
    path: { course: courseUuid },
    payload: command({
      versionNumber: 1,
      title: "Поток",
      pacing: "cohort",
      startsAt: new Date(Date.now() + 86_400_000).toISOString(),
      admission: "open",
      waitlist: false,
      enrollmentWindow: {},
      pausePolicy: { maxDays: 0, maxCount: 0 }
    })
  })).uuid

/** A published course of `owner` (one module `m1` with a text step `s1`) with one draft run. */
export const publishedCourse = async (m: Marketplace, owner: SessionActor, visibility: "private" | "unlisted" = "private"): Promise<TestCourse> => {
  const draft = okBody<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: command({ title: "Курс команды", kind: "single" }) }))
  const nodes = [{ nodeKey: "m1", kind: "module", title: "Модуль" }, { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "Шаг", body: "Текст" }]
  const edited = okBody<CourseAuthor>(await m.invoke("learning.courses.update", owner, {
    path: { course: draft.uuid },
    payload: command({ expectedRevision: draft.revision, nodes, visibility })
  }))
  okBody(await m.invoke("learning.courses.publish", owner, { path: { course: draft.uuid }, payload: command({ expectedRevision: edited.revision, changelog: "" }) }))
  return { uuid: draft.uuid, run: await addRun(m, owner, draft.uuid) }
}

/**
 * A course draft given its nodes, published, with a running open run and a started learner: the
 * way every grading test reaches a step a learner can submit to (all through the operations).
 */
export const runningCourse = async (
  m: Marketplace,
  owner: SessionActor,
  course: { readonly uuid: string; readonly revision: number },
  nodes: ReadonlyArray<Record<string, unknown>>
) => {
  const edited = okBody<CourseAuthor>(await m.invoke("learning.courses.update", owner, { path: { course: course.uuid }, payload: command({ expectedRevision: course.revision, nodes }) }))
  okBody(await m.invoke("learning.courses.publish", owner, { path: { course: course.uuid }, payload: command({ expectedRevision: edited.revision, changelog: "" }) }))
  const run = okBody<Run>(await m.invoke("learning.runs.create", owner, {
    path: { course: course.uuid },
    payload: command({
      versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 60_000).toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
    })
  }))
  okBody(await m.invoke("learning.runs.update", owner, { path: { run: run.uuid }, payload: command({ expectedRevision: run.revision, publish: true }) }))
  await m.runtime.runPromise(advanceRuns(new Date()))
  const learner = await m.profile()
  const enrollment = okBody<{ uuid: string; revision: number }>(await m.invoke("learning.enrollments.enroll", learner, { path: { run: run.uuid }, payload: command() }))
  okBody(await m.invoke("learning.enrollments.start", learner, { path: { enrollment: enrollment.uuid }, payload: command({ expectedRevision: enrollment.revision }) }))
  return { run: run.uuid, learner, enrollment: enrollment.uuid }
}

/**
 * An enrollment written directly: the enrollment operations are built
 * elsewhere; the people and community operations only read the record.
 */
export const enrollDirectly = async (
  m: Marketplace,
  c: { readonly uuid: string; readonly run: string },
  learner: SessionActor,
  status = "active",
  started = true
) => {
  const uuid = randomUUID()
  await m.sql("INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status, started_at) VALUES ($1, $2, $3, $4, $5, $6)",
    uuid, c.run, c.uuid, learner.profileUuid, status, started ? new Date() : null)
  return uuid
}

/** Shared helpers of the learning tests (answers through `Operations.invoke`, course trees). */

/** The body of a 200 answer (the test fails with the body otherwise). */
export const ok = <A>(answer: Answer): A => {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(200)
  return bodyOf<A>(answer)
}

/** The one item of a list that must hold exactly one (the test fails otherwise). */
export const only = <A>(items: ReadonlyArray<A>): A => {
  const [item, ...rest] = items
  if (item === undefined || rest.length > 0) throw new Error(`expected exactly one item, got ${items.length}`)
  return item
}

/** [status, error code] of an answer, to compare with the expected refusal. */
export const refused = (answer: Answer) => [answer.status, codeOf(answer)]

/** A text step under a module, with its fields overridable. */
export const step = (nodeKey: string, parentKey: string, over: Partial<CourseNode> = {}): CourseNode => ({
  nodeKey,
  parentKey,
  kind: "step",
  stepType: "text",
  title: `Шаг ${nodeKey}`,
  body: "Текст шага",
  ...over
})

/** A fresh profile that was invited by `owner` to a staff role and scope on the course and accepted. */
export const acceptedStaff = async (m: Marketplace, owner: SessionActor, courseUuid: string, role: string, scope: Record<string, string> = {}) => {
  const profile = await m.profile()
  const invited = ok<{ uuid: string }>(await m.invoke("learning.staff.assign", owner, {
    path: { course: courseUuid },
    payload: command({ profileUuid: profile.profileUuid, role, scope })
  }))
  ok(await m.invoke("learning.staff.accept", profile, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) }))
  return { profile, assignment: invited.uuid }
}

/**
 * The role matrix of a set of operations: calls each operation as each caller (sequentially, a
 * fresh record per call when `call` makes one) and returns the statuses, to compare with the
 * expected table in one assertion.
 */
export const roleMatrix = async (
  operations: ReadonlyArray<string>,
  callers: Readonly<Record<string, SessionActor>>,
  call: (operation: string, caller: SessionActor) => Promise<number>
) => {
  const answers: Record<string, Record<string, number>> = {}
  for (const operation of operations) {
    answers[operation] = {}
    for (const [who, caller] of Object.entries(callers)) answers[operation]![who] = await call(operation, caller)
  }
  return answers
}
