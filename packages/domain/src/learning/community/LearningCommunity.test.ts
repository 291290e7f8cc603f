import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addRun, command, enrollDirectly, only, publishedCourse, roleMatrix, type TestCourse } from "../../../test/learning.js"
import { bodyOf, type Marketplace, okBody as ok, openMarketplace, refusal as refused } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import { canSeeEvent } from "../../events/EventVisibility.js"
import { threadTransitions } from "./Community.js"
import type { Recipient, Thread, ThreadMessage } from "./CommunityModel.js"
import type { StaffAssignment } from "../staff/StaffModel.js"

/**
 * Community threads through `Operations.invoke` on real Postgres: who sees a
 * thread (a learner never another's private one, a run-visible one every learner of the run,
 * community staff in scope), the state machine generated from its table, the staff inbox and its
 * filters, recipients, events to the participants in the same transaction, and exact bounds.
 */

let m: Marketplace
let owner: SessionActor
let stranger: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learncommunity")
  owner = await m.profile({ name: "Владелец" })
  stranger = await m.profile({ name: "Прохожий" })
})
afterAll(async () => {
  await m?.close()
})

type Page<T> = { items: Array<T>; nextCursor?: string }

/** A profile that accepted a staff role on the course. */
const staffMember = async (c: TestCourse, role: string, scope: Record<string, string> = {}, name?: string) => {
  const profile = await m.profile(name !== undefined ? { name } : {})
  const invited = ok<StaffAssignment>(await m.invoke("learning.staff.assign", owner, {
    path: { course: c.uuid },
    payload: command({ profileUuid: profile.profileUuid, role, scope })
  }))
  ok(await m.invoke("learning.staff.accept", profile, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) }))
  return profile
}

/** A learner with an active enrollment in the run. */
const learnerOf = async (c: TestCourse, options: { readonly name?: string; readonly public?: boolean } = {}) => {
  const profile = await m.profile(options)
  return { profile, enrollment: await enrollDirectly(m, c, profile) }
}

const open = (learner: { profile: SessionActor; enrollment: string }, extra: Record<string, unknown> = {}) =>
  m.invoke("learning.community.create", learner.profile, {
    path: { enrollment: learner.enrollment },
    payload: command({ title: "Вопрос по шагу", body: "Как сдать задание?", visibility: "private", ...extra })
  })

const reply = (actor: SessionActor, thread: string, extra: Record<string, unknown> = {}) =>
  m.invoke("learning.community.reply", actor, { path: { thread }, payload: command({ body: "Ответ", ...extra }) })

const resolve = (actor: SessionActor, thread: string, expectedRevision: number) =>
  m.invoke("learning.community.resolve", actor, { path: { thread }, payload: command({ expectedRevision }) })

const get = (actor: SessionActor, thread: string, urlParams: Record<string, string> = {}) =>
  m.invoke("learning.community.get", actor, { path: { thread }, urlParams })

const inbox = (actor: SessionActor, c: TestCourse, urlParams: Record<string, string> = {}) =>
  m.invoke("learning.community.staff_list", actor, { path: { course: c.uuid }, urlParams })

const events = (thread: string) =>
  m.sql<{ type: string; data: { status: string; messageUuid?: string }; context: { profileUuid: string; audience: Array<string>; enrollmentUuid: string } }>(
    "SELECT type, data, context FROM outbox_events WHERE aggregate_kind = 'learning_thread' AND aggregate_uuid = $1 ORDER BY append_order",
    thread
  )

const sees = (profile: SessionActor, eventUuid: string) => m.runtime.runPromise(canSeeEvent(profile.profileUuid, eventUuid))

describe("learning community: a question and its answers", () => {
  it("opens, answers, reopens and resolves a private question; each step emits its event to the participants and is audited", async () => {
    const c = await publishedCourse(m, owner)
    const assistant = await staffMember(c, "assistant", { runUuid: c.run }, "Ассистент")
    const analyst = await staffMember(c, "analyst")
    const a = await learnerOf(c, { name: "Анна" })
    const b = await learnerOf(c)

    const created = ok<Thread>(await open(a, { nodeKey: "s1" }))
    expect([created.status, created.visibility, created.nodeKey, created.authorRole, created.authorName, created.awaitingStaff, created.messageCount])
      .toEqual(["open", "private", "s1", "learner", "Анна", true, 1])
    expect(created.messages!.map((message) => [message.body, message.authorRole])).toEqual([["Как сдать задание?", "learner"]])

    const answer = ok<ThreadMessage>(await reply(assistant, created.uuid, { body: "Откройте шаг s1" }))
    expect([answer.authorRole, answer.authorName]).toEqual(["staff", "Ассистент"])
    const answered = ok<Thread>(await get(a.profile, created.uuid))
    expect([answered.status, answered.awaitingStaff, answered.messageCount, answered.revision]).toEqual(["answered", false, 2, 2])
    expect(answered.messages!.map((message) => message.body)).toEqual(["Как сдать задание?", "Откройте шаг s1"])

    ok(await reply(a.profile, created.uuid, { body: "Не получается" }))
    const reopened = ok<Thread>(await get(assistant, created.uuid))
    expect([reopened.status, reopened.awaitingStaff]).toEqual(["open", true])
    expect(refused(await resolve(a.profile, created.uuid, reopened.revision - 1))).toEqual([409, "revision_conflict"])
    const resolved = ok<Thread>(await resolve(a.profile, created.uuid, reopened.revision))
    expect([resolved.status, resolved.revision, resolved.resolvedAt !== undefined]).toEqual(["resolved", reopened.revision + 1, true])

    const emitted = await events(created.uuid)
    expect(emitted.map((event) => [event.type, event.data.status])).toEqual([
      ["learning.community.created", "open"],
      ["learning.community.replied", "answered"],
      ["learning.community.replied", "open"],
      ["learning.community.resolved", "resolved"]
    ])
    // Addressed to the learner and the community staff in scope (owner, the run's assistant), never the actor; not to the analyst or another learner.
    expect(emitted[0]!.context.audience.sort()).toEqual([owner.profileUuid, assistant.profileUuid].sort())
    expect(emitted[1]!.context.audience.sort()).toEqual([owner.profileUuid, a.profile.profileUuid].sort())
    expect(emitted.every((event) => event.context.enrollmentUuid === a.enrollment)).toBe(true)
    const [replied] = await m.sql<{ uuid: string }>(
      "SELECT uuid FROM outbox_events WHERE aggregate_uuid = $1 AND type = 'learning.community.replied' ORDER BY append_order LIMIT 1",
      created.uuid
    )
    expect([await sees(a.profile, replied!.uuid), await sees(owner, replied!.uuid), await sees(b.profile, replied!.uuid), await sees(analyst, replied!.uuid)])
      .toEqual([true, true, false, false])

    const audit = await m.sql<{ action: string }>("SELECT action FROM learning_audit_events WHERE subject_uuid = $1 ORDER BY created_at", created.uuid)
    expect(audit.map((row) => row.action)).toEqual(["community.create", "community.reply", "community.reply", "community.resolve"])

    // The same requestUuid answers the same thread again; another body under it is a conflict.
    const requestUuid = randomUUID()
    const body = { requestUuid, title: "Повтор", body: "Текст", visibility: "private" }
    const first = ok<Thread>(await m.invoke("learning.community.create", a.profile, { path: { enrollment: a.enrollment }, payload: body }))
    const again = ok<Thread>(await m.invoke("learning.community.create", a.profile, { path: { enrollment: a.enrollment }, payload: body }))
    expect(again.uuid).toBe(first.uuid)
    expect(refused(await m.invoke("learning.community.create", a.profile, { path: { enrollment: a.enrollment }, payload: { ...body, title: "Другое" } })))
      .toEqual([409, "request_conflict"])
  })

  it("follows its transition table: every state × operation × actor, allowed exactly where the table says", async () => {
    const c = await publishedCourse(m, owner)
    const assistant = await staffMember(c, "assistant")
    const a = await learnerOf(c)
    const b = await learnerOf(c)
    const states = ["open", "answered", "resolved"] as const
    const cases = [
      { operation: "learning.community.reply", actor: "author", by: "learner" },
      { operation: "learning.community.reply", actor: "peer", by: "learner" },
      { operation: "learning.community.reply", actor: "staff", by: "staff" },
      { operation: "learning.community.resolve", actor: "author", by: "learner" },
      { operation: "learning.community.resolve", actor: "peer", by: "learner" },
      { operation: "learning.community.resolve", actor: "staff", by: "staff" }
    ] as const
    let checked = 0
    for (const state of states) {
      for (const { actor, by, operation } of cases) {
        const thread = ok<Thread>(await open(a, { visibility: "run" }))
        await m.sql("UPDATE learning_threads SET status = $1 WHERE uuid = $2", state, thread.uuid)
        const caller = actor === "author" ? a.profile : actor === "peer" ? b.profile : assistant
        const answer = operation === "learning.community.reply" ? await reply(caller, thread.uuid) : await resolve(caller, thread.uuid, thread.revision)
        const label = `${operation} by ${actor} from ${state}`
        const allowed = threadTransitions.find((t) => t.operation === operation && t.by === by && t.from === state)
        const [row] = await m.sql<{ status: string }>("SELECT status FROM learning_threads WHERE uuid = $1", thread.uuid)
        if (operation === "learning.community.resolve" && actor === "peer") {
          // Resolving is for the author and staff: another learner who sees the thread may not.
          expect(refused(answer), label).toEqual([403, "forbidden"])
          expect(row!.status, label).toBe(state)
        } else if (allowed === undefined) {
          expect(refused(answer), label).toEqual([409, "invalid_state"])
          expect(row!.status, label).toBe(state)
        } else {
          expect(answer.status, label).toBe(200)
          expect(row!.status, label).toBe(allowed.to)
          checked++
        }
      }
    }
    expect(checked).toBe(threadTransitions.length + 3)
  })

  it("locks a thread whose enrollment left or whose run was cancelled: no new threads or replies; resolving still works", async () => {
    const c = await publishedCourse(m, owner)
    const a = await learnerOf(c)
    const thread = ok<Thread>(await open(a))
    await m.sql("UPDATE learning_enrollments SET status = 'withdrawn' WHERE uuid = $1", a.enrollment)
    expect(refused(await reply(a.profile, thread.uuid))).toEqual([409, "invalid_state"])
    expect(refused(await reply(owner, thread.uuid))).toEqual([409, "invalid_state"])
    expect(refused(await open(a))).toEqual([409, "invalid_state"])
    expect(ok<Thread>(await resolve(owner, thread.uuid, thread.revision)).status).toBe("resolved")
    const other = await learnerOf(c)
    await m.sql("UPDATE learning_runs SET status = 'cancelled' WHERE uuid = $1", c.run)
    expect(refused(await open(other))).toEqual([409, "invalid_state"])
    // An invited learner is not yet part of the community.
    const c2 = await publishedCourse(m, owner)
    const invited = await m.profile()
    const enrollment = await enrollDirectly(m, c2, invited, "invited", false)
    expect(refused(await open({ profile: invited, enrollment }))).toEqual([409, "invalid_state"])
  })
})

describe("learning community: who sees a thread", () => {
  it("a learner never sees another learner's private thread (404 everywhere); a run-visible one every learner of the run sees", async () => {
    const c = await publishedCourse(m, owner)
    const analyst = await staffMember(c, "analyst")
    const otherRun = await addRun(m, owner, c.uuid)
    const outsider = await staffMember(c, "assistant", { runUuid: otherRun })
    const a = await learnerOf(c, { name: "Анна" })
    const b = await learnerOf(c, { name: "Борис" })
    const elsewhere = await m.profile()
    const elsewhereEnrollment = await enrollDirectly(m, { uuid: c.uuid, run: otherRun }, elsewhere)

    const secret = ok<Thread>(await open(a, { title: "Личное" }))
    for (const caller of [b.profile, stranger, analyst, outsider, elsewhere]) {
      expect(refused(await get(caller, secret.uuid))).toEqual([404, "not_found"])
      expect(refused(await reply(caller, secret.uuid))).toEqual([404, "not_found"])
      expect(refused(await resolve(caller, secret.uuid, secret.revision))).toEqual([404, "not_found"])
    }
    const bList = ok<Page<Thread>>(await m.invoke("learning.community.list", b.profile, { path: { enrollment: b.enrollment } }))
    expect(bList.items).toEqual([])
    // Someone else's enrollment: 404, even for staff.
    expect(refused(await m.invoke("learning.community.list", b.profile, { path: { enrollment: a.enrollment } }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.community.list", owner, { path: { enrollment: a.enrollment } }))).toEqual([404, "not_found"])
    expect(refused(await open({ profile: b.profile, enrollment: a.enrollment }))).toEqual([404, "not_found"])

    const shared = ok<Thread>(await open(a, { title: "Обсуждение", visibility: "run" }))
    const seen = ok<Thread>(await get(b.profile, shared.uuid))
    // A fellow learner: no enrollment, and no name of a profile that is not public.
    expect([seen.title, seen.enrollmentUuid, seen.authorName, seen.messages![0]!.authorName, seen.messages![0]!.authorProfileUuid])
      .toEqual(["Обсуждение", undefined, undefined, undefined, undefined])
    const bListed = ok<Page<Thread>>(await m.invoke("learning.community.list", b.profile, { path: { enrollment: b.enrollment } }))
    expect(bListed.items.map((t) => t.uuid)).toEqual([shared.uuid])
    const aListed = ok<Page<Thread>>(await m.invoke("learning.community.list", a.profile, { path: { enrollment: a.enrollment } }))
    expect(aListed.items.map((t) => t.uuid)).toEqual([shared.uuid, secret.uuid])
    expect(ok<Page<Thread>>(await m.invoke("learning.community.list", a.profile, { path: { enrollment: a.enrollment }, urlParams: { status: "answered" } })).items)
      .toEqual([])
    // A learner of another run, the analyst and a stranger still do not see it.
    for (const caller of [elsewhere, analyst, stranger, outsider]) expect(refused(await get(caller, shared.uuid))).toEqual([404, "not_found"])
    expect(ok<Page<Thread>>(await m.invoke("learning.community.list", elsewhere, { path: { enrollment: elsewhereEnrollment } })).items).toEqual([])

    // B takes part: B's message reopens nothing it may not, and A sees B's words (named: the author's own view names only own and staff words).
    const bMessage = ok<ThreadMessage>(await reply(b.profile, shared.uuid, { body: "У меня тоже" }))
    expect([bMessage.authorName, bMessage.authorProfileUuid]).toEqual(["Борис", b.profile.profileUuid])
    const aView = ok<Thread>(await get(a.profile, shared.uuid))
    expect(aView.messages!.map((message) => [message.body, message.authorName])).toEqual([["Как сдать задание?", "Анна"], ["У меня тоже", "Борис"]])
    // B wrote in it: B is a participant and gets the next event.
    ok(await reply(owner, shared.uuid))
    const last = (await events(shared.uuid)).at(-1)!
    expect(last.context.audience).toContain(b.profile.profileUuid)
    // The learner's list filters by the thread's own status (the inbox's `open` means "not resolved").
    const byStatus = async (status: string) =>
      ok<Page<Thread>>(await m.invoke("learning.community.list", a.profile, { path: { enrollment: a.enrollment }, urlParams: { status } })).items.map((t) => t.uuid)
    expect([await byStatus("open"), await byStatus("answered"), await byStatus("resolved")]).toEqual([[secret.uuid], [shared.uuid], []])
    expect(refused(await m.invoke("learning.community.list", a.profile, { path: { enrollment: a.enrollment }, urlParams: { status: "unanswered" } })))
      .toEqual([400, "invalid_request"])
    // A public profile's name shows to fellow learners.
    const named = await learnerOf(c, { name: "Вера", public: true })
    const open2 = ok<Thread>(await open(named, { visibility: "run" }))
    expect(ok<Thread>(await get(b.profile, open2.uuid)).authorName).toBe("Вера")
  })

  it("answers 400 for group visibility outside any group, 404 for another course's group filter, and checks the nodeKey against the run's version", async () => {
    const c = await publishedCourse(m, owner)
    const a = await learnerOf(c)
    expect(refused(await open(a, { visibility: "group" }))).toEqual([400, "invalid_request"])
    expect(refused(await open(a, { nodeKey: "nope" }))).toEqual([400, "invalid_request"])
    expect(refused(await open(a, { visibility: "everyone" }))).toEqual([400, "invalid_request"])
    expect(refused(await open(a, { extra: 1 }))).toEqual([400, "invalid_request"])
    expect(refused(await inbox(owner, c, { groupUuid: randomUUID() }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.community.recipients", owner, { path: { course: c.uuid }, urlParams: { groupUuid: randomUUID() } })))
      .toEqual([404, "not_found"])
    expect(await m.sql("SELECT 1 FROM learning_threads t JOIN learning_enrollments e ON e.uuid = t.enrollment_uuid WHERE e.uuid = $1", a.enrollment)).toEqual([])
  })
})

describe("learning community: staff", () => {
  it("staff open a private thread to a learner; only community staff in scope may", async () => {
    const c = await publishedCourse(m, owner)
    const assistant = await staffMember(c, "assistant", { runUuid: c.run })
    const analyst = await staffMember(c, "analyst")
    const otherRun = await addRun(m, owner, c.uuid)
    const outsider = await staffMember(c, "assistant", { runUuid: otherRun })
    const a = await learnerOf(c)
    const b = await learnerOf(c)
    const staffOpen = (actor: SessionActor, enrollment: string, course = c.uuid, extra: Record<string, unknown> = {}) =>
      m.invoke("learning.community.staff_create", actor, {
        path: { course, enrollment },
        payload: command({ title: "Напоминание", body: "Сдайте, пожалуйста, задание", ...extra })
      })
    const thread = ok<Thread>(await staffOpen(assistant, a.enrollment, c.uuid, { nodeKey: "s1" }))
    expect([thread.status, thread.visibility, thread.authorRole, thread.awaitingStaff, thread.enrollmentUuid]).toEqual(["open", "private", "staff", false, a.enrollment])
    const [created] = await events(thread.uuid)
    expect(created!.context.audience).toContain(a.profile.profileUuid)
    expect(ok<Thread>(await get(a.profile, thread.uuid)).messages![0]!.body).toBe("Сдайте, пожалуйста, задание")
    // The learner is not its author: resolving is for staff.
    expect(refused(await resolve(a.profile, thread.uuid, thread.revision))).toEqual([403, "forbidden"])
    // Not community staff, not in scope, a learner, a stranger; the visibility field is not an input here.
    expect(refused(await staffOpen(analyst, a.enrollment))).toEqual([403, "forbidden"])
    expect(refused(await staffOpen(outsider, a.enrollment))).toEqual([403, "forbidden"])
    expect(refused(await staffOpen(b.profile, a.enrollment))).toEqual([403, "forbidden"])
    expect(refused(await staffOpen(stranger, a.enrollment))).toEqual([404, "not_found"])
    expect(refused(await staffOpen(owner, a.enrollment, c.uuid, { visibility: "run" }))).toEqual([400, "invalid_request"])
    // An enrollment of another course is not found here.
    const c2 = await publishedCourse(m, owner)
    const foreign = await learnerOf(c2)
    expect(refused(await staffOpen(owner, foreign.enrollment))).toEqual([404, "not_found"])
    // Run-scoped community staff learn that much too (404), not more; without community_staff anywhere, 403 first.
    expect(refused(await staffOpen(outsider, foreign.enrollment))).toEqual([404, "not_found"])
    expect(refused(await staffOpen(analyst, foreign.enrollment))).toEqual([403, "forbidden"])
    expect(refused(await staffOpen(owner, randomUUID()))).toEqual([404, "not_found"])
  })

  it("the inbox filters unanswered / open / resolved, by run and by node; run-scoped staff see their run only", async () => {
    const c = await publishedCourse(m, owner)
    const otherRun = await addRun(m, owner, c.uuid)
    const assistant = await staffMember(c, "assistant", { runUuid: c.run })
    const reviewer = await staffMember(c, "reviewer", { runUuid: otherRun })
    const analyst = await staffMember(c, "analyst")
    const a = await learnerOf(c)
    const other = await m.profile()
    const otherEnrollment = await enrollDirectly(m, { uuid: c.uuid, run: otherRun }, other)

    const unanswered = ok<Thread>(await open(a, { title: "Без ответа", nodeKey: "s1" }))
    const answered = ok<Thread>(await open(a, { title: "С ответом" }))
    ok(await reply(assistant, answered.uuid))
    const resolved = ok<Thread>(await open(a, { title: "Решено" }))
    ok(await resolve(a.profile, resolved.uuid, resolved.revision))
    const staffOpened = ok<Thread>(await m.invoke("learning.community.staff_create", assistant, {
      path: { course: c.uuid, enrollment: a.enrollment },
      payload: command({ title: "От ассистента", body: "Как дела?" })
    }))
    const elsewhere = ok<Thread>(await open({ profile: other, enrollment: otherEnrollment }, { title: "Другой поток" }))

    const uuids = async (actor: SessionActor, params: Record<string, string> = {}) =>
      ok<Page<Thread>>(await inbox(actor, c, params)).items.map((t) => t.uuid)
    expect(await uuids(owner)).toEqual([elsewhere.uuid, staffOpened.uuid, resolved.uuid, answered.uuid, unanswered.uuid])
    expect(await uuids(owner, { status: "unanswered" })).toEqual([elsewhere.uuid, unanswered.uuid])
    expect(await uuids(owner, { status: "open" })).toEqual([elsewhere.uuid, staffOpened.uuid, answered.uuid, unanswered.uuid])
    expect(await uuids(owner, { status: "resolved" })).toEqual([resolved.uuid])
    expect(await uuids(owner, { runUuid: otherRun })).toEqual([elsewhere.uuid])
    expect(await uuids(owner, { nodeKey: "s1" })).toEqual([unanswered.uuid])
    expect(refused(await inbox(owner, c, { status: "answered" }))).toEqual([400, "invalid_request"])
    // Run-scoped staff: their run, without naming it; naming another run is refused.
    expect(await uuids(assistant)).toEqual([staffOpened.uuid, resolved.uuid, answered.uuid, unanswered.uuid])
    expect(await uuids(reviewer, { status: "unanswered" })).toEqual([elsewhere.uuid])
    expect(refused(await inbox(assistant, c, { runUuid: otherRun }))).toEqual([403, "forbidden"])
    expect(refused(await inbox(analyst, c))).toEqual([403, "forbidden"])
    expect(refused(await inbox(a.profile, c))).toEqual([403, "forbidden"])
    expect(refused(await inbox(stranger, c))).toEqual([404, "not_found"])
    // Pages of 2, newest first, no repeats.
    const first = ok<Page<Thread>>(await inbox(owner, c, { limit: "2" }))
    const second = ok<Page<Thread>>(await inbox(owner, c, { limit: "2", cursor: first.nextCursor! }))
    const third = ok<Page<Thread>>(await inbox(owner, c, { limit: "2", cursor: second.nextCursor! }))
    expect([...first.items, ...second.items, ...third.items].map((t) => t.uuid)).toEqual(await uuids(owner))
    expect(third.nextCursor).toBeUndefined()
    expect(refused(await inbox(owner, c, { limit: "101" }))).toEqual([400, "invalid_request"])
    expect(refused(await inbox(owner, c, { limit: "0" }))).toEqual([400, "invalid_request"])
  })

  it("recipients: a learner gets the community staff of their run; staff the learners in their scope", async () => {
    const c = await publishedCourse(m, owner)
    const otherRun = await addRun(m, owner, c.uuid)
    const assistant = await staffMember(c, "assistant", { runUuid: c.run }, "Ассистент")
    const reviewer = await staffMember(c, "reviewer", { runUuid: otherRun }, "Рецензент")
    const analyst = await staffMember(c, "analyst")
    const a = await learnerOf(c, { name: "Анна" })
    const other = await m.profile({ name: "Олег" })
    const otherEnrollment = await enrollDirectly(m, { uuid: c.uuid, run: otherRun }, other)
    await enrollDirectly(m, c, await m.profile(), "withdrawn")

    const recipients = async (actor: SessionActor, urlParams: Record<string, string> = {}) =>
      ok<Page<Recipient>>(await m.invoke("learning.community.recipients", actor, { path: { course: c.uuid }, urlParams })).items
    expect((await recipients(a.profile)).map((r) => [r.name, r.role]).sort()).toEqual([["Ассистент", "assistant"], ["Владелец", "owner"]])
    expect((await recipients(a.profile, { q: "асс" })).map((r) => r.name)).toEqual(["Ассистент"])
    expect(await recipients(a.profile, { runUuid: otherRun })).toEqual([])
    expect((await recipients(other)).map((r) => r.name).sort()).toEqual(["Владелец", "Рецензент"])
    expect((await recipients(owner)).map((r) => [r.name, r.role, r.enrollmentUuid]).sort())
      .toEqual([["Анна", "learner", a.enrollment], ["Олег", "learner", otherEnrollment]])
    expect((await recipients(assistant)).map((r) => r.name)).toEqual(["Анна"])
    expect((await recipients(reviewer)).map((r) => r.name)).toEqual(["Олег"])
    expect((await recipients(owner, { runUuid: otherRun, q: "Оле" })).map((r) => r.name)).toEqual(["Олег"])
    expect(refused(await m.invoke("learning.community.recipients", assistant, { path: { course: c.uuid }, urlParams: { runUuid: otherRun } })))
      .toEqual([403, "forbidden"])
    expect(refused(await m.invoke("learning.community.recipients", analyst, { path: { course: c.uuid } }))).toEqual([403, "forbidden"])
    expect(refused(await m.invoke("learning.community.recipients", stranger, { path: { course: c.uuid } }))).toEqual([404, "not_found"])
    // Pages of one, in a stable order.
    const first = ok<Page<Recipient>>(await m.invoke("learning.community.recipients", owner, { path: { course: c.uuid }, urlParams: { limit: "1" } }))
    const second = ok<Page<Recipient>>(await m.invoke("learning.community.recipients", owner, {
      path: { course: c.uuid },
      urlParams: { limit: "1", cursor: first.nextCursor! }
    }))
    expect([first.items.length, second.items.length, second.nextCursor, first.items[0]!.name !== second.items[0]!.name]).toEqual([1, 1, undefined, true])
  })
})

describe("learning community: every operation × every role", () => {
  it("answers each kind of caller as the design says (anonymous callers and keys: the HTTP authorization matrix)", async () => {
    const c = await publishedCourse(m, owner)
    const roles = {
      instructor: await staffMember(c, "instructor"),
      reviewer: await staffMember(c, "reviewer"),
      assistant: await staffMember(c, "assistant"),
      analyst: await staffMember(c, "analyst")
    }
    const a = await learnerOf(c)
    const b = await learnerOf(c)
    const callers = { learner: a.profile, otherLearner: b.profile, stranger, owner, ...roles }
    type Who = keyof typeof callers
    const staffOk = { owner: 200, instructor: 200, reviewer: 200, assistant: 200 } as const
    const expected: Record<string, Record<Who, number>> = {
      "learning.community.create": { learner: 200, otherLearner: 404, stranger: 404, owner: 404, instructor: 404, reviewer: 404, assistant: 404, analyst: 404 },
      "learning.community.list": { learner: 200, otherLearner: 404, stranger: 404, owner: 404, instructor: 404, reviewer: 404, assistant: 404, analyst: 404 },
      "learning.community.get": { learner: 200, otherLearner: 404, stranger: 404, ...staffOk, analyst: 404 },
      "learning.community.reply": { learner: 200, otherLearner: 404, stranger: 404, ...staffOk, analyst: 404 },
      "learning.community.resolve": { learner: 200, otherLearner: 404, stranger: 404, ...staffOk, analyst: 404 },
      "learning.community.recipients": { learner: 200, otherLearner: 200, stranger: 404, ...staffOk, analyst: 403 },
      "learning.community.staff_create": { learner: 403, otherLearner: 403, stranger: 404, ...staffOk, analyst: 403 },
      "learning.community.staff_list": { learner: 403, otherLearner: 403, stranger: 404, ...staffOk, analyst: 403 }
    }
    const call = async (operation: string, caller: SessionActor) => {
      const thread = ok<Thread>(await open(a))
      const inputs: Record<string, { path: Record<string, string>; payload?: object; urlParams?: Record<string, string> }> = {
        "learning.community.create": { path: { enrollment: a.enrollment }, payload: command({ title: "Т", body: "Б", visibility: "private" }) },
        "learning.community.list": { path: { enrollment: a.enrollment } },
        "learning.community.get": { path: { thread: thread.uuid } },
        "learning.community.reply": { path: { thread: thread.uuid }, payload: command({ body: "Б" }) },
        "learning.community.resolve": { path: { thread: thread.uuid }, payload: command({ expectedRevision: thread.revision }) },
        "learning.community.recipients": { path: { course: c.uuid } },
        "learning.community.staff_create": { path: { course: c.uuid, enrollment: a.enrollment }, payload: command({ title: "Т", body: "Б" }) },
        "learning.community.staff_list": { path: { course: c.uuid } }
      }
      return (await m.invoke(operation, caller, inputs[operation]!)).status
    }
    expect(await roleMatrix(Object.keys(expected), callers, call)).toEqual(expected)
  })
})

describe("learning community: bounds", () => {
  it("title 1–160, body 1–5000, at most 20 files, each a ready file of the caller", async () => {
    const c = await publishedCourse(m, owner)
    const a = await learnerOf(c)
    expect(ok<Thread>(await open(a, { title: "т".repeat(160) })).title).toHaveLength(160)
    expect(refused(await open(a, { title: "т".repeat(161) }))).toEqual([400, "invalid_request"])
    expect(refused(await open(a, { title: "" }))).toEqual([400, "invalid_request"])
    const thread = ok<Thread>(await open(a, { body: "б".repeat(5000) }))
    expect(thread.messages![0]!.body).toHaveLength(5000)
    expect(refused(await open(a, { body: "б".repeat(5001) }))).toEqual([400, "invalid_request"])
    expect(ok<ThreadMessage>(await reply(a.profile, thread.uuid, { body: "б".repeat(5000) })).body).toHaveLength(5000)
    expect(refused(await reply(a.profile, thread.uuid, { body: "б".repeat(5001) }))).toEqual([400, "invalid_request"])
    expect(refused(await reply(a.profile, thread.uuid, { body: "" }))).toEqual([400, "invalid_request"])

    const file = async (profile: SessionActor, status = "ready") =>
      only(await m.sql<{ uuid: string }>(
        `INSERT INTO files (profile_uuid, purpose, name, mime_type, size, status, upload_token_hash, upload_expires_at)
         VALUES ($1, 'publication_file', 'a.pdf', 'application/pdf', 10, $2, 'x', now()) RETURNING uuid`,
        profile.profileUuid, status
      )).uuid
    const mine = await Promise.all(Array.from({ length: 21 }, () => file(a.profile)))
    const twenty = ok<ThreadMessage>(await reply(a.profile, thread.uuid, { fileUuids: mine.slice(0, 20) }))
    expect(twenty.fileUuids).toEqual(mine.slice(0, 20))
    expect(refused(await reply(a.profile, thread.uuid, { fileUuids: mine }))).toEqual([400, "invalid_request"])
    expect(refused(await reply(a.profile, thread.uuid, { fileUuids: [mine[0], await file(owner)] }))).toEqual([400, "invalid_reference"])
    expect(refused(await reply(a.profile, thread.uuid, { fileUuids: [await file(a.profile, "pending")] }))).toEqual([400, "invalid_reference"])
    // Nothing of a refused reply is kept.
    expect(ok<Thread>(await get(a.profile, thread.uuid)).messageCount).toBe(3)

    // Messages page oldest first.
    const firstPage = ok<Thread>(await get(a.profile, thread.uuid, { limit: "2" }))
    const rest = ok<Thread>(await get(a.profile, thread.uuid, { limit: "2", cursor: firstPage.nextMessagesCursor! }))
    expect([firstPage.messages!.length, rest.messages!.length, rest.nextMessagesCursor]).toEqual([2, 1, undefined])
    expect(bodyOf<Thread>(await get(a.profile, thread.uuid, { limit: "100" })).messages).toHaveLength(3)
    expect(refused(await get(a.profile, thread.uuid, { limit: "101" }))).toEqual([400, "invalid_request"])
  })
})

describe("learning community in the OpenAPI document", () => {
  it("declares the spec's scopes and approval flags", async () => {
    const { openApiDocument } = await import("../../api/BirzhaApi.js")
    const doc = JSON.parse(JSON.stringify(openApiDocument())) as {
      paths: Record<string, Record<string, { "x-scopes": Array<string>; "x-approval": boolean }>>
    }
    const op = (path: string, method: string) => doc.paths[`/api/v1/learning${path}`]![method]!
    expect([
      op("/enrollments/{enrollment}/threads", "post")["x-scopes"],
      op("/threads/{thread}/messages", "post")["x-scopes"],
      op("/threads/{thread}/resolve", "post")["x-scopes"],
      op("/courses/{course}/enrollments/{enrollment}/threads", "post")["x-scopes"],
      op("/courses/{course}/threads", "get")["x-scopes"],
      op("/courses/{course}/message-recipients", "get")["x-scopes"]
    ]).toEqual([
      ["learning:study"],
      ["learning:study", "learning:teach"],
      ["learning:study", "learning:teach"],
      ["learning:teach"],
      ["learning:read"],
      ["learning:read"]
    ])
    expect(op("/threads/{thread}/messages", "post")["x-approval"]).toBe(false)
  })
})
