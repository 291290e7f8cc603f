import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, codeOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import type { SessionActor } from "../api/Authentication.js"
import type { Answer } from "../operations/Operations.js"
import { stepDates } from "./Dates.js"
import type { CourseAuthor, CourseNode, Run } from "./Model.js"
import { recordStepProgress } from "./StepStates.js"

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learning_enrollments")
  owner = await m.profile({ name: "Автор" })
})
afterAll(async () => {
  await m?.close()
})

const ok = <A>(answer: Answer): A => {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(200)
  return bodyOf<A>(answer)
}
export const refused = (answer: Answer) => [answer.status, codeOf(answer)]

const day = 86_400_000
const step = (nodeKey: string, parentKey: string, over: Partial<CourseNode> = {}): CourseNode => ({
  nodeKey,
  parentKey,
  kind: "step",
  stepType: "text",
  title: `Шаг ${nodeKey}`,
  body: "Текст",
  ...over
})
const tree: ReadonlyArray<CourseNode> = [
  { nodeKey: "m1", kind: "module", title: "Модуль 1" },
  step("s1", "m1"),
  step("s2", "m1", { dueOffsetDays: 7 }),
  { nodeKey: "m2", kind: "module", title: "Модуль 2" },
  step("s3", "m2", { unlockOffsetDays: 3, dueOffsetDays: 10 })
]

const publishedCourse = async (nodes: ReadonlyArray<CourseNode> = tree) => {
  const draft = ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } }))
  const edited = ok<CourseAuthor>(await m.invoke("learning.courses.update", owner, {
    path: { course: draft.uuid },
    payload: { requestUuid: randomUUID(), expectedRevision: draft.revision, nodes }
  }))
  ok(await m.invoke("learning.courses.publish", owner, { path: { course: draft.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } }))
  return ok<CourseAuthor>(await m.invoke("learning.courses.author_get", owner, { path: { course: draft.uuid } }))
}

const openRun = async (course: { uuid: string }, over: Record<string, unknown> = {}) => {
  const run = ok<Run>(await m.invoke("learning.runs.create", owner, {
    path: { course: course.uuid },
    payload: {
      requestUuid: randomUUID(),
      versionNumber: 1,
      title: "Поток",
      pacing: "cohort",
      startsAt: new Date(Date.now() - day).toISOString(),
      admission: "open",
      waitlist: false,
      enrollmentWindow: {},
      pausePolicy: { maxDays: 14, maxCount: 2 },
      ...over
    }
  }))
  return ok<Run>(await m.invoke("learning.runs.update", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: run.revision, publish: true } }))
}

describe("the step side's contract: dates and step progress", () => {
  it("computes dates from the run and records progress up to module and course completion", async () => {
    const course = await publishedCourse()
    const run = await openRun(course)
    const learner = await m.profile({ name: "Ученик" })
    const uuid = randomUUID()
    await m.sql("INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status) VALUES ($1, $2, $3, $4, 'active')",
      uuid, run.uuid, course.uuid, learner.profileUuid)
    const dates = await m.runtime.runPromise(stepDates(uuid))
    expect(dates.get("s2")!.dueAt).toEqual(new Date(new Date(run.startsAt).getTime() + 7 * day))
    const record = (key: string, to: "in_progress" | "completed" | "failed") =>
      m.runtime.runPromise(Effect.flatMap(Effect.succeed(0), () => recordStepProgress(uuid, key, to)))
    expect((await record("s1", "in_progress")).status).toBe("in_progress")
    expect((await record("s1", "completed")).status).toBe("completed")
    // Completed never regresses.
    expect((await record("s1", "in_progress")).status).toBe("completed")
    await record("s2", "completed")
    await record("s3", "completed")
    const events = await m.sql<{ type: string; data: { nodeKey?: string } }>(
      "SELECT type, data FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY occurred_at, type", uuid)
    expect(events.map((e) => [e.type, e.data.nodeKey])).toEqual([
      ["learning.module.completed", "m1"],
      ["learning.module.completed", "m2"],
      ["learning.course.completed", undefined]
    ])
  })
})
