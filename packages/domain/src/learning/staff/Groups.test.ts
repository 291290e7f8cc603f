import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acceptedStaff, addRun, command, enrollDirectly, ok, publishedCourse, refused, roleMatrix, type TestCourse } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import { groupTransitions } from "./Groups.js"
import type { Group } from "./GroupsModel.js"

/**
 * Learning groups through `Operations.invoke` on real Postgres: bounds and
 * revisions, the archived state, capacity under concurrent adds, auto-fill and self-assignment,
 * group-scoped staff who see only their group's learners (404 for the others), group schedules in
 * the members' effective dates (provenance `group`) and group-visible community threads.
 */

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learngroups")
  owner = await m.profile({ name: "Владелец" })
})
afterAll(async () => {
  await m?.close()
})

type Page<T> = { items: Array<T>; nextCursor?: string }

const create = (actor: SessionActor, c: TestCourse, extra: Record<string, unknown> = {}) =>
  m.invoke("learning.groups.create", actor, {
    path: { run: c.run },
    payload: command({ name: "Команда А", kind: "team", visibility: "separate", assignment: "manual", ...extra })
  })

const members = (actor: SessionActor, group: Group, change: Record<string, unknown>) =>
  m.invoke("learning.groups.members", actor, { path: { group: group.uuid }, payload: command({ expectedRevision: group.revision, add: [], remove: [], ...change }) })

const learnerOf = async (c: TestCourse) => {
  const profile = await m.profile()
  return { profile, enrollment: await enrollDirectly(m, c, profile) }
}

const learners = (c: TestCourse, n: number) => Promise.all(Array.from({ length: n }, () => learnerOf(c)))

const deadlineEvents = (enrollment: string) =>
  m.sql<{ data: { nodeKeys: Array<string> }; context: { audience: Array<string> } }>(
    "SELECT data, context FROM outbox_events WHERE aggregate_uuid = $1 AND type = 'learning.deadline.changed' ORDER BY append_order",
    enrollment
  )

describe("learning groups: create, list, update", () => {
  it("creates a group with exact bounds, refuses learners (403) and strangers (404), and lists it", async () => {
    const c = await publishedCourse(m, owner)
    const learner = await learnerOf(c)
    const stranger = await m.profile()
    expect(refused(await create(owner, c, { name: "" }))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, c, { name: "я".repeat(121) }))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, c, { capacity: 0 }))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, c, { capacity: 10_001 }))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, c, { kind: "club" }))).toEqual([400, "invalid_request"])
    expect(refused(await create(owner, c, { color: "red" }))).toEqual([400, "invalid_request"])
    expect(refused(await create(learner.profile, c))).toEqual([403, "forbidden"])
    expect(refused(await create(stranger, c))).toEqual([404, "not_found"])
    const longest = ok<Group>(await create(owner, c, { name: "я".repeat(120), capacity: 10_000 }))
    expect(longest).toMatchObject({ kind: "team", visibility: "separate", assignment: "manual", capacity: 10_000, status: "active", memberCount: 0, members: [], staff: [] })
    const listed = ok<Page<Group>>(await m.invoke("learning.groups.list", owner, { path: { course: c.uuid }, urlParams: { kind: "team" } }))
    expect(listed.items.map((g) => g.uuid)).toEqual([longest.uuid])
    // A learner does not see a separate group they are not in.
    expect(ok<Page<Group>>(await m.invoke("learning.groups.list", learner.profile, { path: { course: c.uuid }, urlParams: {} })).items).toEqual([])
  })

  it("updates at the expected revision (409 otherwise), refuses a capacity below the members, and refuses every change once archived", async () => {
    const c = await publishedCourse(m, owner)
    const [a, b] = await learners(c, 2)
    const group = ok<Group>(await create(owner, c))
    const filled = ok<Group>(await members(owner, group, { add: [a!.enrollment, b!.enrollment] }))
    expect(filled.memberCount).toBe(2)
    const update = (revision: number, change: Record<string, unknown>) =>
      m.invoke("learning.groups.update", owner, { path: { group: group.uuid }, payload: command({ expectedRevision: revision, ...change }) })
    expect(refused(await update(group.revision + 5, { name: "Б" }))).toEqual([409, "revision_conflict"])
    expect(refused(await update(filled.revision, { capacity: 1 }))).toEqual([409, "invalid_state"])
    const renamed = ok<Group>(await update(filled.revision, { name: "Команда Б", visibility: "visible", capacity: 2 }))
    expect(renamed).toMatchObject({ name: "Команда Б", visibility: "visible", capacity: 2, revision: filled.revision + 1 })
    expect(refused(await members(owner, renamed, { remove: [a!.enrollment], expectedRevision: renamed.revision + 1 }))).toEqual([409, "revision_conflict"])
    const before = Date.now()
    const archived = ok<Group>(await update(renamed.revision, { archived: true }))
    expect(archived.status).toBe("archived")
    // Stamped by the archive itself (the database clock, within a minute of this process).
    expect(Math.abs(new Date(archived.archivedAt!).getTime() - before)).toBeLessThan(60_000)
    expect(renamed.archivedAt).toBeUndefined()
    expect(refused(await update(archived.revision, { name: "В" }))).toEqual([409, "invalid_state"])
    expect(refused(await update(archived.revision, { archived: false }))).toEqual([409, "invalid_state"])
    expect(refused(await members(owner, archived, { remove: [a!.enrollment] }))).toEqual([409, "invalid_state"])
    expect(groupTransitions.filter((t) => t.from === "archived")).toEqual([])
    const audit = ok<Page<{ action: string }>>(await m.invoke("learning.audit.list", owner, { path: { course: c.uuid }, urlParams: {} }))
    expect(audit.items.map((i) => i.action)).toEqual(expect.arrayContaining(["groups.create", "groups.members", "groups.update", "groups.archive"]))
  })
})

describe("learning groups: members and capacity", () => {
  it("never passes the capacity under 5 concurrent joins into capacity 3: exactly 3 join, 2 get capacity_full", async () => {
    const c = await publishedCourse(m, owner)
    const five = await learners(c, 5)
    const group = ok<Group>(await create(owner, c, { assignment: "self", capacity: 3 }))
    const answers = await Promise.all(five.map((l) => members(l.profile, group, { add: [l.enrollment] })))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3)
    expect(answers.filter((a) => a.status !== 200).map(refused)).toEqual([[409, "capacity_full"], [409, "capacity_full"]])
    const [row] = await m.sql<{ member_count: number; n: number }>(
      "SELECT g.member_count, (SELECT count(*)::int FROM learning_group_members WHERE group_uuid = g.uuid) AS n FROM learning_groups g WHERE uuid = $1",
      group.uuid
    )
    expect(row).toEqual({ member_count: 3, n: 3 })
  })

  it("staff adds racing into capacity 3 also stop at exactly 3", async () => {
    const c = await publishedCourse(m, owner)
    const five = await learners(c, 5)
    const group = ok<Group>(await create(owner, c, { capacity: 3 }))
    const answers = await Promise.all(five.map((l) => members(owner, group, { add: [l.enrollment] })))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3)
    expect(answers.filter((a) => a.status !== 200).map(refused)).toEqual([[409, "capacity_full"], [409, "capacity_full"]])
  })

  it("auto-fills random unassigned active learners up to the capacity, one group of a kind per learner", async () => {
    const c = await publishedCourse(m, owner)
    const six = await learners(c, 6)
    const paused = await enrollDirectly(m, c, await m.profile(), "paused")
    const first = ok<Group>(await create(owner, c, { assignment: "random", capacity: 4 }))
    const filled = ok<Group>(await members(owner, first, { autoFill: true }))
    expect(filled.memberCount).toBe(4)
    expect(filled.members!.map((x) => x.enrollmentUuid)).not.toContain(paused)
    const second = ok<Group>(await create(owner, c, { name: "Команда Б", assignment: "random" }))
    const rest = ok<Group>(await members(owner, second, { autoFill: true }))
    expect(rest.memberCount).toBe(2)
    expect(new Set([...filled.members!, ...rest.members!].map((x) => x.enrollmentUuid))).toEqual(new Set(six.map((l) => l.enrollment)))
    // Already in a team: another team refuses them; a cohort (another kind) takes them.
    expect(refused(await members(owner, rest, { add: [filled.members![0]!.enrollmentUuid] }))).toEqual([409, "invalid_state"])
    const cohort = ok<Group>(await create(owner, c, { name: "Поток 1", kind: "cohort" }))
    expect(ok<Group>(await members(owner, cohort, { add: [filled.members![0]!.enrollmentUuid] })).memberCount).toBe(1)
    // An enrollment of another course's run is not in this run.
    expect(refused(await members(owner, cohort, { add: [randomUUID()] }))).toEqual([404, "not_found"])
    // The enrollment view names its groups.
    const view = ok<{ groups: Array<{ uuid: string; kind: string }> }>(
      await m.invoke("learning.enrollments.get", owner, { path: { enrollment: filled.members![0]!.enrollmentUuid } })
    )
    expect(view.groups.map((g) => g.uuid).sort()).toEqual([first.uuid, cohort.uuid].sort())
  })

  it("lets a learner join and leave a self-assignment group with their own enrollment only", async () => {
    const c = await publishedCourse(m, owner)
    const [a, b] = await learners(c, 2)
    const self = ok<Group>(await create(owner, c, { assignment: "self" }))
    const manual = ok<Group>(await create(owner, c, { name: "Ручная", kind: "section" }))
    // Self-assignment groups are listed to the run's learners so they can join.
    const listed = ok<Page<Group>>(await m.invoke("learning.groups.list", a!.profile, { path: { course: c.uuid }, urlParams: {} }))
    expect(listed.items.map((g) => [g.uuid, g.joined, g.members])).toEqual([[self.uuid, false, undefined]])
    expect(refused(await members(a!.profile, manual, { add: [a!.enrollment] }))).toEqual([403, "forbidden"])
    expect(refused(await members(a!.profile, self, { add: [b!.enrollment] }))).toEqual([403, "forbidden"])
    expect(refused(await members(a!.profile, self, { add: [a!.enrollment], autoFill: true }))).toEqual([403, "forbidden"])
    expect(refused(await members(await m.profile(), self, { add: [a!.enrollment] }))).toEqual([404, "not_found"])
    const joined = ok<Group>(await members(a!.profile, self, { add: [a!.enrollment] }))
    expect([joined.joined, joined.memberCount, joined.members]).toEqual([true, 1, undefined])
    const left = ok<Group>(await members(a!.profile, self, { remove: [a!.enrollment] }))
    expect([left.joined, left.memberCount]).toEqual([false, 0])
  })
})

describe("learning groups: transfers", () => {
  it("a transferred enrollment leaves the groups of its old run, and their dates", async () => {
    const c = await publishedCourse(m, owner)
    const to = await addRun(m, owner, c.uuid)
    ok(await m.invoke("learning.runs.update", owner, { path: { run: to }, payload: command({ expectedRevision: 1, publish: true }) }))
    const [a] = await learners(c, 1)
    const group = ok<Group>(await create(owner, c))
    expect(ok<Group>(await members(owner, group, { add: [a!.enrollment] })).memberCount).toBe(1)
    const plan = ok<{ uuid: string; blocking: Array<unknown> }>(await m.invoke("learning.transfers.preview", owner, {
      path: { course: c.uuid },
      payload: command({ fromRunUuid: c.run, toRunUuid: to, enrollmentUuids: [a!.enrollment] })
    }))
    expect(plan.blocking).toEqual([])
    ok(await m.invoke("learning.transfers.apply", owner, { path: { course: c.uuid, transfer: plan.uuid }, payload: command() }))
    const after = ok<Page<Group>>(await m.invoke("learning.groups.list", owner, { path: { course: c.uuid }, urlParams: {} })).items[0]!
    expect(after.memberCount).toBe(0)
    expect(ok<{ groups: Array<unknown> }>(await m.invoke("learning.enrollments.get", owner, { path: { enrollment: a!.enrollment } })).groups).toEqual([])
  })
})

describe("learning groups: group-scoped staff see only their group's learners", () => {
  it("answers 404 for learners outside the group and narrows staff lists to the group's learners", async () => {
    const c = await publishedCourse(m, owner)
    const [inside, outside] = await learners(c, 2)
    const group = ok<Group>(await create(owner, c))
    ok(await members(owner, group, { add: [inside!.enrollment] }))
    // scope.groupUuid of another course: 404; the group's run is taken from the group.
    expect(refused(await m.invoke("learning.staff.assign", owner, {
      path: { course: c.uuid },
      payload: command({ profileUuid: (await m.profile()).profileUuid, role: "assistant", scope: { groupUuid: randomUUID() } })
    }))).toEqual([404, "not_found"])
    const { profile: assistant } = await acceptedStaff(m, owner, c.uuid, "assistant", { groupUuid: group.uuid })
    const get = (enrollment: string) => m.invoke("learning.enrollments.get", assistant, { path: { enrollment } })
    expect(ok<{ uuid: string }>(await get(inside!.enrollment)).uuid).toBe(inside!.enrollment)
    expect(refused(await get(outside!.enrollment))).toEqual([404, "not_found"])
    const override = (enrollment: string) =>
      m.invoke("learning.enrollments.override", assistant, { path: { enrollment }, payload: command({ nodeKey: "s1", extraAttempts: 1, reason: "Болел" }) })
    ok(await override(inside!.enrollment))
    expect(refused(await override(outside!.enrollment))).toEqual([404, "not_found"])
    // Community threads of learners outside the group.
    const thread = async (l: { profile: SessionActor; enrollment: string }) =>
      ok<{ uuid: string }>(await m.invoke("learning.community.create", l.profile, {
        path: { enrollment: l.enrollment },
        payload: command({ title: "Вопрос", body: "Как сдать?", visibility: "private" })
      })).uuid
    const mine = await thread(inside!)
    const theirs = await thread(outside!)
    ok(await m.invoke("learning.community.get", assistant, { path: { thread: mine }, urlParams: {} }))
    expect(refused(await m.invoke("learning.community.get", assistant, { path: { thread: theirs }, urlParams: {} }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.community.staff_create", assistant, {
      path: { course: c.uuid, enrollment: outside!.enrollment },
      payload: command({ title: "Вопрос", body: "Текст" })
    }))).toEqual([404, "not_found"])
    const inbox = ok<Page<{ uuid: string }>>(await m.invoke("learning.community.staff_list", assistant, { path: { course: c.uuid }, urlParams: {} }))
    expect(inbox.items.map((t) => t.uuid)).toEqual([mine])
    // Extension requests (rows written directly: this test reads them).
    for (const l of [inside!, outside!]) {
      await m.sql(`INSERT INTO learning_extension_requests (uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, original_due_at, requested_due_at, reason)
        VALUES (gen_random_uuid(), $1, $2, $3, $4, 's1', now(), now() + interval '2 days', 'Болел')`, c.uuid, c.run, l.enrollment, l.profile.profileUuid)
    }
    const requests = ok<Page<{ enrollmentUuid: string }>>(await m.invoke("learning.extensions.course_list", assistant, { path: { course: c.uuid }, urlParams: {} }))
    expect(requests.items.map((r) => r.enrollmentUuid)).toEqual([inside!.enrollment])
    expect(refused(await m.invoke("learning.extensions.list", assistant, { path: { enrollment: outside!.enrollment } }))).toEqual([404, "not_found"])
    // The roster.
    const roster = ok<Page<{ uuid: string }>>(await m.invoke("learning.enrollments.course_list", assistant, { path: { course: c.uuid }, urlParams: {} }))
    expect(roster.items.map((e) => e.uuid)).toEqual([inside!.enrollment])
    const ownerRoster = ok<Page<{ uuid: string }>>(await m.invoke("learning.enrollments.course_list", owner, { path: { course: c.uuid }, urlParams: { groupUuid: group.uuid } }))
    expect(ownerRoster.items.map((e) => e.uuid)).toEqual([inside!.enrollment])
    // Group staff remove their group's members but cannot pull other learners in.
    const current = ok<Page<Group>>(await m.invoke("learning.groups.list", assistant, { path: { course: c.uuid }, urlParams: {} })).items[0]!
    expect(refused(await members(assistant, current, { add: [outside!.enrollment] }))).toEqual([404, "not_found"])
    expect(ok<Group>(await members(assistant, current, { remove: [inside!.enrollment] })).memberCount).toBe(0)
    expect(refused(await get(inside!.enrollment))).toEqual([404, "not_found"])
  })

  it("groups.staff (owner) attaches a run-scoped assistant to the group, narrowing it, and detaches it back to the run", async () => {
    const c = await publishedCourse(m, owner)
    const [inside, outside] = await learners(c, 2)
    const group = ok<Group>(await create(owner, c))
    const withMember = ok<Group>(await members(owner, group, { add: [inside!.enrollment] }))
    const { assignment, profile: assistant } = await acceptedStaff(m, owner, c.uuid, "assistant", { runUuid: c.run })
    const staff = (actor: SessionActor, revision: number, change: Record<string, unknown>) =>
      m.invoke("learning.groups.staff", actor, { path: { group: group.uuid }, payload: command({ expectedRevision: revision, add: [], remove: [], ...change }) })
    expect(refused(await staff(assistant, withMember.revision, { add: [assignment] }))).toEqual([403, "forbidden"])
    expect(refused(await staff(owner, withMember.revision, { add: [randomUUID()] }))).toEqual([404, "not_found"])
    const attached = ok<Group>(await staff(owner, withMember.revision, { add: [assignment] }))
    expect(attached.staff!.map((s) => [s.assignmentUuid, s.role])).toEqual([[assignment, "assistant"]])
    const get = (enrollment: string) => m.invoke("learning.enrollments.get", assistant, { path: { enrollment } })
    ok(await get(inside!.enrollment))
    expect(refused(await get(outside!.enrollment))).toEqual([404, "not_found"])
    expect(refused(await staff(owner, withMember.revision, { remove: [assignment] }))).toEqual([409, "revision_conflict"])
    const detached = ok<Group>(await staff(owner, attached.revision, { remove: [assignment] }))
    expect(detached.staff).toEqual([])
    ok(await get(outside!.enrollment))
  })
})

describe("learning groups: schedules and community", () => {
  interface CalendarBody { items: Array<{ nodeKey: string; dueAt?: string; provenance: Array<{ field: string; source: string }> }> }
  const calendar = async (enrollment: string) => ok<CalendarBody>(await m.invoke("learning.calendar.get", owner, { path: { enrollment } }))
  const dueOf = async (enrollment: string) => {
    const item = (await calendar(enrollment)).items.find((i) => i.nodeKey === "s1")!
    return { dueAt: item.dueAt, sources: item.provenance.filter((p) => p.field === "dueAt").map((p) => p.source) }
  }

  it("a group schedule feeds its members' dates with provenance group; joining and leaving tell only those whose dates changed", async () => {
    const c = await publishedCourse(m, owner)
    const [a, b, cc] = await learners(c, 3)
    const group = ok<Group>(await create(owner, c))
    const withA = ok<Group>(await members(owner, group, { add: [a!.enrollment] }))
    const due = new Date(Date.now() + 10 * 86_400_000).toISOString()
    const plan = ok<{ uuid: string; items: Array<{ groupUuid?: string; nodeKey?: string; field: string; after?: string }> }>(
      await m.invoke("learning.schedule.preview", owner, { path: { run: c.run }, payload: command({ changes: [{ groupUuid: group.uuid, nodeKey: "s1", dueAt: due }] }) })
    )
    expect(plan.items).toEqual([{ groupUuid: group.uuid, nodeKey: "s1", field: "dueAt", after: due }])
    expect(refused(await m.invoke("learning.schedule.preview", owner, {
      path: { run: c.run },
      payload: command({ changes: [{ groupUuid: randomUUID(), nodeKey: "s1", dueAt: due }] })
    }))).toEqual([404, "not_found"])
    const applied = ok<{ changedEnrollments: number }>(await m.invoke("learning.schedule.apply", owner, { path: { preview: plan.uuid }, payload: command() }))
    expect(applied.changedEnrollments).toBe(1)
    expect(await dueOf(a!.enrollment)).toEqual({ dueAt: due, sources: ["group"] })
    expect((await dueOf(b!.enrollment)).sources).not.toContain("group")
    expect((await deadlineEvents(a!.enrollment)).map((e) => e.data.nodeKeys)).toEqual([["s1"]])
    expect(await deadlineEvents(b!.enrollment)).toEqual([])
    // Joining moves b's dates (b hears of it); leaving moves a's back (a hears again); c is untouched.
    ok(await members(owner, withA, { add: [b!.enrollment], remove: [a!.enrollment] }))
    expect(await dueOf(b!.enrollment)).toEqual({ dueAt: due, sources: ["group"] })
    expect((await dueOf(a!.enrollment)).sources).not.toContain("group")
    expect((await deadlineEvents(b!.enrollment)).map((e) => [e.data.nodeKeys, e.context.audience])).toEqual([[["s1"], [b!.profile.profileUuid]]])
    expect(await deadlineEvents(a!.enrollment)).toHaveLength(2)
    expect(await deadlineEvents(cc!.enrollment)).toEqual([])
  })

  it("a group-visible thread is seen by the group's members and staff, not by other learners of the run", async () => {
    const c = await publishedCourse(m, owner)
    const [a, mate, other] = await learners(c, 3)
    const group = ok<Group>(await create(owner, c))
    const { profile: groupStaff } = await acceptedStaff(m, owner, c.uuid, "assistant", { groupUuid: group.uuid })
    ok(await members(owner, group, { add: [a!.enrollment, mate!.enrollment] }))
    const open = (l: { profile: SessionActor; enrollment: string }) =>
      m.invoke("learning.community.create", l.profile, { path: { enrollment: l.enrollment }, payload: command({ title: "Обсуждение", body: "Кто в команде?", visibility: "group" }) })
    expect(refused(await open(other!))).toEqual([400, "invalid_request"])
    const thread = ok<{ uuid: string; visibility: string }>(await open(a!))
    expect(thread.visibility).toBe("group")
    const get = (actor: SessionActor) => m.invoke("learning.community.get", actor, { path: { thread: thread.uuid }, urlParams: {} })
    ok(await get(mate!.profile))
    ok(await get(groupStaff))
    expect(refused(await get(other!.profile))).toEqual([404, "not_found"])
    const list = async (l: { profile: SessionActor; enrollment: string }) =>
      ok<Page<{ uuid: string }>>(await m.invoke("learning.community.list", l.profile, { path: { enrollment: l.enrollment }, urlParams: {} })).items.map((t) => t.uuid)
    expect(await list(mate!)).toEqual([thread.uuid])
    expect(await list(other!)).toEqual([])
  })
})

describe("learning groups: every operation × every role", () => {
  it("answers each kind of caller as the design says (anonymous callers and keys: the HTTP authorization matrix)", async () => {
    const c = await publishedCourse(m, owner)
    const other = ok<Group>(await create(owner, c, { name: "Другая" }))
    const staff = async (role: string, scope: Record<string, string> = {}) => (await acceptedStaff(m, owner, c.uuid, role, scope)).profile
    const [a, b] = await learners(c, 2)
    const callers = {
      learner: a!.profile,
      otherLearner: b!.profile,
      stranger: await m.profile(),
      owner,
      instructor: await staff("instructor"),
      reviewer: await staff("reviewer"),
      assistant: await staff("assistant"),
      analyst: await staff("analyst"),
      otherGroupAssistant: await staff("assistant", { groupUuid: other.uuid })
    }
    type Who = keyof typeof callers
    const refusedToLearners = { learner: 403, otherLearner: 403, stranger: 404 } as const
    const roster = { ...refusedToLearners, owner: 200, instructor: 200, reviewer: 403, assistant: 200, analyst: 403, otherGroupAssistant: 403 } as const
    const expected: Record<string, Record<Who, number>> = {
      "learning.groups.create": roster,
      "learning.groups.list": { learner: 200, otherLearner: 200, stranger: 404, owner: 200, instructor: 200, reviewer: 200, assistant: 200, analyst: 200, otherGroupAssistant: 200 },
      "learning.groups.members": { ...roster, otherGroupAssistant: 404 },
      "learning.groups.staff": { ...refusedToLearners, owner: 200, instructor: 403, reviewer: 403, assistant: 403, analyst: 403, otherGroupAssistant: 404 },
      "learning.groups.update": { ...roster, otherGroupAssistant: 404 }
    }
    const call = async (operation: string, caller: SessionActor) => {
      const group = ok<Group>(await create(owner, c))
      const change = command({ expectedRevision: group.revision, add: [], remove: [] })
      const inputs: Record<string, { path: Record<string, string>; payload?: object; urlParams?: Record<string, string> }> = {
        "learning.groups.create": { path: { run: c.run }, payload: command({ name: "Новая", kind: "section", visibility: "visible", assignment: "manual" }) },
        "learning.groups.list": { path: { course: c.uuid }, urlParams: {} },
        "learning.groups.members": { path: { group: group.uuid }, payload: change },
        "learning.groups.staff": { path: { group: group.uuid }, payload: change },
        "learning.groups.update": { path: { group: group.uuid }, payload: command({ expectedRevision: group.revision, name: "Переименована" }) }
      }
      return (await m.invoke(operation, caller, inputs[operation]!)).status
    }
    expect(await roleMatrix(Object.keys(expected), callers, call)).toEqual(expected)
  })
})
