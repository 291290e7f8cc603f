import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acceptedStaff, enrollDirectly, ok, only, refused, step as textStep } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import { appealTransitions } from "./Appeals.js"
import type { AppealT, ExtensionRequestT, IncidentT, RegradePlanT } from "./CorrectionsModel.js"
import { extensionTransitions } from "./Extensions.js"
import type { CourseAuthor, CourseNode, Run } from "../courses/Model.js"
import { advanceRegradePlans } from "./RegradePlans.js"
import { advanceRuns } from "../courses/Runs.js"
import type { Submission } from "../steps/StepModel.js"

/**
 * Learning L3 corrections through `Operations.invoke` on real Postgres: extensions (auto-approval,
 * decisions, lateness, provenance, events only on a computed change), incidents (affected
 * learners, compensation preview → apply, stale and expired plans), appeals (open → resolved →
 * escalated → closed with the layers and points at each step), regrade plans (stale, exact
 * items, frozen items, a 10k-item commit in chunks resuming without applying an item twice), and
 * the appeal and extension transition tables × roles.
 */

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learning_corrections")
  owner = await m.profile({ name: "Автор" })
})
afterAll(async () => {
  await m?.close()
})

const day = 86_400_000
const graded = { maxPoints: 10, passThreshold: 10, attempts: 3, check: { kind: "exact", answers: ["42"] } }
const tree: ReadonlyArray<CourseNode> = [
  { nodeKey: "m1", kind: "module", title: "Модуль" },
  textStep("quiz", "m1", { stepType: "quiz", grading: graded, dueOffsetDays: 0 } as Partial<CourseNode>),
  textStep("quiz2", "m1", { stepType: "quiz", grading: graded, dueOffsetDays: 3 } as Partial<CourseNode>),
  textStep("quiz3", "m1", { stepType: "quiz", grading: graded, dueOffsetDays: 5 } as Partial<CourseNode>)
].map((node) => JSON.parse(JSON.stringify(node)))

type Role = "owner" | "instructor" | "reviewer" | "assistant" | "analyst"
interface Course {
  readonly courseUuid: string
  readonly runUuid: string
  readonly staff: Record<Role, SessionActor>
}

const newRun = async (courseUuid: string) => {
  const run = ok<Run>(await m.invoke("learning.runs.create", owner, {
    path: { course: courseUuid },
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
  return run.uuid
}

/** A published course with a running cohort run that started yesterday, and one staff member per role. */
const setup = async (): Promise<Course> => {
  const draft = ok<CourseAuthor>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Курс", kind: "single" } }))
  const edited = ok<CourseAuthor>(await m.invoke("learning.courses.update", owner, {
    path: { course: draft.uuid },
    payload: { requestUuid: randomUUID(), expectedRevision: draft.revision, nodes: tree }
  }))
  ok(await m.invoke("learning.courses.publish", owner, { path: { course: draft.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: edited.revision, changelog: "" } }))
  const runUuid = await newRun(draft.uuid)
  const staff = { owner } as Record<Role, SessionActor>
  for (const role of ["instructor", "reviewer", "assistant", "analyst"] as const) {
    staff[role] = await m.profile({ name: role })
    await m.sql("INSERT INTO learning_staff (uuid, course_uuid, profile_uuid, role, status) VALUES ($1, $2, $3, $4, 'active')",
      randomUUID(), draft.uuid, staff[role].profileUuid, role)
  }
  return { courseUuid: draft.uuid, runUuid, staff }
}

const learnerIn = async (runUuid: string, profile?: SessionActor) => {
  const learner = profile ?? await m.profile({ name: "Ученик" })
  const enrollment = ok<{ uuid: string; revision: number }>(
    await m.invoke("learning.enrollments.enroll", learner, { path: { run: runUuid }, payload: { requestUuid: randomUUID() } })
  )
  ok(await m.invoke("learning.enrollments.start", learner, { path: { enrollment: enrollment.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: enrollment.revision } }))
  return { learner, enrollment: enrollment.uuid }
}

const submit = async (learner: SessionActor, enrollment: string, node: string, reply: unknown) =>
  ok<Submission>(await m.invoke("learning.submissions.create", learner, { path: { enrollment, node }, payload: { requestUuid: randomUUID(), reply } }))
const getSubmission = async (actor: SessionActor, uuid: string) => ok<Submission>(await m.invoke("learning.submissions.get", actor, { path: { submission: uuid } }))
const events = (aggregate: string, type: string) =>
  m.sql<{ data: { nodeKeys?: Array<string>; status: string } }>("SELECT data FROM outbox_events WHERE aggregate_uuid = $1 AND type = $2 ORDER BY occurred_at", aggregate, type)
interface CalendarBody { items: Array<{ nodeKey: string; dueAt?: string; extraAttempts: number; provenance: Array<{ field: string; source: string }> }> }
const calendar = async (actor: SessionActor, enrollment: string) => ok<CalendarBody>(await m.invoke("learning.calendar.get", actor, { path: { enrollment } }))
const requestExtension = (learner: SessionActor, enrollment: string, payload: Record<string, unknown>) =>
  m.invoke("learning.extensions.create", learner, { path: { enrollment }, payload: { requestUuid: randomUUID(), reason: "Болел", ...payload } })

describe("extensions", () => {
  it("auto-approves within the policy: the late submission is no longer late, the calendar shows the extension, the learner hears of it", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const late = await submit(learner, enrollment, "quiz", "41")
    expect(late.late).toBe(true)
    const extension = ok<ExtensionRequestT>(await requestExtension(learner, enrollment, { nodeKey: "quiz", days: 2 }))
    expect([extension.status, extension.autoApproved, extension.basis]).toEqual(["approved", true, "original_due"])
    expect(new Date(extension.grantedDueAt!).getTime()).toBe(new Date(extension.originalDueAt).getTime() + 2 * day)
    expect((await getSubmission(learner, late.uuid)).late).toBe(false)
    const item = (await calendar(learner, enrollment)).items.find((i) => i.nodeKey === "quiz")!
    expect(new Date(item.dueAt!).getTime()).toBe(new Date(extension.grantedDueAt!).getTime())
    expect(item.provenance.filter((p) => p.field === "dueAt").map((p) => p.source)).toEqual(["offset", "extension"])
    const changed = await events(enrollment, "learning.deadline.changed")
    expect(changed.map((e) => e.data.nodeKeys)).toEqual([["quiz"]])
    const [override] = await m.sql<{ origin: string }>("SELECT origin FROM learning_date_overrides WHERE uuid = $1", extension.overrideUuid)
    expect(override!.origin).toBe("extension")
    // The request is listed for the learner and in the staff queue.
    expect(ok<Array<ExtensionRequestT>>(await m.invoke("learning.extensions.list", learner, { path: { enrollment } })).map((x) => x.uuid)).toEqual([extension.uuid])
    const queue = ok<{ items: Array<ExtensionRequestT> }>(await m.invoke("learning.extensions.course_list", course.staff.assistant, {
      path: { course: course.courseUuid },
      urlParams: { status: "approved" }
    }))
    expect(queue.items.map((x) => x.uuid)).toEqual([extension.uuid])
    expect(refused(await m.invoke("learning.extensions.course_list", course.staff.reviewer, { path: { course: course.courseUuid } }))).toEqual([403, "forbidden"])
  })

  it("asks staff beyond the auto-approval, refuses outside the window or limits with window_closed, and nobody decides their own", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    // 14 days is the policy's maximum: 15 is refused, 14 is asked.
    expect(refused(await requestExtension(learner, enrollment, { nodeKey: "quiz2", days: 15 }))).toEqual([409, "window_closed"])
    const asked = ok<ExtensionRequestT>(await requestExtension(learner, enrollment, { nodeKey: "quiz2", days: 14 }))
    expect([asked.status, asked.autoApproved]).toEqual(["requested", false])
    expect(await events(enrollment, "learning.deadline.changed")).toEqual([])
    expect(refused(await requestExtension(learner, enrollment, { nodeKey: "quiz2", days: 3 }))).toEqual([409, "invalid_state"])
    const decide = (actor: SessionActor, uuid: string, revision: number, extra: Record<string, unknown> = {}) =>
      m.invoke("learning.extensions.decide", actor, { path: { extension: uuid }, payload: { requestUuid: randomUUID(), expectedRevision: revision, decision: "approve", comment: "", ...extra } })
    expect(refused(await decide(course.staff.assistant, asked.uuid, asked.revision + 1))).toEqual([409, "revision_conflict"])
    const approved = ok<ExtensionRequestT>(await decide(course.staff.assistant, asked.uuid, asked.revision, { days: 5 }))
    expect([approved.status, approved.decidedBy]).toEqual(["approved", course.staff.assistant.profileUuid])
    expect(new Date(approved.grantedDueAt!).getTime()).toBe(new Date(asked.originalDueAt).getTime() + 5 * day)
    expect((await events(enrollment, "learning.deadline.changed")).map((e) => e.data.nodeKeys)).toEqual([["quiz2"]])
    // The run's policy is set through runs.update: the whole policy, within bounds.
    const setPolicy = async (policy: Record<string, number>) => {
      const [run] = await m.sql<{ revision: number }>("SELECT revision FROM learning_runs WHERE uuid = $1", course.runUuid)
      return m.invoke("learning.runs.update", owner, { path: { run: course.runUuid }, payload: { requestUuid: randomUUID(), expectedRevision: run!.revision, extensionPolicy: policy } })
    }
    expect(ok<Run>(await setPolicy({ autoApproveDays: 2, maxDays: 14, maxCount: 3, windowDays: 0 })).extensionPolicy.windowDays).toBe(0)
    for (const bad of [{ autoApproveDays: 15, maxDays: 14, maxCount: 3, windowDays: 7 }, { autoApproveDays: 0, maxDays: 366, maxCount: 3, windowDays: 7 },
      { autoApproveDays: 0, maxDays: 14, maxCount: 51, windowDays: 7 }, { autoApproveDays: -1, maxDays: 14, maxCount: 3, windowDays: 7 }, { autoApproveDays: 0, maxDays: 14, maxCount: 3 }]) {
      expect(refused(await setPolicy(bad))[0], JSON.stringify(bad)).toBe(400)
    }
    // Outside the window: the step was due more than 0 days ago.
    expect(refused(await requestExtension(learner, enrollment, { nodeKey: "quiz", days: 1 }))).toEqual([409, "window_closed"])
    // Over the count: maxCount 2 with two requests made.
    ok(await setPolicy({ autoApproveDays: 2, maxDays: 14, maxCount: 2, windowDays: 7 }))
    ok(await requestExtension(learner, enrollment, { nodeKey: "quiz3", days: 1 }))
    expect(refused(await requestExtension(learner, enrollment, { nodeKey: "quiz3", days: 1 }))).toEqual([409, "window_closed"])
    // A staff member who is also a learner of the run does not decide their own request.
    const own = await enrollDirectly(m, { uuid: course.courseUuid, run: course.runUuid }, course.staff.instructor)
    const mine = ok<ExtensionRequestT>(await requestExtension(course.staff.instructor, own, { nodeKey: "quiz3", days: 10 }))
    expect(refused(await decide(course.staff.instructor, mine.uuid, mine.revision))).toEqual([403, "conflict_of_interest"])
    // Strict input: unknown field → 400; both requestedDueAt and days → 400.
    expect(refused(await requestExtension(learner, enrollment, { nodeKey: "quiz3", days: 1, extra: 1 }))[0]).toBe(400)
    expect(refused(await requestExtension(learner, enrollment, { nodeKey: "quiz3", days: 1, requestedDueAt: new Date().toISOString() }))[0]).toBe(400)
  })

  it("takes a run's extension policy at runs.create and shows the default policy otherwise", async () => {
    const course = await setup()
    const shown = ok<{ items: Array<Run> }>(await m.invoke("learning.runs.list", owner, { path: { course: course.courseUuid }, urlParams: {} }))
    expect(shown.items.find((run) => run.uuid === course.runUuid)!.extensionPolicy).toEqual({ autoApproveDays: 2, maxDays: 14, maxCount: 3, windowDays: 7 })
    const create = (extensionPolicy: Record<string, number>) =>
      m.invoke("learning.runs.create", owner, {
        path: { course: course.courseUuid },
        payload: {
          requestUuid: randomUUID(), versionNumber: 1, title: "Поток 2", pacing: "self", startsAt: new Date().toISOString(), admission: "open",
          waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 14, maxCount: 2 }, extensionPolicy
        }
      })
    expect(ok<Run>(await create({ autoApproveDays: 0, maxDays: 365, maxCount: 50, windowDays: 365 })).extensionPolicy)
      .toEqual({ autoApproveDays: 0, maxDays: 365, maxCount: 50, windowDays: 365 })
    expect(refused(await create({ autoApproveDays: 3, maxDays: 2, maxCount: 1, windowDays: 1 }))[0]).toBe(400)
  })

  it("emits learning.deadline.changed only when a computed date changes", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    // An incident override (a later layer) already holds quiz3's due: an extension under it changes nothing computed.
    await m.sql(`INSERT INTO learning_date_overrides (uuid, run_uuid, enrollment_uuid, node_key, due_at, origin)
      VALUES ($1, $2, $3, 'quiz3', $4, 'incident')`, randomUUID(), course.runUuid, enrollment, new Date(Date.now() + 60 * day))
    const extension = ok<ExtensionRequestT>(await requestExtension(learner, enrollment, { nodeKey: "quiz3", days: 1 }))
    expect(extension.status).toBe("approved")
    expect(await events(enrollment, "learning.deadline.changed")).toEqual([])
  })

  it("follows the transition table: every state × decision × role", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const stranger = await m.profile({ name: "Чужой" })
    const roles: Record<string, SessionActor> = { ...course.staff, learner, stranger }
    const allowedRoles = ["owner", "instructor", "assistant"]
    const states = ["requested", "approved", "denied", "expired"] as const
    for (const state of states) {
      for (const [role, actor] of Object.entries(roles)) {
        const uuid = randomUUID()
        await m.sql(`INSERT INTO learning_extension_requests (uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, original_due_at,
            requested_due_at, reason, status) VALUES ($1, $2, $3, $4, $5, 'quiz3', now(), now() + interval '9 days', 'r', $6)`,
          uuid, course.courseUuid, course.runUuid, enrollment, learner.profileUuid, state)
        const answer = await m.invoke("learning.extensions.decide", actor, {
          path: { extension: uuid },
          payload: { requestUuid: randomUUID(), expectedRevision: 1, decision: "deny", comment: "" }
        })
        const legal = Object.values(extensionTransitions).some((t) => t.trigger === "learning.extensions.decide" && (t.from as ReadonlyArray<string>).includes(state))
        const expected = role === "stranger"
          ? [404, "not_found"]
          : role === "learner"
          ? [403, "forbidden"]
          : !allowedRoles.includes(role)
          ? [403, "forbidden"]
          : legal
          ? [200, undefined]
          : [409, "invalid_state"]
        expect(refused(answer), `${state} × ${role}`).toEqual(expected)
      }
    }
  })
})

describe("incidents", () => {
  it("computes the affected learners, previews compensation, applies exactly the plan and resolves the incident", async () => {
    const course = await setup()
    const a = await learnerIn(course.runUuid)
    const b = await learnerIn(course.runUuid)
    const c = await learnerIn(course.runUuid)
    const wrong = await submit(a.learner, a.enrollment, "quiz2", "1")
    const failed = await submit(b.learner, b.enrollment, "quiz2", "2")
    // b's check failed on the platform (as the grading worker would leave it): attempt refunded.
    await m.sql("UPDATE learning_submissions SET status = 'check_failed', attempt_counted = false WHERE uuid = $1", failed.uuid)
    const window = { from: new Date(Date.now() - 60_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() }
    const incident = ok<IncidentT>(await m.invoke("learning.incidents.create", course.staff.instructor, {
      path: { run: course.runUuid },
      payload: { requestUuid: randomUUID(), kind: "checker_outage", window, nodeKeys: ["quiz2"], description: "Проверка падала" }
    }))
    expect(incident.affected.map((x) => x.enrollmentUuid).sort()).toEqual([a.enrollment, b.enrollment].sort())
    expect(incident.affected.every((x) => x.nodeKeys.join() === "quiz2")).toBe(true)
    expect(refused(await m.invoke("learning.incidents.create", course.staff.assistant, {
      path: { run: course.runUuid },
      payload: { requestUuid: randomUUID(), kind: "other", window, description: "x" }
    }))).toEqual([403, "forbidden"])
    const preview = (payload: Record<string, unknown>) =>
      m.invoke("learning.incidents.preview", course.staff.instructor, { path: { incident: incident.uuid }, payload: { requestUuid: randomUUID(), ...payload } })
    const plan = ok<IncidentT["plan"] & object>(await preview({ extendDays: 2, refundAttempts: 1, excuseNodeKeys: ["quiz3"], requeue: true }))
    const kinds = plan.items.map((item) => `${item.kind}:${item.enrollmentUuid === a.enrollment ? "a" : "b"}:${item.nodeKey}`).sort()
    expect(kinds).toEqual(["excuse:a:quiz3", "excuse:b:quiz3", "extension:a:quiz2", "extension:b:quiz2", "refund:a:quiz2", "refund:b:quiz2", "requeue:b:quiz2"])
    // The preview changed nothing of the learners'.
    expect(await m.sql("SELECT 1 FROM learning_date_overrides WHERE run_uuid = $1", course.runUuid)).toEqual([])
    expect(await events(a.enrollment, "learning.deadline.changed")).toEqual([])
    const applied = ok<IncidentT>(await m.invoke("learning.incidents.apply", course.staff.instructor, {
      path: { incident: incident.uuid },
      payload: { requestUuid: randomUUID(), planUuid: plan.uuid }
    }))
    expect([applied.status, applied.plan?.status]).toEqual(["resolved", "applied"])
    const before = new Date(plan.items.find((item) => item.kind === "extension" && item.enrollmentUuid === a.enrollment)!.dueBefore!).getTime()
    const itemA = (await calendar(a.learner, a.enrollment)).items.find((i) => i.nodeKey === "quiz2")!
    expect(new Date(itemA.dueAt!).getTime()).toBe(before + 2 * day)
    expect(itemA.extraAttempts).toBe(1)
    expect(itemA.provenance.filter((p) => p.field === "dueAt").map((p) => p.source)).toEqual(["offset", "incident"])
    const [requeued] = await m.sql<{ status: string; jobs: number }>(
      "SELECT status, (SELECT count(*)::int FROM learning_grading_jobs WHERE submission_uuid = s.uuid AND status = 'queued') AS jobs FROM learning_submissions s WHERE uuid = $1",
      failed.uuid
    )
    expect(requeued).toEqual({ status: "submitted", jobs: 1 })
    const excused = await m.sql<{ node_key: string; status: string }>("SELECT node_key, status FROM learning_step_states WHERE enrollment_uuid = $1 AND node_key = 'quiz3'", a.enrollment)
    expect(excused).toEqual([{ node_key: "quiz3", status: "completed" }])
    // Exactly the plan: c, unaffected, has nothing; a's wrong submission keeps its single auto layer.
    expect(await m.sql("SELECT 1 FROM learning_date_overrides WHERE enrollment_uuid = $1", c.enrollment)).toEqual([])
    expect((await getSubmission(owner, wrong.uuid)).layers.map((l) => l.kind)).toEqual(["auto"])
    expect((await events(a.enrollment, "learning.deadline.changed")).map((e) => e.data.nodeKeys)).toEqual([["quiz2"]])
    // Resolved: no further preview; the incident lists and reads with its plan.
    expect(refused(await preview({ extendDays: 1 }))).toEqual([409, "invalid_state"])
    const read = ok<IncidentT>(await m.invoke("learning.incidents.get", course.staff.reviewer, { path: { incident: incident.uuid } }))
    expect(read.plan?.uuid).toBe(plan.uuid)
    const list = ok<{ items: Array<IncidentT> }>(await m.invoke("learning.incidents.list", course.staff.analyst, { path: { run: course.runUuid }, urlParams: { status: "resolved" } }))
    expect(list.items.map((x) => x.uuid)).toEqual([incident.uuid])
    expect(refused(await m.invoke("learning.incidents.get", a.learner, { path: { incident: incident.uuid } }))).toEqual([404, "not_found"])
  })

  it("refuses a stale plan with plan_stale and an old one with plan_expired", async () => {
    const course = await setup()
    const a = await learnerIn(course.runUuid)
    const window = { from: new Date(Date.now() - 60_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() }
    await submit(a.learner, a.enrollment, "quiz2", "1")
    const incident = ok<IncidentT>(await m.invoke("learning.incidents.create", owner, {
      path: { run: course.runUuid },
      payload: { requestUuid: randomUUID(), kind: "content_error", window, nodeKeys: ["quiz2"], description: "Ошибка в условии" }
    }))
    const preview = async () =>
      ok<{ uuid: string }>(await m.invoke("learning.incidents.preview", owner, { path: { incident: incident.uuid }, payload: { requestUuid: randomUUID(), extendDays: 1 } }))
    const apply = (planUuid: string) => m.invoke("learning.incidents.apply", owner, { path: { incident: incident.uuid }, payload: { requestUuid: randomUUID(), planUuid } })
    const stale = await preview()
    // The learner's dates change after the preview (an extension): the plan is stale.
    ok(await requestExtension(a.learner, a.enrollment, { nodeKey: "quiz2", days: 1 }))
    expect(refused(await apply(stale.uuid))).toEqual([409, "plan_stale"])
    const old = await preview()
    await m.sql("UPDATE learning_plans SET expires_at = now() - interval '1 second' WHERE uuid = $1", old.uuid)
    expect(refused(await apply(old.uuid))).toEqual([410, "plan_expired"])
    const fresh = await preview()
    expect(ok<IncidentT>(await apply(fresh.uuid)).status).toBe("resolved")
  })
})

const appealOf = (actor: SessionActor, submission: string, extra: Record<string, unknown> = {}) =>
  m.invoke("learning.appeals.create", actor, { path: { submission }, payload: { requestUuid: randomUUID(), reason: "Ответ верный по сути", ...extra } })
const decideAppeal = (actor: SessionActor, appeal: AppealT, payload: Record<string, unknown>) =>
  m.invoke("learning.appeals.decide", actor, { path: { appeal: appeal.uuid }, payload: { requestUuid: randomUUID(), expectedRevision: appeal.revision, comment: "", ...payload } })

describe("appeals of a scope", () => {
  it("lists a run-scoped or group-scoped instructor the appeals of its run or its group's members; others get 403", async () => {
    const course = await setup()
    const otherRun = await newRun(course.courseUuid)
    const inRun = await learnerIn(course.runUuid)
    const grouped = await learnerIn(course.runUuid)
    const elsewhere = await learnerIn(otherRun)
    const appealed = async (l: { learner: SessionActor; enrollment: string }) =>
      ok<AppealT>(await appealOf(l.learner, (await submit(l.learner, l.enrollment, "quiz3", "41")).uuid)).uuid
    const [a1, a2, a3] = [await appealed(inRun), await appealed(grouped), await appealed(elsewhere)]
    const group = ok<{ uuid: string; revision: number }>(await m.invoke("learning.groups.create", owner, {
      path: { run: course.runUuid },
      payload: { requestUuid: randomUUID(), name: "Секция", kind: "section", visibility: "separate", assignment: "manual" }
    }))
    ok(await m.invoke("learning.groups.members", owner, {
      path: { group: group.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: group.revision, add: [grouped.enrollment], remove: [] }
    }))
    const runInstructor = (await acceptedStaff(m, owner, course.courseUuid, "instructor", { runUuid: otherRun })).profile
    const groupInstructor = (await acceptedStaff(m, owner, course.courseUuid, "instructor", { groupUuid: group.uuid })).profile
    const listed = async (actor: SessionActor) =>
      ok<{ items: Array<{ uuid: string }> }>(await m.invoke("learning.appeals.list", actor, { path: { course: course.courseUuid }, urlParams: {} }))
        .items.map((appeal) => appeal.uuid).sort()
    expect(await listed(owner)).toEqual([a1, a2, a3].sort())
    expect(await listed(runInstructor)).toEqual([a3])
    expect(await listed(groupInstructor)).toEqual([a2])
    // An assistant holds no appeals_resolve; a learner is no staff.
    expect(refused(await m.invoke("learning.appeals.list", course.staff.assistant, { path: { course: course.courseUuid }, urlParams: {} }))).toEqual([403, "forbidden"])
    expect(refused(await m.invoke("learning.appeals.list", inRun.learner, { path: { course: course.courseUuid }, urlParams: {} }))).toEqual([403, "forbidden"])
  })
})

describe("appeals and regrade plans", () => {
  it("an appeal, its escalation, then a regrade plan: the effective score right at each step, the first layer unchanged", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const first = await submit(learner, enrollment, "quiz3", "41")
    const wrong = await submit(learner, enrollment, "quiz3", "40")
    const score = async () => {
      const view = await getSubmission(course.staff.instructor, wrong.uuid)
      expect(view.layers[0]).toMatchObject({ kind: "auto", points: 0, verdict: "wrong" })
      return [view.score?.points, view.layers.map((l) => l.kind).join(",")]
    }
    expect(await score()).toEqual([0, "auto"])
    const opened = ok<AppealT>(await appealOf(learner, wrong.uuid, { requestedPoints: 10 }))
    expect([opened.status, opened.initialPoints]).toEqual(["open", 0])
    expect((await events(opened.uuid, "learning.appeal.opened")).map((e) => e.data.status)).toEqual(["open"])
    expect(refused(await appealOf(learner, wrong.uuid))).toEqual([409, "invalid_state"])
    expect(refused(await appealOf(course.staff.instructor, wrong.uuid))).toEqual([403, "forbidden"])
    // Replacement options: the other attempt and excusing the step, computed without a write.
    const layersBefore = await m.sql("SELECT count(*)::int AS n FROM learning_score_layers")
    const options = ok<{ options: Array<{ key: string; kind: string; points: number }> }>(
      await m.invoke("learning.appeals.replacements", course.staff.reviewer, { path: { appeal: opened.uuid } })
    )
    expect(options.options.map((o) => [o.key, o.kind, o.points])).toEqual([[`attempt:${first.uuid}`, "other_attempt", 0], ["excuse", "excuse", 10]])
    expect(await m.sql("SELECT count(*)::int AS n FROM learning_score_layers")).toEqual(layersBefore)
    // First level: the score is automatic, no reviewer's review, so a reviewer may not resolve it; an instructor adjusts to 5.
    expect(refused(await decideAppeal(course.staff.reviewer, opened, { outcome: "adjust", points: 5 }))).toEqual([403, "forbidden"])
    const resolved = ok<AppealT>(await decideAppeal(course.staff.instructor, opened, { outcome: "adjust", points: 5 }))
    expect([resolved.status, resolved.initialPoints, resolved.resolvedPoints]).toEqual(["resolved", 0, 5])
    expect(await score()).toEqual([5, "auto,appeal"])
    // The learner escalates; a reviewer may not close it, an instructor does, replacing by excuse.
    const escalated = ok<AppealT>(await m.invoke("learning.appeals.escalate", learner, {
      path: { appeal: resolved.uuid },
      payload: { requestUuid: randomUUID(), expectedRevision: resolved.revision, reason: "Прошу пересмотреть" }
    }))
    expect(escalated.status).toBe("escalated")
    expect(refused(await decideAppeal(course.staff.reviewer, escalated, { outcome: "adjust", points: 8 }))).toEqual([403, "forbidden"])
    const closed = ok<AppealT>(await decideAppeal(course.staff.instructor, escalated, { outcome: "adjust", points: 8 }))
    expect([closed.status, closed.initialPoints, closed.resolvedPoints, closed.closedPoints]).toEqual(["closed", 0, 5, 8])
    expect(await score()).toEqual([8, "auto,appeal,appeal"])
    // Then a regrade plan (full credit) over both attempts: 10, the first layer still the auto 0.
    const plan = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.create", course.staff.instructor, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), nodeKey: "quiz3", rule: { kind: "full_credit" }, selector: {}, policy: "any" }
    }))
    expect(plan.items.map((item) => [item.submissionUuid, item.old, item.new])).toEqual([[first.uuid, 0, 10], [wrong.uuid, 8, 10]])
    expect(await score()).toEqual([8, "auto,appeal,appeal"])
    const committed = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.commit", course.staff.instructor, {
      path: { course: course.courseUuid, plan: plan.uuid },
      payload: { requestUuid: randomUUID() }
    }))
    expect([committed.status, committed.progress]).toEqual(["committed", 2])
    expect(await score()).toEqual([10, "auto,appeal,appeal,plan"])
    expect((await getSubmission(learner, wrong.uuid)).status).toBe("accepted")
    const audit = await m.sql<{ action: string }>("SELECT action FROM learning_audit_events WHERE course_uuid = $1 AND action LIKE 'score.%' ORDER BY created_at", course.courseUuid)
    expect(audit.map((row) => row.action)).toEqual(["score.appeal", "score.appeal", "score.plan", "score.plan"])
  })

  it("follows the appeal transition table: every state × operation × role", async () => {
    const course = await setup()
    const { enrollment, learner } = await learnerIn(course.runUuid)
    const stranger = await m.profile({ name: "Чужой" })
    const roles: Record<string, SessionActor> = { ...course.staff, learner, stranger }
    const may: Record<string, ReadonlyArray<string>> = {
      learner: ["learner"],
      resolver: ["owner", "instructor", "reviewer"],
      adjuster: ["owner", "instructor"]
    }
    const states = ["open", "resolved", "escalated", "closed"] as const
    const operations = ["learning.appeals.decide", "learning.appeals.escalate"] as const
    for (const state of states) {
      for (const operation of operations) {
        for (const [role, actor] of Object.entries(roles)) {
          const submission = await submit(learner, enrollment, "quiz3", "0").catch(() => undefined)
          const target = submission ?? only(await m.sql<{ uuid: string }>("SELECT uuid FROM learning_submissions WHERE enrollment_uuid = $1 LIMIT 1", enrollment))
          await m.sql("UPDATE learning_appeals SET status = 'closed' WHERE enrollment_uuid = $1", enrollment)
          const uuid = randomUUID()
          await m.sql(`INSERT INTO learning_appeals (uuid, submission_uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, reason,
              initial_points, status, resolved_at) VALUES ($1, $2, $3, $4, $5, $6, 'quiz3', 'r', 0, $7, now())`,
            uuid, target.uuid, course.courseUuid, course.runUuid, enrollment, learner.profileUuid, state)
          const payload = operation === "learning.appeals.decide"
            ? { requestUuid: randomUUID(), expectedRevision: 1, outcome: "uphold", comment: "" }
            : { requestUuid: randomUUID(), expectedRevision: 1, reason: "r" }
          const answer = await m.invoke(operation, actor, { path: { appeal: uuid }, payload })
          const transition = appealTransitions.find((t) => t.trigger === operation && t.from === state)
          const learnerOp = operation === "learning.appeals.escalate"
          const expected = role === "stranger"
            ? [404, "not_found"]
            : learnerOp
            ? role === "learner" ? (transition !== undefined ? [200, undefined] : [409, "invalid_state"]) : [403, "forbidden"]
            : role === "learner"
            ? [403, "forbidden"]
            : !may.resolver!.includes(role)
            ? [403, "forbidden"]
            : transition === undefined
            ? [409, "invalid_state"]
            // A reviewer resolves appeals of their own reviews only: these scores are automatic.
            : may[transition.by]!.includes(role) && !(transition.by === "resolver" && role === "reviewer")
            ? [200, undefined]
            : [403, "forbidden"]
          expect(refused(answer), `${operation} ${state} × ${role}`).toEqual(expected)
        }
      }
    }
  })

  it("refuses a plan committed after a concurrent score change (plan_stale); applies exactly the previewed items; skips and lists frozen ones", async () => {
    const course = await setup()
    const a = await learnerIn(course.runUuid)
    const b = await learnerIn(course.runUuid)
    const sa = await submit(a.learner, a.enrollment, "quiz3", "1")
    const sb = await submit(b.learner, b.enrollment, "quiz3", "2")
    const create = async (payload: Record<string, unknown>) =>
      ok<RegradePlanT>(await m.invoke("learning.regrade_plans.create", owner, {
        path: { course: course.courseUuid },
        payload: { requestUuid: randomUUID(), nodeKey: "quiz3", rule: { kind: "accept_answer", answer: "1" }, selector: {}, policy: "any", ...payload }
      }))
    const commit = (plan: RegradePlanT) =>
      m.invoke("learning.regrade_plans.commit", owner, { path: { course: course.courseUuid, plan: plan.uuid }, payload: { requestUuid: randomUUID() } })
    const stale = await create({})
    // Only a's reply matches: b's is listed unchanged.
    expect(stale.items.map((item) => [item.submissionUuid, item.new, item.skipped])).toEqual([[sa.uuid, 10, undefined], [sb.uuid, undefined, "unchanged"]])
    // A concurrent score change on a (an appeal decided) → the commit is refused, nothing written.
    const appeal = ok<AppealT>(await appealOf(a.learner, sa.uuid))
    ok(await decideAppeal(course.staff.instructor, appeal, { outcome: "adjust", points: 3 }))
    expect(refused(await commit(stale))).toEqual([409, "plan_stale"])
    expect(await m.sql("SELECT 1 FROM learning_score_layers WHERE kind = 'plan' AND source_uuid = $1", stale.uuid)).toEqual([])
    // A fresh plan commits exactly its previewed items.
    const fresh = await create({ policy: "only_if_higher" })
    const committed = ok<RegradePlanT>(await commit(fresh))
    expect(committed.status).toBe("committed")
    expect(committed.items.map((item) => [item.submissionUuid, item.appliedLayerUuid !== undefined, item.skipped])).toEqual([[sa.uuid, true, undefined], [sb.uuid, false, "unchanged"]])
    const layers = await m.sql<{ submission_uuid: string; points: string; only_if_higher: boolean }>(
      "SELECT submission_uuid, points, only_if_higher FROM learning_score_layers WHERE kind = 'plan' AND source_uuid = $1", fresh.uuid)
    expect(layers).toEqual([{ submission_uuid: sa.uuid, points: "10", only_if_higher: true }])
    expect((await getSubmission(owner, sa.uuid)).score?.points).toBe(10)
    expect((await getSubmission(owner, sb.uuid)).layers.map((l) => l.kind)).toEqual(["auto"])
    expect(refused(await commit(fresh))).toEqual([409, "invalid_state"])
    // Frozen: a second run finished 40 days ago (freeze after 30): its items are skipped and listed, the rest commit.
    const oldRun = await newRun(course.courseUuid)
    const c = await learnerIn(oldRun)
    const sc = await submit(c.learner, c.enrollment, "quiz3", "5")
    await m.sql("UPDATE learning_runs SET status = 'finished', finished_at = now() - interval '40 days' WHERE uuid = $1", oldRun)
    const full = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.create", owner, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), nodeKey: "quiz3", rule: { kind: "full_credit" }, selector: {}, policy: "any" }
    }))
    expect(full.items.find((item) => item.submissionUuid === sc.uuid)?.skipped).toBe("frozen")
    const done = ok<RegradePlanT>(await commit(full))
    expect(done.skipped.frozen).toBe(1)
    expect(done.items.filter((item) => item.appliedLayerUuid !== undefined).map((item) => item.submissionUuid).sort()).toEqual([sb.uuid].sort())
    expect((await getSubmission(owner, sc.uuid)).layers.map((l) => l.kind)).toEqual(["auto"])
    // Expired plans: 410.
    const expired = await create({})
    await m.sql("UPDATE learning_regrade_plans SET expires_at = now() - interval '1 second' WHERE uuid = $1", expired.uuid)
    expect(refused(await commit(expired))).toEqual([410, "plan_expired"])
    // Bounds: a selector lists at most 1000 submissions (1000 passes, 1001 is refused naming the field).
    const selecting = (n: number) => m.invoke("learning.regrade_plans.create", owner, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), nodeKey: "quiz3", rule: { kind: "excuse" }, selector: { submissionUuids: Array.from({ length: n }, () => randomUUID()) }, policy: "any" }
    })
    expect(ok<RegradePlanT>(await selecting(1000)).itemCount).toBe(0)
    expect(refused(await selecting(1001))[0]).toBe(400)
    expect(refused(await m.invoke("learning.regrade_plans.create", owner, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), nodeKey: "quiz3", rule: { kind: "excuse", extra: 1 }, selector: {}, policy: "any" }
    }))[0]).toBe(400)
    // Who: reviewers and assistants may not plan; strangers do not see the course.
    expect(refused(await m.invoke("learning.regrade_plans.create", course.staff.reviewer, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), nodeKey: "quiz3", rule: { kind: "excuse" }, selector: {}, policy: "any" }
    }))).toEqual([403, "forbidden"])
  })

  it("commits 10k items in chunks through the worker with a durable cursor; an interrupted chunk leaves nothing and resumes without applying an item twice", async () => {
    const course = await setup()
    const { enrollment } = await learnerIn(course.runUuid)
    await m.sql(`INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, attempt_no,
        reply, status, attempt_counted)
      SELECT gen_random_uuid(), e.uuid, e.course_uuid, e.run_uuid, e.profile_uuid, 'quiz3', 1, g, '"0"'::jsonb, 'graded', false
      FROM learning_enrollments e, generate_series(1, 10000) g WHERE e.uuid = $1`, enrollment)
    await m.sql(`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed)
      SELECT gen_random_uuid(), uuid, 'auto', 0, 10, 'wrong', false FROM learning_submissions WHERE enrollment_uuid = $1`, enrollment)
    const plan = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.create", owner, {
      path: { course: course.courseUuid },
      payload: { requestUuid: randomUUID(), nodeKey: "quiz3", rule: { kind: "excuse" }, selector: { runUuid: course.runUuid }, policy: "any" }
    }))
    expect([plan.itemCount, plan.items.length, plan.nextCursor !== undefined]).toEqual([10000, 100, true])
    const committing = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.commit", owner, {
      path: { course: course.courseUuid, plan: plan.uuid },
      payload: { requestUuid: randomUUID() }
    }))
    expect([committing.status, committing.progress]).toEqual(["committing", 0])
    const progress = async () => only(await m.sql<{ cursor: number; status: string }>("SELECT cursor, status FROM learning_regrade_plans WHERE uuid = $1", plan.uuid))
    const planLayers = async () => only(await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM learning_score_layers WHERE kind = 'plan' AND source_uuid = $1", plan.uuid)).n
    expect(await m.runtime.runPromise(advanceRegradePlans())).toBe(500)
    expect([await progress(), await planLayers()]).toEqual([{ cursor: 500, status: "committing" }, 500])
    // A worker dies in the middle of a chunk: its transaction never commits — no layer, cursor unchanged.
    const killed = await m.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.zipRight(advanceRegradePlans(), Effect.fail("killed" as const)))).pipe(Effect.either))
    expect(killed._tag).toBe("Left")
    expect([await progress(), await planLayers()]).toEqual([{ cursor: 500, status: "committing" }, 500])
    // Resumed: chunk after chunk to the end.
    let steps = 0
    while (await m.runtime.runPromise(advanceRegradePlans()) > 0) steps++
    expect(steps).toBe(19)
    expect(await progress()).toEqual({ cursor: 10000, status: "committed" })
    const twice = await m.sql("SELECT submission_uuid FROM learning_score_layers WHERE kind = 'plan' AND source_uuid = $1 GROUP BY submission_uuid HAVING count(*) > 1", plan.uuid)
    expect([await planLayers(), twice]).toEqual([10000, []])
    const view = ok<RegradePlanT>(await m.invoke("learning.regrade_plans.get", owner, { path: { course: course.courseUuid, plan: plan.uuid }, urlParams: { limit: "100" } }))
    expect([view.status, view.progress, view.items.every((item) => item.appliedLayerUuid !== undefined)]).toEqual(["committed", 10000, true])
    expect(refused(await m.invoke("learning.regrade_plans.get", owner, { path: { course: course.courseUuid, plan: plan.uuid }, urlParams: { limit: "101" } }))[0]).toBe(400)
  })
})
