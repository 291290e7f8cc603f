import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ok, only, refused, step } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import type { Answer } from "../../operations/Operations.js"
import { stepDates } from "./Dates.js"
import { BirzhaApi } from "../../api/BirzhaApi.js"
import { catalogOf } from "../../kernel/Operation.js"
import { enrollmentRuleOf } from "./EnrollmentRule.js"
import { enrollmentTransitions, type TransitionName } from "./EnrollmentMachine.js"
import type { Enrollment } from "./EnrollmentModel.js"
import { enrollmentStatuses, type EnrollmentStatus } from "./EnrollmentRepository.js"
import { advanceEnrollments } from "./Enrollments.js"
import type { CourseAuthor, CourseNode, Run } from "../courses/Model.js"
import { advanceRuns } from "../courses/Runs.js"
import { assignStaff } from "../staff/Staff.js"
import { recordStepProgress } from "../steps/StepStates.js"

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learning_enrollments")
  owner = await m.profile({ name: "Автор" })
})
afterAll(async () => {
  await m?.close()
})


const day = 86_400_000
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

const statusOf = async (uuid: string) => only(await m.sql<{ status: EnrollmentStatus }>("SELECT status FROM learning_enrollments WHERE uuid = $1", uuid)).status
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

  it("allows exactly the table's from-states, lands in its to-state and emits its events; refuses the rest with 409 invalid_state naming the state and the states that allow it", async () => {
    const plain = await runningRun({ capacity: 1000 })
    const grace = await runningRun({ capacity: 1000, enrollmentPolicy: { withdrawGraceHours: 48 } })
    expect(grace.run.enrollmentPolicy).toEqual({ seatOfferHours: 48, withdrawGraceHours: 48, restoreDays: 30, reminderHours: [24], completeOnCriteria: false })
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
          expect((answer.body as { error: unknown }).error, label).toMatchObject({
            resource: "enrollment",
            uuid,
            state,
            allowed: transition.from.filter((from) => from !== "none")
          })
          expect(await statusOf(uuid), label).toBe(state)
          expect(await eventsOf(uuid), label).toEqual([])
        }
        checked.push(label)
        await retire(uuid)
      }
    }
    expect(checked.length).toBeGreaterThan(150)
  })

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
      // The rule each declaration carries (EnrollmentsApi.ts), read from the catalog as the registry does.
      const rule = enrollmentRuleOf(catalogOf(BirzhaApi).find((entry) => entry.id === id)!.annotations)!
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
  })
})

// ---- admission -----------------------------------------------------------------------------------------

const enrollIn = (actor: SessionActor, run: { uuid: string }, payload: Record<string, unknown> = {}) =>
  m.invoke("learning.enrollments.enroll", actor, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), ...payload } })

describe("admission: open, approval, invitation, capacity", () => {
  it("enrolls, applies, refuses by mode and window, and keeps one open enrollment per course", async () => {
    const { course, run } = await runningRun({ capacity: 1 })
    const [a, b, c] = [await m.profile(), await m.profile(), await m.profile()]
    const active = ok<Enrollment>(await enrollIn(a, run))
    expect([active.status, active.runUuid]).toEqual(["active", run.uuid])
    expect(refused(await enrollIn(a, run))).toEqual([409, "not_eligible"])
    // Full, no waitlist.
    expect(refused(await enrollIn(b, run))).toEqual([409, "capacity_full"])

    const approval = await openRun(course, { admission: "approval" })
    const request = ok<Enrollment>(await enrollIn(b, approval, { application: { answers: { why: "Хочу учиться" } } }))
    expect(request.status).toBe("requested")
    expect(refused(await enrollIn(b, approval, { application: { answers: { why: "x" }, extra: 1 } }))[0]).toBe(400)
    const decided = ok<Enrollment>(await command("learning.enrollments.decide", owner, request.uuid, { expectedRevision: request.revision, decision: "approve", reason: "Подходит" }))
    expect(decided.status).toBe("active")
    const application = ok<{ answers: Record<string, string>; decisions: Array<{ decision: string; byProfileUuid?: string }> }>(
      await m.invoke("learning.applications.get", b, { path: { enrollment: request.uuid } }))
    expect(application.answers).toEqual({ why: "Хочу учиться" })
    // The learner does not learn who decided; staff do.
    expect(application.decisions).toEqual([expect.objectContaining({ decision: "approve" })])
    expect(application.decisions[0]!.byProfileUuid).toBeUndefined()
    const staffView = ok<{ decisions: Array<{ byProfileUuid?: string }> }>(await m.invoke("learning.applications.get", owner, { path: { enrollment: request.uuid } }))
    expect(staffView.decisions[0]!.byProfileUuid).toBe(owner.profileUuid)

    const inviteOnly = await openRun(course, { admission: "invite" })
    expect(refused(await enrollIn(c, inviteOnly))).toEqual([409, "not_eligible"])
    const closed = await openRun(course, { enrollmentWindow: { closesAt: new Date(Date.now() - 1000).toISOString() } })
    expect(refused(await enrollIn(c, closed))).toEqual([409, "not_eligible"])
    const draft = ok<Run>(await m.invoke("learning.runs.create", owner, {
      path: { course: course.uuid },
      payload: { requestUuid: randomUUID(), versionNumber: 1, title: "Черновик", pacing: "cohort", startsAt: new Date().toISOString(), admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 } }
    }))
    expect(refused(await enrollIn(c, draft))).toEqual([404, "not_found"])

    const events = await eventsOf(request.uuid)
    expect(events.map((e) => `${e.type}:${e.data.status}`).sort()).toEqual(["learning.enrollment.activated:active", "learning.enrollment.requested:requested"])
  })

  it("invites 1 to 100 profiles per call, reserving seats; 101 is refused", async () => {
    const { run } = await runningRun({ capacity: 100, admission: "invite" })
    const profiles = await Promise.all(Array.from({ length: 101 }, () => m.profile()))
    const invite = (list: ReadonlyArray<SessionActor>) =>
      m.invoke("learning.enrollments.invite", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), profileUuids: list.map((p) => p.profileUuid), expiresInDays: 3 } })
    expect(refused(await invite(profiles))[0]).toBe(400)
    expect(refused(await invite([]))[0]).toBe(400)
    const invited = ok<{ enrollments: Array<Enrollment> }>(await invite(profiles.slice(0, 100)))
    expect(invited.enrollments.map((e) => e.status)).toEqual(Array(100).fill("invited"))
    // The invitation lapses after the requested 3 days.
    const lapses = Date.parse(String(invited.enrollments[0]!.offerExpiresAt)) - Date.now()
    expect(Math.abs(lapses - 3 * 86_400_000)).toBeLessThan(60_000)
    // Every seat is reserved by an invitation.
    expect(refused(await invite(profiles.slice(100))).join(" ")).toBe("409 capacity_full")
    const accepted = ok<Enrollment>(await command("learning.enrollments.accept_invitation", profiles[0]!, invited.enrollments[0]!.uuid, { expectedRevision: 1 }))
    expect(accepted.status).toBe("active")
    const roster = ok<{ items: Array<Enrollment> }>(await m.invoke("learning.enrollments.course_list", owner, {
      path: { course: run.courseUuid },
      urlParams: { runUuid: run.uuid, status: "active", limit: "100" }
    }))
    expect(roster.items.map((e) => [e.uuid, e.progress])).toEqual([[accepted.uuid, { completedSteps: 0, totalSteps: 3 }]])
    expect(refused(await m.invoke("learning.enrollments.course_list", profiles[0]!, { path: { course: run.courseUuid } }))).toEqual([404, "not_found"])
  })
})

describe("seats under concurrency", () => {
  it("50 learners enrolling at once into 10 seats: exactly 10 active, 40 waitlisted in arrival order; freed seats go to the next", async () => {
    const { run } = await runningRun({ capacity: 10, waitlist: true })
    const learners = await Promise.all(Array.from({ length: 50 }, (_, i) => m.profile({ name: `Ученик ${i}` })))
    const answers = await Promise.all(learners.map((learner) => enrollIn(learner, run)))
    const enrollments = answers.map((answer) => ok<Enrollment>(answer))
    expect(enrollments.filter((e) => e.status === "active")).toHaveLength(10)
    const waiting = enrollments.filter((e) => e.status === "waitlisted")
    expect(waiting).toHaveLength(40)
    expect(waiting.map((e) => e.waitlistPosition).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
    // Arrival order: every active enrollment arrived before every waitlisted one.
    const rows = await m.sql<{ uuid: string; status: string; queue: string }>(
      "SELECT uuid, status, queue_position::text AS queue FROM learning_enrollments WHERE run_uuid = $1 ORDER BY queue_position", run.uuid)
    expect(rows.map((r) => r.status)).toEqual([...Array(10).fill("active"), ...Array(40).fill("waitlisted")])
    const byPosition = new Map(waiting.map((e) => [e.waitlistPosition, e.uuid]))
    expect(rows.slice(10).map((r) => r.uuid)).toEqual(Array.from({ length: 40 }, (_, i) => byPosition.get(i + 1)))

    // A seat frees: the first waitlisted is offered it.
    const leaving = enrollments.find((e) => e.status === "active")!
    const leaver = learners[enrollments.indexOf(leaving)]!
    ok(await command("learning.enrollments.withdraw", leaver, leaving.uuid, { expectedRevision: leaving.revision }))
    const first = byPosition.get(1)!
    expect(await statusOf(first)).toBe("offered")
    expect((await eventsOf(first)).map((e) => `${e.type}:${e.data.status}`)).toContain("learning.enrollment.invited:offered")
    const second = ok<Enrollment>(await m.invoke("learning.enrollments.get", learners[enrollments.findIndex((e) => e.uuid === byPosition.get(2))]!, {
      path: { enrollment: byPosition.get(2)! }
    }))
    expect(second.waitlistPosition).toBe(1)
    // The offer lapses: expired, and the seat goes to the next.
    await m.sql("UPDATE learning_enrollments SET offer_expires_at = now() - interval '1 second' WHERE uuid = $1", first)
    await m.runtime.runPromise(advanceEnrollments(new Date()))
    expect(await statusOf(first)).toBe("expired")
    expect((await eventsOf(first)).map((e) => `${e.type}:${e.data.status}`)).toContain("learning.enrollment.withdrawn:expired")
    expect(await statusOf(byPosition.get(2)!)).toBe("offered")
    const offered = ok<Enrollment>(await m.invoke("learning.enrollments.get", learners[enrollments.findIndex((e) => e.uuid === byPosition.get(2))]!, {
      path: { enrollment: byPosition.get(2)! }
    }))
    const taken = ok<Enrollment>(await command("learning.seats.accept", learners[enrollments.findIndex((e) => e.uuid === byPosition.get(2))]!, offered.uuid, {
      expectedRevision: offered.revision
    }))
    expect(taken.status).toBe("active")
    const [{ n }] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_enrollments WHERE run_uuid = $1 AND status = 'active'", run.uuid) as [{ n: number }]
    expect(n).toBe(10)
  })
})

// ---- dates -------------------------------------------------------------------------------------------

type CalendarBody = {
  items: Array<{ nodeKey: string; status: string; dueAt?: string; unlockAt?: string; extraAttempts: number; provenance: Array<{ field: string; source: string; at?: string; detail?: string }> }>
  ics?: string
}
const calendar = async (actor: SessionActor, uuid: string, urlParams: Record<string, string> = {}) =>
  ok<CalendarBody>(await m.invoke("learning.calendar.get", actor, { path: { enrollment: uuid }, urlParams }))
const dueOf = (body: CalendarBody, key: string) => new Date(body.items.find((i) => i.nodeKey === key)!.dueAt!).getTime()

describe("computed dates: pauses, overrides, provenance", () => {
  it("a pause shifts due dates by the paused days; the preview shows it first; limits answer window_closed", async () => {
    const { run } = await runningRun({ pausePolicy: { maxDays: 10, maxCount: 1 } })
    const learner = await m.profile()
    const enrollment = ok<Enrollment>(await enrollIn(learner, run))
    const before = await calendar(learner, enrollment.uuid)
    expect(before.items.find((i) => i.nodeKey === "s2")!.provenance.filter((p) => p.field === "dueAt").map((p) => p.source)).toEqual(["offset"])
    const preview = ok<{ allowed: boolean; daysLeft: number; shifts: Array<{ nodeKey: string; due: string; dueAfter: string }> }>(
      await m.invoke("learning.enrollments.pause_preview", learner, { path: { enrollment: enrollment.uuid }, urlParams: { until: new Date(Date.now() + 3 * day).toISOString() } }))
    expect(preview.allowed).toBe(true)
    expect(preview.daysLeft).toBe(10)
    const s2 = preview.shifts.find((s) => s.nodeKey === "s2")!
    expect(new Date(s2.dueAfter).getTime() - new Date(s2.due).getTime()).toBe(3 * day)
    // The preview wrote nothing.
    expect((await eventsOf(enrollment.uuid)).map((e) => e.type)).toEqual(["learning.enrollment.activated"])
    expect(refused(await command("learning.enrollments.pause", learner, enrollment.uuid, { expectedRevision: enrollment.revision, until: new Date(Date.now() + 11 * day).toISOString() })))
      .toEqual([409, "window_closed"])
    const paused = ok<Enrollment>(await command("learning.enrollments.pause", learner, enrollment.uuid, { expectedRevision: enrollment.revision }))
    expect([paused.status, paused.pause.count]).toEqual(["paused", 1])
    // Three days pass.
    await m.sql("UPDATE learning_enrollments SET paused_at = paused_at - interval '3 days' + interval '1 minute' WHERE uuid = $1", enrollment.uuid)
    const resumed = ok<Enrollment>(await command("learning.enrollments.resume", learner, enrollment.uuid, { expectedRevision: paused.revision }))
    expect([resumed.status, resumed.pause.totalDays]).toEqual(["active", 3])
    const after = await calendar(learner, enrollment.uuid)
    expect(dueOf(after, "s2") - dueOf(before, "s2")).toBe(3 * day)
    expect(dueOf(after, "s3") - dueOf(before, "s3")).toBe(3 * day)
    expect(after.items.find((i) => i.nodeKey === "s2")!.provenance.filter((p) => p.field === "dueAt").map((p) => p.source)).toEqual(["offset", "pause"])
    const events = await eventsOf(enrollment.uuid)
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["learning.enrollment.pause", "learning.enrollment.resume", "learning.deadline.changed"]))
    // One pause allowed.
    expect(refused(await command("learning.enrollments.pause", learner, enrollment.uuid, { expectedRevision: resumed.revision }))).toEqual([409, "window_closed"])
  })

  it("an override changes the computed date of that learner only, explains it, and clears back", async () => {
    const { run } = await runningRun()
    const [a, b] = [await m.profile(), await m.profile()]
    const ea = ok<Enrollment>(await enrollIn(a, run))
    const eb = ok<Enrollment>(await enrollIn(b, run))
    const original = dueOf(await calendar(a, ea.uuid), "s2")
    const extended = new Date(original + 4 * day).toISOString()
    const set = ok<{ override: { uuid: string; nodeKey: string }; calendarDelta: Array<{ nodeKey: string; field: string; before?: string; after?: string }> }>(
      await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "s2", dueAt: extended, extraAttempts: 2, reason: "Больничный" }))
    expect(set.calendarDelta).toEqual([
      { nodeKey: "s2", field: "dueAt", before: new Date(original).toISOString(), after: extended },
      { nodeKey: "s2", field: "extraAttempts", before: 0, after: 2 }
    ])
    const changed = async (uuid: string) => (await eventsOf(uuid)).filter((e) => e.type === "learning.deadline.changed")
    expect((await changed(ea.uuid)).map((e) => [e.data.nodeKeys, e.context.audience])).toEqual([[["s2"], [a.profileUuid]]])
    expect(await changed(eb.uuid)).toEqual([])
    const cal = await calendar(a, ea.uuid)
    const s2 = cal.items.find((i) => i.nodeKey === "s2")!
    expect([s2.dueAt, s2.extraAttempts]).toEqual([extended, 2])
    expect(s2.provenance.filter((p) => p.field === "dueAt").map((p) => [p.source, p.detail])).toEqual([["offset", undefined], ["override", "Больничный"]])
    expect(dueOf(await calendar(b, eb.uuid), "s2")).toBe(original)
    // The same date again changes nothing computed: no event.
    ok(await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "s2", dueAt: extended, extraAttempts: 2, reason: "Повтор" }))
    expect(await changed(ea.uuid)).toHaveLength(1)
    // Bad input, nothing saved.
    expect(refused(await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "zz", dueAt: extended, reason: "x" }))[0]).toBe(400)
    expect(refused(await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "s2", reason: "x" }))[0]).toBe(400)
    expect(refused(await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "s2", clear: true, dueAt: extended, reason: "x" }))[0]).toBe(400)
    // Clearing restores the schedule's date and says so.
    const cleared = ok<{ override: { status: string }; calendarDelta: Array<{ field: string }> }>(
      await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "s2", clear: true, reason: "Выздоровел" }))
    expect(cleared.override.status).toBe("cleared")
    expect(cleared.calendarDelta.map((d) => d.field)).toEqual(["dueAt", "extraAttempts"])
    expect(dueOf(await calendar(a, ea.uuid), "s2")).toBe(original)
    expect(await changed(ea.uuid)).toHaveLength(2)
    expect(refused(await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "s2", clear: true, reason: "x" }))).toEqual([409, "invalid_state"])
    const audit = await m.sql<{ action: string }>("SELECT action FROM learning_audit_events WHERE enrollment_uuid = $1 ORDER BY created_at", ea.uuid)
    expect(audit.map((r) => r.action)).toEqual(["override.set", "override.set", "override.clear"])
  })

  it("serves the calendar as ICS, filters by from/to, and a learner never sees another's enrollment", async () => {
    const { run } = await runningRun()
    const [a, b] = [await m.profile(), await m.profile()]
    const ea = ok<Enrollment>(await enrollIn(a, run))
    ok<Enrollment>(await enrollIn(b, run))
    const ics = await calendar(a, ea.uuid, { format: "ics" })
    expect(ics.ics).toMatch(/^BEGIN:VCALENDAR\r\nVERSION:2\.0\r\n/)
    expect(ics.ics).toContain(`UID:${ea.uuid}-s2-dueAt@birzha`)
    expect(ics.ics).toContain("SUMMARY:Due: Шаг s2")
    expect(ics.ics!.split("\r\n").every((line) => Buffer.byteLength(line) <= 75)).toBe(true)
    const start = new Date(run.startsAt).getTime()
    const window = await calendar(a, ea.uuid, { from: new Date(start + 5 * day).toISOString(), to: new Date(start + 8 * day).toISOString() })
    expect(window.items.map((i) => i.nodeKey)).toEqual(["s2"])
    expect(refused(await m.invoke("learning.calendar.get", a, { path: { enrollment: ea.uuid }, urlParams: { format: "pdf" } }))[0]).toBe(400)
    for (const id of ["learning.enrollments.get", "learning.calendar.get", "learning.completion.get", "learning.applications.get", "learning.media.get", "learning.enrollments.pause_preview"]) {
      expect(refused(await m.invoke(id, b, { path: { enrollment: ea.uuid } })), id).toEqual([404, "not_found"])
    }
    const listed = ok<{ items: Array<Enrollment> }>(await m.invoke("learning.enrollments.list", b, {}))
    expect(listed.items.map((e) => e.profileUuid)).toEqual([b.profileUuid])
  })
})

// ---- the clock -------------------------------------------------------------------------------------------

describe("the enrollment clock", () => {
  it("unlocks steps, reminds before due dates once, ends pauses and withdrawal graces", async () => {
    // Started 6.5 days ago: s1 open, s3 unlocks at day 3 (open), s2 due at day 7 — within the 24 h reminder.
    const { run } = await runningRun({ startsAt: new Date(Date.now() - 6.5 * day).toISOString() })
    const learner = await m.profile()
    const enrollment = ok<Enrollment>(await enrollIn(learner, run))
    await m.runtime.runPromise(advanceEnrollments(new Date()))
    await m.runtime.runPromise(advanceEnrollments(new Date()))
    const events = await eventsOf(enrollment.uuid)
    expect(events.filter((e) => e.type === "learning.step.available").map((e) => e.data.nodeKey).sort()).toEqual(["s1", "s2", "s3"])
    expect(events.filter((e) => e.type === "learning.deadline.approaching").map((e) => e.data.nodeKey)).toEqual(["s2"])
    const cal = await calendar(learner, enrollment.uuid)
    expect(cal.items.map((i) => i.status)).toEqual(["available", "available", "available"])

    const paused = ok<Enrollment>(await command("learning.enrollments.pause", learner, enrollment.uuid, { expectedRevision: (await statusRevision(enrollment.uuid)) }))
    await m.sql("UPDATE learning_enrollments SET pause_until = now() - interval '1 second' WHERE uuid = $1", paused.uuid)
    await m.runtime.runPromise(advanceEnrollments(new Date()))
    expect(await statusOf(paused.uuid)).toBe("active")
    expect((await eventsOf(paused.uuid)).map((e) => e.type)).toContain("learning.enrollment.resume")

    const current = only(await m.sql<{ revision: number }>("SELECT revision FROM learning_runs WHERE uuid = $1", run.uuid))
    // The policy's bounds: 1 to 5 reminders, each 1 to 720 hours; grace 0 to 720 hours.
    const policy = (enrollmentPolicy: Record<string, unknown>) =>
      m.invoke("learning.runs.update", owner, { path: { run: run.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: current.revision, enrollmentPolicy } })
    expect(refused(await policy({ reminderHours: [1, 2, 3, 4, 5, 6] }))[0]).toBe(400)
    expect(refused(await policy({ withdrawGraceHours: 721 }))[0]).toBe(400)
    expect(refused(await policy({ graceHours: 1 }))[0]).toBe(400)
    const updated = ok<Run>(await policy({ withdrawGraceHours: 24, reminderHours: [1, 2, 3, 4, 720] }))
    expect(updated.enrollmentPolicy).toMatchObject({ withdrawGraceHours: 24, reminderHours: [1, 2, 3, 4, 720] })
    const leaving = ok<Enrollment>(await command("learning.enrollments.withdraw", learner, enrollment.uuid, { expectedRevision: await statusRevision(enrollment.uuid) }))
    expect(leaving.status).toBe("withdrawal_requested")
    await m.runtime.runPromise(advanceEnrollments(new Date()))
    expect(await statusOf(leaving.uuid)).toBe("withdrawal_requested")
    await m.sql("UPDATE learning_enrollments SET withdraw_effective_at = now() - interval '1 second' WHERE uuid = $1", leaving.uuid)
    await m.runtime.runPromise(advanceEnrollments(new Date()))
    expect(await statusOf(leaving.uuid)).toBe("withdrawn")
    expect((await eventsOf(leaving.uuid)).filter((e) => e.type === "learning.enrollment.withdrawn").map((e) => e.data.status)).toEqual(["withdrawn"])
    // Within restoreDays the learner undoes it.
    const restored = ok<Enrollment>(await command("learning.enrollments.restore", learner, leaving.uuid, { expectedRevision: await statusRevision(leaving.uuid) }))
    expect(restored.status).toBe("active")
    await m.sql("UPDATE learning_enrollments SET status = 'withdrawn', previous_status = 'active', withdrawn_at = now() - interval '31 days' WHERE uuid = $1", leaving.uuid)
    expect(refused(await command("learning.enrollments.restore", learner, leaving.uuid, { expectedRevision: await statusRevision(leaving.uuid) }))).toEqual([409, "window_closed"])
  })
})

const statusRevision = async (uuid: string) => only(await m.sql<{ revision: number }>("SELECT revision FROM learning_enrollments WHERE uuid = $1", uuid)).revision

// ---- transfers, media, self-paced start, completion ----------------------------------------------------

describe("transfers between runs", () => {
  it("previews, then moves exactly the planned enrollments keeping progress by nodeKey; stale plans are refused", async () => {
    const { course, run: from } = await runningRun()
    const to = await openRun(course, { capacity: 5 })
    const [a, b] = [await m.profile(), await m.profile()]
    const ea = ok<Enrollment>(await enrollIn(a, from))
    const eb = ok<Enrollment>(await enrollIn(b, from))
    await m.runtime.runPromise(recordStepProgress(ea.uuid, "s1", "completed"))
    const preview = (enrollmentUuids?: Array<string>) =>
      m.invoke("learning.transfers.preview", owner, {
        path: { course: course.uuid },
        payload: { requestUuid: randomUUID(), fromRunUuid: from.uuid, toRunUuid: to.uuid, ...(enrollmentUuids ? { enrollmentUuids } : {}) }
      })
    type PlanBody = { uuid: string; items: Array<{ enrollmentUuid: string; mappedSteps: Array<string> }>; skipped: Array<{ enrollmentUuid: string; reason: string }>; blocking: Array<unknown> }
    const plan = ok<PlanBody>(await preview([ea.uuid, randomUUID()]))
    expect(plan.items).toEqual([expect.objectContaining({ enrollmentUuid: ea.uuid, mappedSteps: ["s1"] })])
    expect(plan.skipped.map((s) => s.reason)).toEqual(["not_in_run"])
    // The preview changed nothing.
    expect((await eventsOf(ea.uuid)).map((e) => e.type)).not.toContain("learning.enrollment.transferred")
    const apply = (uuid: string, actor = owner) =>
      m.invoke("learning.transfers.apply", actor, { path: { course: course.uuid, transfer: uuid }, payload: { requestUuid: randomUUID() } })
    expect(refused(await apply(plan.uuid, a))).toEqual([403, "forbidden"])
    const applied = ok<{ transferred: number }>(await apply(plan.uuid))
    expect(applied.transferred).toBe(1)
    const moved = ok<Enrollment>(await m.invoke("learning.enrollments.get", a, { path: { enrollment: ea.uuid } }))
    expect([moved.runUuid, moved.transferredFromRunUuid, moved.status, moved.progress]).toEqual([to.uuid, from.uuid, "active", { completedSteps: 1, totalSteps: 3 }])
    expect((await eventsOf(ea.uuid)).filter((e) => e.type === "learning.enrollment.transferred").map((e) => e.data.status)).toEqual(["active"])
    expect(refused(await apply(plan.uuid))).toEqual([409, "invalid_state"])
    // A plan whose enrollment changed since is stale.
    const second = ok<PlanBody>(await preview())
    expect(second.items.map((i) => i.enrollmentUuid)).toEqual([eb.uuid])
    ok(await command("learning.enrollments.pause", b, eb.uuid, { expectedRevision: eb.revision }))
    expect(refused(await apply(second.uuid))).toEqual([409, "plan_stale"])
    const third = ok<PlanBody>(await preview())
    await m.sql("UPDATE learning_plans SET expires_at = now() - interval '1 second' WHERE uuid = $1", third.uuid)
    expect(refused(await apply(third.uuid))).toEqual([410, "plan_expired"])
  })
})

const mediaTree: ReadonlyArray<CourseNode> = [
  { nodeKey: "m1", kind: "module", title: "Видео" },
  step("v1", "m1", { stepType: "video", body: "https://example.com/v1" }),
  step("t1", "m1")
]

describe("media progress and completion", () => {
  it("merges watched ranges; 90 % completes the step, then module and course complete once", async () => {
    const { run } = await runningRun({}, mediaTree)
    const learner = await m.profile()
    const enrollment = ok<Enrollment>(await enrollIn(learner, run))
    const save = (payload: Record<string, unknown>, node = "v1", actor = learner) =>
      m.invoke("learning.media.save", actor, { path: { enrollment: enrollment.uuid, node }, payload })
    const half = ok<{ watchedPct: number; status: string; revision: number }>(await save({ positionSec: 50, ranges: [[0, 50]], durationSec: 100 }))
    expect([half.watchedPct, half.status]).toEqual([50, "in_progress"])
    expect(refused(await save({ positionSec: 60, ranges: [[50, 60]], expectedRevision: half.revision + 5 }))).toEqual([409, "revision_conflict"])
    expect(refused(await save({ positionSec: 1, ranges: [] }, "t1"))).toEqual([409, "invalid_state"])
    expect(refused(await save({ positionSec: 1, ranges: [], extra: true }))[0]).toBe(400)
    const other = await m.profile()
    expect(refused(await save({ positionSec: 1, ranges: [] }, "v1", other))).toEqual([404, "not_found"])
    const done = ok<{ watchedPct: number; status: string; ranges: Array<[number, number]> }>(await save({ positionSec: 95, ranges: [[40, 92]] }))
    expect([done.watchedPct, done.status, done.ranges]).toEqual([92, "completed", [[0, 92]]])
    const media = ok<{ items: Array<{ nodeKey: string; watchedPct: number; completedAt?: string }> }>(
      await m.invoke("learning.media.get", learner, { path: { enrollment: enrollment.uuid } }))
    expect(media.items.map((i) => [i.nodeKey, i.watchedPct, i.completedAt !== undefined])).toEqual([["v1", 92, true]])
    let completion = ok<{ percent: number; criteriaMet: boolean }>(await m.invoke("learning.completion.get", learner, { path: { enrollment: enrollment.uuid } }))
    expect([completion.percent, completion.criteriaMet]).toEqual([50, false])
    await m.runtime.runPromise(recordStepProgress(enrollment.uuid, "t1", "completed"))
    completion = ok<{ percent: number; criteriaMet: boolean }>(await m.invoke("learning.completion.get", learner, { path: { enrollment: enrollment.uuid } }))
    expect([completion.percent, completion.criteriaMet]).toEqual([100, true])
    const types = (await eventsOf(enrollment.uuid)).map((e) => e.type)
    expect(types.filter((t) => t === "learning.module.completed" || t === "learning.course.completed").sort()).toEqual(["learning.course.completed", "learning.module.completed"])
  })

  it("self-paced: dates anchor at the learner's start; start needs a started run and happens once", async () => {
    const course = await publishedCourse()
    const scheduled = await openRun(course, { pacing: "self", startsAt: new Date(Date.now() + day).toISOString() })
    const learner = await m.profile()
    const early = ok<Enrollment>(await enrollIn(learner, scheduled))
    expect(refused(await command("learning.enrollments.start", learner, early.uuid, { expectedRevision: early.revision }))).toEqual([409, "not_eligible"])
    ok(await command("learning.enrollments.withdraw", learner, early.uuid, { expectedRevision: early.revision }))
    const { run } = await runningRun({ pacing: "self" })
    const enrollment = ok<Enrollment>(await enrollIn(learner, run))
    const before = await calendar(learner, enrollment.uuid)
    expect(before.items.map((i) => i.status)).toEqual(["locked", "locked", "locked"])
    const started = ok<Enrollment>(await command("learning.enrollments.start", learner, enrollment.uuid, { expectedRevision: enrollment.revision }))
    const after = await calendar(learner, enrollment.uuid)
    expect(dueOf(after, "s2")).toBe(new Date(started.startedAt!).getTime() + 7 * day)
    expect(after.items.map((i) => i.status)).toEqual(["available", "available", "locked"])
    expect((await eventsOf(enrollment.uuid)).filter((e) => e.type === "learning.step.available").map((e) => e.data.nodeKey).sort()).toEqual(["s1", "s2"])
    expect(refused(await command("learning.enrollments.start", learner, enrollment.uuid, { expectedRevision: started.revision }))).toEqual([409, "invalid_state"])
  })
})

describe("schedule changes and computed dates", () => {
  it("schedule.apply tells only the learners whose effective date changed (an override shields its learner)", async () => {
    const { run } = await runningRun()
    const [a, b] = [await m.profile(), await m.profile()]
    const ea = ok<Enrollment>(await enrollIn(a, run))
    const eb = ok<Enrollment>(await enrollIn(b, run))
    const pinned = new Date(Date.now() + 20 * day).toISOString()
    ok(await command("learning.enrollments.override", owner, ea.uuid, { nodeKey: "s2", dueAt: pinned, reason: "Индивидуальный срок" }))
    const due = new Date(Date.now() + 12 * day).toISOString()
    const plan = ok<{ uuid: string }>(await m.invoke("learning.schedule.preview", owner, {
      path: { run: run.uuid },
      payload: { requestUuid: randomUUID(), changes: [{ nodeKey: "s2", dueAt: due }] }
    }))
    const applied = ok<{ changedEnrollments: number }>(await m.invoke("learning.schedule.apply", owner, { path: { preview: plan.uuid }, payload: { requestUuid: randomUUID() } }))
    expect(applied.changedEnrollments).toBe(1)
    const changed = async (uuid: string) => (await eventsOf(uuid)).filter((e) => e.type === "learning.deadline.changed").map((e) => e.data.nodeKeys)
    expect(await changed(eb.uuid)).toEqual([["s2"]])
    // a: only the override's own event; the schedule change did not reach a's computed date.
    expect(await changed(ea.uuid)).toEqual([["s2"]])
    expect(dueOf(await calendar(a, ea.uuid), "s2")).toBe(new Date(pinned).getTime())
    const bs2 = (await calendar(b, eb.uuid)).items.find((i) => i.nodeKey === "s2")!
    expect([bs2.dueAt, bs2.provenance.filter((p) => p.field === "dueAt").map((p) => p.source)]).toEqual([due, ["schedule"]])
  })
})

describe("commands are idempotent and refuse self-decisions", () => {
  it("replays a requestUuid, refuses it for another body, and answers conflict_of_interest to staff deciding on themselves", async () => {
    const { course } = await runningRun()
    const approval = await openRun(course, { admission: "approval" })
    const learner = await m.profile()
    const requestUuid = randomUUID()
    const first = ok<Enrollment>(await m.invoke("learning.enrollments.enroll", learner, { path: { run: approval.uuid }, payload: { requestUuid } }))
    const again = ok<Enrollment>(await m.invoke("learning.enrollments.enroll", learner, { path: { run: approval.uuid }, payload: { requestUuid } }))
    expect(again.uuid).toBe(first.uuid)
    expect(refused(await m.invoke("learning.enrollments.enroll", learner, {
      path: { run: approval.uuid },
      payload: { requestUuid, application: { answers: { a: "b" } } }
    }))).toEqual([409, "request_conflict"])
    expect(await m.sql("SELECT 1 FROM learning_enrollments WHERE profile_uuid = $1", learner.profileUuid)).toHaveLength(1)
    // A stale revision changes nothing.
    expect(refused(await command("learning.enrollments.decide", owner, first.uuid, { expectedRevision: first.revision + 1, decision: "approve" })))
      .toEqual([409, "revision_conflict"])
    await m.runtime.runPromise(assignStaff({ courseUuid: course.uuid, profileUuid: learner.profileUuid, role: "assistant", byProfileUuid: owner.profileUuid }))
    expect(refused(await command("learning.enrollments.decide", learner, first.uuid, { expectedRevision: first.revision, decision: "approve" })))
      .toEqual([403, "conflict_of_interest"])
    expect(await statusOf(first.uuid)).toBe("requested")
  })
})

describe("one open enrollment per course under concurrency", () => {
  it("the same learner enrolling into eight runs of a course at once gets one enrollment and seven not_eligible", async () => {
    const { course, run } = await runningRun()
    const runs = [run, ...await Promise.all(Array.from({ length: 7 }, () => openRun(course)))]
    for (let round = 0; round < 3; round++) {
      const learner = await m.profile()
      const answers = await Promise.all(runs.map((r) => enrollIn(learner, r)))
      expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(runs.length - 1).fill(409)])
      expect(answers.filter((a) => a.status === 409).map(refused)).toEqual(Array(runs.length - 1).fill([409, "not_eligible"]))
    }
  })
})
