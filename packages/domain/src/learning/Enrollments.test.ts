import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, codeOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import type { SessionActor } from "../api/Authentication.js"
import type { Answer } from "../operations/Operations.js"
import { stepDates } from "./Dates.js"
import { enrollmentRules } from "./EnrollmentAccess.js"
import { enrollmentTransitions, type TransitionName } from "./EnrollmentMachine.js"
import type { Enrollment } from "./EnrollmentModel.js"
import { enrollmentStatuses, type EnrollmentStatus } from "./EnrollmentRepository.js"
import { advanceEnrollments } from "./Enrollments.js"
import type { CourseAuthor, CourseNode, Run } from "./Model.js"
import { advanceRuns } from "./Runs.js"
import { assignStaff } from "./Staff.js"
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
const refused = (answer: Answer) => [answer.status, codeOf(answer)]

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

// ---- helpers for the enrollment side ---------------------------------------------------------------

/** A running run (started yesterday) of a fresh published course. */
const runningRun = async (over: Record<string, unknown> = {}, nodes: ReadonlyArray<CourseNode> = tree) => {
  const course = await publishedCourse(nodes)
  const run = await openRun(course, over)
  await m.runtime.runPromise(advanceRuns(new Date()))
  return { course, run: { ...run, status: "running" } }
}

const statusOf = async (uuid: string) => (await m.sql<{ status: EnrollmentStatus }>("SELECT status FROM learning_enrollments WHERE uuid = $1", uuid))[0]!.status
const eventsOf = async (uuid: string) =>
  m.sql<{ type: string; data: { status: string; nodeKey?: string; nodeKeys?: Array<string> }; context: { audience?: Array<string> } }>(
    "SELECT type, data, context FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY occurred_at, type", uuid)

/** Puts an enrollment straight into a status, with the columns that status implies. */
const seed = async (run: { uuid: string; courseUuid: string }, profileUuid: string, status: EnrollmentStatus) => {
  const uuid = randomUUID()
  const now = Date.now()
  await m.sql(
    `INSERT INTO learning_enrollments (uuid, run_uuid, course_uuid, profile_uuid, status, offer_expires_at, paused_at, pause_until, pause_count,
       previous_status, withdraw_requested_at, withdraw_effective_at, withdrawn_at, activated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    uuid, run.uuid, run.courseUuid, profileUuid, status,
    status === "invited" || status === "offered" ? new Date(now + day) : null,
    status === "paused" ? new Date(now - 2 * day) : null,
    status === "paused" ? new Date(now + 5 * day) : null,
    status === "paused" ? 1 : 0,
    status === "withdrawn" || status === "withdrawal_requested" ? "active" : null,
    status === "withdrawn" || status === "withdrawal_requested" ? new Date(now - 60_000) : null,
    status === "withdrawal_requested" ? new Date(now + 3_600_000) : status === "withdrawn" ? new Date(now - 60_000) : null,
    status === "withdrawn" ? new Date(now - 60_000) : null,
    status === "active" || status === "paused" ? new Date(now - day) : null
  )
  return uuid
}
/** Frees the (course, profile) uniqueness after a case. */
const retire = (uuid: string) => m.sql("UPDATE learning_enrollments SET status = 'cancelled' WHERE uuid = $1", uuid)

const command = (id: string, actor: SessionActor, enrollment: string, payload: Record<string, unknown> = {}) =>
  m.invoke(id, actor, { path: { enrollment }, payload: { requestUuid: randomUUID(), ...payload } })

// ---- the state machine, generated from its table ------------------------------------------------------

describe("the enrollment state machine (every transition of the table and every refused one)", () => {
  const dueLater = new Date(Date.now() + 30 * day).toISOString()
  /** Each operation-triggered transition from an existing enrollment: who runs it and with what. */
  const cases: ReadonlyArray<{ name: TransitionName; id: string; by: "learner" | "staff"; payload: Record<string, unknown>; grace?: boolean }> = [
    { name: "approve", id: "learning.enrollments.decide", by: "staff", payload: { expectedRevision: 1, decision: "approve" } },
    { name: "approve_offer", id: "learning.enrollments.decide", by: "staff", payload: { expectedRevision: 1, decision: "approve", requireSeatConfirmation: true } },
    { name: "reject", id: "learning.enrollments.decide", by: "staff", payload: { expectedRevision: 1, decision: "reject", reason: "Нет мест по профилю" } },
    { name: "waitlist", id: "learning.enrollments.decide", by: "staff", payload: { expectedRevision: 1, decision: "waitlist" } },
    { name: "accept_invitation", id: "learning.enrollments.accept_invitation", by: "learner", payload: { expectedRevision: 1 } },
    { name: "accept_seat", id: "learning.seats.accept", by: "learner", payload: { expectedRevision: 1 } },
    { name: "decline", id: "learning.seats.decline", by: "learner", payload: { expectedRevision: 1 } },
    { name: "start", id: "learning.enrollments.start", by: "learner", payload: { expectedRevision: 1 } },
    { name: "pause", id: "learning.enrollments.pause", by: "learner", payload: { expectedRevision: 1 } },
    { name: "resume", id: "learning.enrollments.resume", by: "learner", payload: { expectedRevision: 1 } },
    { name: "withdraw_now", id: "learning.enrollments.withdraw", by: "learner", payload: { expectedRevision: 1, immediate: true } },
    { name: "withdraw_grace", id: "learning.enrollments.withdraw", by: "learner", payload: { expectedRevision: 1 }, grace: true },
    { name: "restore", id: "learning.enrollments.restore", by: "learner", payload: { expectedRevision: 1 } },
    { name: "override", id: "learning.enrollments.override", by: "staff", payload: { nodeKey: "s2", dueAt: dueLater, reason: "Болел" } }
  ]

  it("covers every transition the operations trigger", () => {
    const byOperation = Object.entries(enrollmentTransitions)
      .filter(([, t]) => !t.trigger.startsWith("worker.") && !(t.from as ReadonlyArray<string>).includes("none") && t.trigger !== "learning.runs.finish" &&
        t.trigger !== "learning.transfers.apply")
      .map(([name]) => name)
    expect(cases.map((c) => c.name).sort()).toEqual(byOperation.sort())
  })

  it("allows exactly the table's from-states, lands in its to-state and emits its events; refuses the rest with 409 invalid_state", async () => {
    const plain = await runningRun({ capacity: 1000 })
    const grace = await runningRun({ capacity: 1000 })
    await m.sql("UPDATE learning_runs SET withdraw_grace_hours = 48 WHERE uuid = $1", grace.run.uuid)
    const learner = await m.profile({ name: "Ученица" })
    const checked: Array<string> = []
    for (const c of cases) {
      const transition = enrollmentTransitions[c.name]
      const { run } = c.grace === true ? grace : plain
      for (const state of enrollmentStatuses) {
        const allowed = (transition.from as ReadonlyArray<string>).includes(state)
        // A grace run's withdraw from other states is the immediate transition (its own case).
        if (c.grace === true && !allowed) continue
        const uuid = await seed(run, learner.profileUuid, state)
        const answer = await command(c.id, c.by === "learner" ? learner : owner, uuid, c.payload)
        const label = `${c.name} from ${state}`
        if (allowed) {
          expect(answer.status, `${label}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(200)
          const to = transition.to === "same" ? state : transition.to === "previous" ? "active" : transition.to
          expect(await statusOf(uuid), label).toBe(to)
          // Starting also announces the steps open now (learning.step.available, tested below).
          const events = (await eventsOf(uuid)).filter((e) => e.type !== "learning.step.available")
          expect(events.map((e) => `${e.type}:${e.data.status}`).sort(), label)
            .toEqual(transition.events.map((e) => `${e.type}:${("status" in e ? e.status : undefined) ?? to}`).sort())
          expect(events.every((e) => e.context.audience?.includes(learner.profileUuid)), label).toBe(true)
        } else {
          expect(refused(answer), label).toEqual([409, "invalid_state"])
          expect(await statusOf(uuid), label).toBe(state)
          expect(await eventsOf(uuid), label).toEqual([])
        }
        checked.push(label)
        await retire(uuid)
      }
    }
    expect(checked.length).toBeGreaterThan(150)
  }, 120_000)

  it("answers by role from the rule table: strangers 404, the learner or staff without the right 403", async () => {
    const { course, run } = await runningRun({ capacity: 1000 })
    const learner = await m.profile({ name: "Ученик" })
    const other = await m.profile({ name: "Другой ученик" })
    const assistant = await m.profile({ name: "Ассистент" })
    const analyst = await m.profile({ name: "Аналитик" })
    const elsewhere = await m.profile({ name: "Ассистент другого потока" })
    const assign = (profile: SessionActor, role: "assistant" | "analyst", runUuid?: string) =>
      m.runtime.runPromise(assignStaff({ courseUuid: course.uuid, profileUuid: profile.profileUuid, role, byProfileUuid: owner.profileUuid, ...(runUuid ? { runUuid } : {}) }))
    await assign(assistant, "assistant")
    await assign(analyst, "analyst")
    const otherRun = await openRun(course)
    await assign(elsewhere, "assistant", otherRun.uuid)
    await seed(run, other.profileUuid, "active")
    const reads: Record<string, (uuid: string, actor: SessionActor) => Promise<Answer>> = {
      "learning.enrollments.get": (uuid, actor) => m.invoke("learning.enrollments.get", actor, { path: { enrollment: uuid } }),
      "learning.enrollments.pause_preview": (uuid, actor) => m.invoke("learning.enrollments.pause_preview", actor, { path: { enrollment: uuid } }),
      "learning.applications.get": (uuid, actor) => m.invoke("learning.applications.get", actor, { path: { enrollment: uuid } }),
      "learning.calendar.get": (uuid, actor) => m.invoke("learning.calendar.get", actor, { path: { enrollment: uuid } }),
      "learning.completion.get": (uuid, actor) => m.invoke("learning.completion.get", actor, { path: { enrollment: uuid } }),
      "learning.media.get": (uuid, actor) => m.invoke("learning.media.get", actor, { path: { enrollment: uuid } })
    }
    const commands: Record<string, Record<string, unknown>> = {
      "learning.enrollments.accept_invitation": { expectedRevision: 1 },
      "learning.enrollments.decide": { expectedRevision: 1, decision: "waitlist" },
      "learning.enrollments.override": { nodeKey: "s2", extraAttempts: 1, reason: "r" },
      "learning.enrollments.pause": { expectedRevision: 1 },
      "learning.enrollments.restore": { expectedRevision: 1 },
      "learning.enrollments.resume": { expectedRevision: 1 },
      "learning.enrollments.start": { expectedRevision: 1 },
      "learning.enrollments.withdraw": { expectedRevision: 1 },
      "learning.seats.accept": { expectedRevision: 1 },
      "learning.seats.decline": { expectedRevision: 1 }
    }
    const callers = { learner, other, assistant, analyst, elsewhere, owner }
    const mine = [...Object.keys(reads), ...Object.keys(commands)]
    for (const id of mine) {
      const rule = enrollmentRules[id as keyof typeof enrollmentRules] as { learner: boolean; staff?: { kind: string; atom?: string } }
      for (const [who, actor] of Object.entries(callers)) {
        const uuid = await seed(run, learner.profileUuid, "active")
        const answer = id in reads ? await reads[id]!(uuid, actor) : await command(id, actor, uuid, commands[id])
        const staffRight = rule.staff !== undefined && (
          who === "owner" ||
          (who === "assistant" && (rule.staff.kind === "staff" || ["roster_manage", "dates_grant"].includes(rule.staff.atom!))) ||
          (who === "analyst" && rule.staff.kind === "staff")
        )
        const expected = who === "other" ? [404, "not_found"]
          : who === "learner" ? (rule.learner ? "allowed" : [403, "forbidden"])
          : staffRight ? "allowed" : [403, "forbidden"]
        const label = `${id} by ${who}`
        if (expected === "allowed") expect([403, 404], `${label}: ${JSON.stringify(answer.body).slice(0, 200)}`).not.toContain(answer.status)
        else expect(refused(answer), label).toEqual(expected)
        await retire(uuid)
      }
    }
  }, 120_000)
})
