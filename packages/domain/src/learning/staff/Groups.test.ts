import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acceptedStaff, addRun, command, enrollDirectly, publishedCourse, refused, roleMatrix, type TestCourse } from "../../../test/learning.js"
import { type Marketplace, openMarketplace } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import type { InputOf, OperationId } from "../../operations/Operations.js"
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

/** Some fields of an operation's body, typed from the catalog. */
type Payload<Id extends OperationId> = InputOf<Id> extends { readonly payload: infer P } ? Partial<P> : never

const createInput = (c: TestCourse, extra: Payload<"learning.groups.create">) => ({
  path: { run: c.run },
  payload: command({ name: "Команда А", kind: "team", visibility: "separate", assignment: "manual", ...extra })
})
const create = (actor: SessionActor, c: TestCourse, extra: Payload<"learning.groups.create"> = {}) =>
  m.call("learning.groups.create", actor, createInput(c, extra))
/** A create with a body the schema refuses, untyped: what any client may send. */
const createRaw = (actor: SessionActor, c: TestCourse, extra: Record<string, unknown>) =>
  m.invoke("learning.groups.create", actor, { path: { run: c.run }, payload: { ...createInput(c, {}).payload, ...extra } })

const membersInput = (group: Group, change: Payload<"learning.groups.members">) => ({
  path: { group: group.uuid },
  payload: command({ expectedRevision: group.revision, add: [], remove: [], ...change })
})
const members = (actor: SessionActor, group: Group, change: Payload<"learning.groups.members">) =>
  m.call("learning.groups.members", actor, membersInput(group, change))
const membersRefusal = (actor: SessionActor, group: Group, change: Payload<"learning.groups.members">) =>
  m.refusalOf("learning.groups.members", actor, membersInput(group, change))

interface Learner {
  readonly profile: SessionActor
  readonly enrollment: string
}

const learnerOf = async (c: TestCourse): Promise<Learner> => {
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
    expect(refused(await createRaw(owner, c, { name: "" }))).toEqual([400, "invalid_request"])
    expect(refused(await createRaw(owner, c, { name: "я".repeat(121) }))).toEqual([400, "invalid_request"])
    expect(refused(await createRaw(owner, c, { capacity: 0 }))).toEqual([400, "invalid_request"])
    expect(refused(await createRaw(owner, c, { capacity: 10_001 }))).toEqual([400, "invalid_request"])
    expect(refused(await createRaw(owner, c, { kind: "club" }))).toEqual([400, "invalid_request"])
    expect(refused(await createRaw(owner, c, { color: "red" }))).toEqual([400, "invalid_request"])
    expect(await m.refusalOf("learning.groups.create", learner.profile, createInput(c, {}))).toEqual([403, "forbidden"])
    expect(await m.refusalOf("learning.groups.create", stranger, createInput(c, {}))).toEqual([404, "not_found"])
    const longest = await create(owner, c, { name: "я".repeat(120), capacity: 10_000 })
    expect(longest).toMatchObject({ kind: "team", visibility: "separate", assignment: "manual", capacity: 10_000, status: "active", memberCount: 0, members: [], staff: [] })
    const listed = await m.call("learning.groups.list", owner, { path: { course: c.uuid }, urlParams: { kind: "team" } })
    expect(listed.items.map((g) => g.uuid)).toEqual([longest.uuid])
    // A learner does not see a separate group they are not in.
    expect((await m.call("learning.groups.list", learner.profile, { path: { course: c.uuid } })).items).toEqual([])
  })

  it("updates at the expected revision (409 otherwise), refuses a capacity below the members, and refuses every change once archived", async () => {
    const c = await publishedCourse(m, owner)
    const [a, b] = await Promise.all([learnerOf(c), learnerOf(c)])
    const group = await create(owner, c)
    const filled = await members(owner, group, { add: [a.enrollment, b.enrollment] })
    expect(filled.memberCount).toBe(2)
    const updateInput = (revision: number, change: Payload<"learning.groups.update">) => ({
      path: { group: group.uuid },
      payload: command({ expectedRevision: revision, ...change })
    })
    const update = (revision: number, change: Payload<"learning.groups.update">) => m.call("learning.groups.update", owner, updateInput(revision, change))
    const updateRefusal = (revision: number, change: Payload<"learning.groups.update">) =>
      m.refusalOf("learning.groups.update", owner, updateInput(revision, change))
    expect(await updateRefusal(group.revision + 5, { name: "Б" })).toEqual([409, "revision_conflict"])
    expect(await updateRefusal(filled.revision, { capacity: 1 })).toEqual([409, "invalid_state"])
    const renamed = await update(filled.revision, { name: "Команда Б", visibility: "visible", capacity: 2 })
    expect(renamed).toMatchObject({ name: "Команда Б", visibility: "visible", capacity: 2, revision: filled.revision + 1 })
    expect(await membersRefusal(owner, renamed, { remove: [a.enrollment], expectedRevision: renamed.revision + 1 })).toEqual([409, "revision_conflict"])
    const before = Date.now()
    const archived = await update(renamed.revision, { archived: true })
    expect(archived.status).toBe("archived")
    // Stamped by the archive itself (the database clock, within a minute of this process); absent, NaN fails.
    expect(Math.abs(Number(archived.archivedAt) - before)).toBeLessThan(60_000)
    expect(renamed.archivedAt).toBeUndefined()
    expect(await updateRefusal(archived.revision, { name: "В" })).toEqual([409, "invalid_state"])
    expect(await updateRefusal(archived.revision, { archived: false })).toEqual([409, "invalid_state"])
    expect(await membersRefusal(owner, archived, { remove: [a.enrollment] })).toEqual([409, "invalid_state"])
    expect(groupTransitions.filter((t) => t.from === "archived")).toEqual([])
    const audit = await m.call("learning.audit.list", owner, { path: { course: c.uuid } })
    expect(audit.items.map((i) => i.action)).toEqual(expect.arrayContaining(["groups.create", "groups.members", "groups.update", "groups.archive"]))
  })
})

describe("learning groups: members and capacity", () => {
  it("never passes the capacity under 5 concurrent joins into capacity 3: exactly 3 join, 2 get capacity_full", async () => {
    const c = await publishedCourse(m, owner)
    const five = await learners(c, 5)
    const group = await create(owner, c, { assignment: "self", capacity: 3 })
    const answers = await Promise.all(five.map((l) => membersRefusal(l.profile, group, { add: [l.enrollment] })))
    expect(answers.filter(([status]) => status === 200)).toHaveLength(3)
    expect(answers.filter(([status]) => status !== 200)).toEqual([[409, "capacity_full"], [409, "capacity_full"]])
    const [row] = await m.sql<{ member_count: number; n: number }>(
      "SELECT g.member_count, (SELECT count(*)::int FROM learning_group_members WHERE group_uuid = g.uuid) AS n FROM learning_groups g WHERE uuid = $1",
      group.uuid
    )
    expect(row).toEqual({ member_count: 3, n: 3 })
  })

  it("staff adds racing into capacity 3 also stop at exactly 3", async () => {
    const c = await publishedCourse(m, owner)
    const five = await learners(c, 5)
    const group = await create(owner, c, { capacity: 3 })
    const answers = await Promise.all(five.map((l) => membersRefusal(owner, group, { add: [l.enrollment] })))
    expect(answers.filter(([status]) => status === 200)).toHaveLength(3)
    expect(answers.filter(([status]) => status !== 200)).toEqual([[409, "capacity_full"], [409, "capacity_full"]])
  })

  it("auto-fills random unassigned active learners up to the capacity, one group of a kind per learner", async () => {
    const c = await publishedCourse(m, owner)
    const six = await learners(c, 6)
    const paused = await enrollDirectly(m, c, await m.profile(), "paused")
    const first = await create(owner, c, { assignment: "random", capacity: 4 })
    const filled = await members(owner, first, { autoFill: true })
    expect(filled.memberCount).toBe(4)
    const filledMembers = (filled.members ?? []).map((x) => x.enrollmentUuid)
    expect(filledMembers).toHaveLength(4)
    expect(filledMembers).not.toContain(paused)
    const second = await create(owner, c, { name: "Команда Б", assignment: "random" })
    const rest = await members(owner, second, { autoFill: true })
    expect(rest.memberCount).toBe(2)
    expect(new Set([...filledMembers, ...(rest.members ?? []).map((x) => x.enrollmentUuid)])).toEqual(new Set(six.map((l) => l.enrollment)))
    // Already in a team: another team refuses them; a cohort (another kind) takes them.
    const [teamMember = ""] = filledMembers
    expect(await membersRefusal(owner, rest, { add: [teamMember] })).toEqual([409, "invalid_state"])
    const cohort = await create(owner, c, { name: "Поток 1", kind: "cohort" })
    expect((await members(owner, cohort, { add: [teamMember] })).memberCount).toBe(1)
    // An enrollment of another course's run is not in this run.
    expect(await membersRefusal(owner, cohort, { add: [randomUUID()] })).toEqual([404, "not_found"])
    // The enrollment view names its groups.
    const view = await m.call("learning.enrollments.get", owner, { path: { enrollment: teamMember } })
    expect(view.groups.map((g) => g.uuid).sort()).toEqual([first.uuid, cohort.uuid].sort())
  })

  it("lets a learner join and leave a self-assignment group with their own enrollment only", async () => {
    const c = await publishedCourse(m, owner)
    const [a, b] = await Promise.all([learnerOf(c), learnerOf(c)])
    const self = await create(owner, c, { assignment: "self" })
    const manual = await create(owner, c, { name: "Ручная", kind: "section" })
    // Self-assignment groups are listed to the run's learners so they can join.
    const listed = await m.call("learning.groups.list", a.profile, { path: { course: c.uuid } })
    expect(listed.items.map((g) => [g.uuid, g.joined, g.members])).toEqual([[self.uuid, false, undefined]])
    expect(await membersRefusal(a.profile, manual, { add: [a.enrollment] })).toEqual([403, "forbidden"])
    expect(await membersRefusal(a.profile, self, { add: [b.enrollment] })).toEqual([403, "forbidden"])
    expect(await membersRefusal(a.profile, self, { add: [a.enrollment], autoFill: true })).toEqual([403, "forbidden"])
    expect(await membersRefusal(await m.profile(), self, { add: [a.enrollment] })).toEqual([404, "not_found"])
    const joined = await members(a.profile, self, { add: [a.enrollment] })
    expect([joined.joined, joined.memberCount, joined.members]).toEqual([true, 1, undefined])
    const left = await members(a.profile, self, { remove: [a.enrollment] })
    expect([left.joined, left.memberCount]).toEqual([false, 0])
  })
})

describe("learning groups: transfers", () => {
  it("a transferred enrollment leaves the groups of its old run, and their dates", async () => {
    const c = await publishedCourse(m, owner)
    const to = await addRun(m, owner, c.uuid)
    await m.call("learning.runs.update", owner, { path: { run: to }, payload: command({ expectedRevision: 1, publish: true }) })
    const a = await learnerOf(c)
    const group = await create(owner, c)
    expect((await members(owner, group, { add: [a.enrollment] })).memberCount).toBe(1)
    const plan = await m.call("learning.transfers.preview", owner, {
      path: { course: c.uuid },
      payload: command({ fromRunUuid: c.run, toRunUuid: to, enrollmentUuids: [a.enrollment] })
    })
    expect(plan.blocking).toEqual([])
    await m.call("learning.transfers.apply", owner, { path: { course: c.uuid, transfer: plan.uuid }, payload: command() })
    const after = (await m.call("learning.groups.list", owner, { path: { course: c.uuid } })).items
    expect(after.map((g) => [g.uuid, g.memberCount])).toEqual([[group.uuid, 0]])
    expect((await m.call("learning.enrollments.get", owner, { path: { enrollment: a.enrollment } })).groups).toEqual([])
  })
})

describe("learning groups: group-scoped staff see only their group's learners", () => {
  it("answers 404 for learners outside the group and narrows staff lists to the group's learners", async () => {
    const c = await publishedCourse(m, owner)
    const [inside, outside] = await Promise.all([learnerOf(c), learnerOf(c)])
    const group = await create(owner, c)
    const withInside = await members(owner, group, { add: [inside.enrollment] })
    // scope.groupUuid of another course: 404; the group's run is taken from the group.
    expect(await m.refusalOf("learning.staff.assign", owner, {
      path: { course: c.uuid },
      payload: command({ profileUuid: (await m.profile()).profileUuid, role: "assistant", scope: { groupUuid: randomUUID() } })
    })).toEqual([404, "not_found"])
    const { profile: assistant } = await acceptedStaff(m, owner, c.uuid, "assistant", { groupUuid: group.uuid })
    const get = (enrollment: string) => m.call("learning.enrollments.get", assistant, { path: { enrollment } })
    const getRefusal = (enrollment: string) => m.refusalOf("learning.enrollments.get", assistant, { path: { enrollment } })
    expect((await get(inside.enrollment)).uuid).toBe(inside.enrollment)
    expect(await getRefusal(outside.enrollment)).toEqual([404, "not_found"])
    const overrideInput = (enrollment: string) => ({ path: { enrollment }, payload: command({ nodeKey: "s1", extraAttempts: 1, reason: "Болел" }) })
    await m.call("learning.enrollments.override", assistant, overrideInput(inside.enrollment))
    expect(await m.refusalOf("learning.enrollments.override", assistant, overrideInput(outside.enrollment))).toEqual([404, "not_found"])
    // Community threads of learners outside the group.
    const thread = async (l: Learner) =>
      (await m.call("learning.community.create", l.profile, {
        path: { enrollment: l.enrollment },
        payload: command({ title: "Вопрос", body: "Как сдать?", visibility: "private" })
      })).uuid
    const mine = await thread(inside)
    const theirs = await thread(outside)
    await m.call("learning.community.get", assistant, { path: { thread: mine } })
    expect(await m.refusalOf("learning.community.get", assistant, { path: { thread: theirs } })).toEqual([404, "not_found"])
    expect(await m.refusalOf("learning.community.staff_create", assistant, {
      path: { course: c.uuid, enrollment: outside.enrollment },
      payload: command({ title: "Вопрос", body: "Текст" })
    })).toEqual([404, "not_found"])
    const inbox = await m.call("learning.community.staff_list", assistant, { path: { course: c.uuid } })
    expect(inbox.items.map((t) => t.uuid)).toEqual([mine])
    // Extension requests (rows written directly: this test reads them).
    for (const l of [inside, outside]) {
      await m.sql(`INSERT INTO learning_extension_requests (uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, original_due_at, requested_due_at, reason)
        VALUES (gen_random_uuid(), $1, $2, $3, $4, 's1', now(), now() + interval '2 days', 'Болел')`, c.uuid, c.run, l.enrollment, l.profile.profileUuid)
    }
    const requests = await m.call("learning.extensions.course_list", assistant, { path: { course: c.uuid } })
    expect(requests.items.map((r) => r.enrollmentUuid)).toEqual([inside.enrollment])
    expect(await m.refusalOf("learning.extensions.list", assistant, { path: { enrollment: outside.enrollment } })).toEqual([404, "not_found"])
    // The roster.
    const roster = await m.call("learning.enrollments.course_list", assistant, { path: { course: c.uuid } })
    expect(roster.items.map((e) => e.uuid)).toEqual([inside.enrollment])
    const ownerRoster = await m.call("learning.enrollments.course_list", owner, { path: { course: c.uuid }, urlParams: { groupUuid: group.uuid } })
    expect(ownerRoster.items.map((e) => e.uuid)).toEqual([inside.enrollment])
    // Group staff remove their group's members but cannot pull other learners in.
    const listed = (await m.call("learning.groups.list", assistant, { path: { course: c.uuid } })).items
    expect(listed.map((g) => [g.uuid, g.revision])).toEqual([[group.uuid, withInside.revision]])
    expect(await membersRefusal(assistant, withInside, { add: [outside.enrollment] })).toEqual([404, "not_found"])
    expect((await members(assistant, withInside, { remove: [inside.enrollment] })).memberCount).toBe(0)
    expect(await getRefusal(inside.enrollment)).toEqual([404, "not_found"])
  })

  it("groups.staff (owner) attaches a run-scoped assistant to the group, narrowing it, and detaches it back to the run", async () => {
    const c = await publishedCourse(m, owner)
    const [inside, outside] = await Promise.all([learnerOf(c), learnerOf(c)])
    const group = await create(owner, c)
    const withMember = await members(owner, group, { add: [inside.enrollment] })
    const { assignment, profile: assistant } = await acceptedStaff(m, owner, c.uuid, "assistant", { runUuid: c.run })
    const staffInput = (revision: number, change: Payload<"learning.groups.staff">) => ({
      path: { group: group.uuid },
      payload: command({ expectedRevision: revision, add: [], remove: [], ...change })
    })
    const staff = (revision: number, change: Payload<"learning.groups.staff">) => m.call("learning.groups.staff", owner, staffInput(revision, change))
    const staffRefusal = (actor: SessionActor, revision: number, change: Payload<"learning.groups.staff">) =>
      m.refusalOf("learning.groups.staff", actor, staffInput(revision, change))
    expect(await staffRefusal(assistant, withMember.revision, { add: [assignment] })).toEqual([403, "forbidden"])
    expect(await staffRefusal(owner, withMember.revision, { add: [randomUUID()] })).toEqual([404, "not_found"])
    const attached = await staff(withMember.revision, { add: [assignment] })
    expect(attached.staff?.map((s) => [s.assignmentUuid, s.role])).toEqual([[assignment, "assistant"]])
    const get = (enrollment: string) => m.refusalOf("learning.enrollments.get", assistant, { path: { enrollment } })
    expect(await get(inside.enrollment)).toEqual([200, undefined])
    expect(await get(outside.enrollment)).toEqual([404, "not_found"])
    expect(await staffRefusal(owner, withMember.revision, { remove: [assignment] })).toEqual([409, "revision_conflict"])
    const detached = await staff(attached.revision, { remove: [assignment] })
    expect(detached.staff).toEqual([])
    expect(await get(outside.enrollment)).toEqual([200, undefined])
  })
})

describe("learning groups: schedules and community", () => {
  /** Step s1's due date (ISO) and where it comes from, in the learner's calendar. */
  const dueOf = async (enrollment: string) => {
    const items = (await m.call("learning.calendar.get", owner, { path: { enrollment } })).items.filter((i) => i.nodeKey === "s1")
    expect(items).toHaveLength(1)
    return {
      dueAt: items.map((item) => item.dueAt?.toISOString())[0],
      sources: items.flatMap((item) => item.provenance.filter((p) => p.field === "dueAt").map((p) => p.source))
    }
  }

  it("a group schedule feeds its members' dates with provenance group; joining and leaving tell only those whose dates changed", async () => {
    const c = await publishedCourse(m, owner)
    const [a, b, cc] = await Promise.all([learnerOf(c), learnerOf(c), learnerOf(c)])
    const group = await create(owner, c)
    const withA = await members(owner, group, { add: [a.enrollment] })
    const due = new Date(Date.now() + 10 * 86_400_000)
    const preview = (groupUuid: string) => ({ path: { run: c.run }, payload: command({ changes: [{ groupUuid, nodeKey: "s1", dueAt: due }] }) })
    const plan = await m.call("learning.schedule.preview", owner, preview(group.uuid))
    expect(plan.items).toEqual([{ groupUuid: group.uuid, nodeKey: "s1", field: "dueAt", after: due }])
    expect(await m.refusalOf("learning.schedule.preview", owner, preview(randomUUID()))).toEqual([404, "not_found"])
    const applied = await m.call("learning.schedule.apply", owner, { path: { preview: plan.uuid }, payload: command() })
    expect(applied.changedEnrollments).toBe(1)
    expect(await dueOf(a.enrollment)).toEqual({ dueAt: due.toISOString(), sources: ["group"] })
    expect((await dueOf(b.enrollment)).sources).not.toContain("group")
    expect((await deadlineEvents(a.enrollment)).map((e) => e.data.nodeKeys)).toEqual([["s1"]])
    expect(await deadlineEvents(b.enrollment)).toEqual([])
    // Joining moves b's dates (b hears of it); leaving moves a's back (a hears again); c is untouched.
    await members(owner, withA, { add: [b.enrollment], remove: [a.enrollment] })
    expect(await dueOf(b.enrollment)).toEqual({ dueAt: due.toISOString(), sources: ["group"] })
    expect((await dueOf(a.enrollment)).sources).not.toContain("group")
    expect((await deadlineEvents(b.enrollment)).map((e) => [e.data.nodeKeys, e.context.audience])).toEqual([[["s1"], [b.profile.profileUuid]]])
    expect(await deadlineEvents(a.enrollment)).toHaveLength(2)
    expect(await deadlineEvents(cc.enrollment)).toEqual([])
  })

  it("a group-visible thread is seen by the group's members and staff, not by other learners of the run", async () => {
    const c = await publishedCourse(m, owner)
    const [a, mate, other] = await Promise.all([learnerOf(c), learnerOf(c), learnerOf(c)])
    const group = await create(owner, c)
    const { profile: groupStaff } = await acceptedStaff(m, owner, c.uuid, "assistant", { groupUuid: group.uuid })
    await members(owner, group, { add: [a.enrollment, mate.enrollment] })
    const open = (l: Learner) => ({
      path: { enrollment: l.enrollment },
      payload: command({ title: "Обсуждение", body: "Кто в команде?", visibility: "group" })
    })
    expect(await m.refusalOf("learning.community.create", other.profile, open(other))).toEqual([400, "invalid_request"])
    const thread = await m.call("learning.community.create", a.profile, open(a))
    expect(thread.visibility).toBe("group")
    const get = (actor: SessionActor) => m.refusalOf("learning.community.get", actor, { path: { thread: thread.uuid } })
    expect(await get(mate.profile)).toEqual([200, undefined])
    expect(await get(groupStaff)).toEqual([200, undefined])
    expect(await get(other.profile)).toEqual([404, "not_found"])
    const list = async (l: Learner) =>
      (await m.call("learning.community.list", l.profile, { path: { enrollment: l.enrollment } })).items.map((t) => t.uuid)
    expect(await list(mate)).toEqual([thread.uuid])
    expect(await list(other)).toEqual([])
  })
})

describe("learning groups: every operation × every role", () => {
  it("answers each kind of caller as the design says (anonymous callers and keys: the HTTP authorization matrix)", async () => {
    const c = await publishedCourse(m, owner)
    const other = await create(owner, c, { name: "Другая" })
    const staff = async (role: string, scope: Record<string, string> = {}) => (await acceptedStaff(m, owner, c.uuid, role, scope)).profile
    const [a, b] = await Promise.all([learnerOf(c), learnerOf(c)])
    const callers = {
      learner: a.profile,
      otherLearner: b.profile,
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
      const group = await create(owner, c)
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
