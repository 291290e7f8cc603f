import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addRun, command, enrollDirectly, publishedCourse, type TestCourse } from "../../../test/learning.js"
import { type Marketplace, okBody as ok, openMarketplace, refusal as refused } from "../../../test/marketplace.js"
import type { SessionActor } from "../../kernel/Authentication.js"
import type { StaffAssignment } from "../staff/StaffModel.js"
import type { TeachingCounts, TeachingCourse } from "./TeachingModel.js"

/**
 * Teaching dashboards through `Operations.invoke` on real Postgres: the courses
 * where the caller is active staff, and one course's to-do counts, each narrowed to what the
 * caller's role and scope may act on, each agreeing with the list operation showing those records.
 * The waiting records are written directly (their own operations are tested in their modules).
 */

let m: Marketplace
let owner: SessionActor

beforeAll(async () => {
  m = await openMarketplace("learnteaching")
  owner = await m.profile({ name: "Владелец" })
})
afterAll(async () => {
  await m?.close()
})

type Page<T> = { items: Array<T>; nextCursor?: string }

/** A profile that accepted a staff role on the course. */
const staffMember = async (c: TestCourse, role: string, scope: Record<string, string> = {}, extra: Record<string, unknown> = {}, profile?: SessionActor) => {
  const who = profile ?? await m.profile()
  const invited = ok<StaffAssignment>(await m.invoke("learning.staff.assign", owner, {
    path: { course: c.uuid },
    payload: command({ profileUuid: who.profileUuid, role, scope, ...extra })
  }))
  ok(await m.invoke("learning.staff.accept", who, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) }))
  return Object.assign(who, { assignmentUuid: invited.uuid })
}

const dashboard = (actor: SessionActor, c: { readonly uuid: string }) => m.invoke("learning.teaching.get", actor, { path: { course: c.uuid } })
const counts = async (actor: SessionActor, c: { readonly uuid: string }) => ok<TeachingCourse>(await dashboard(actor, c)).counts

/** What one run holds waiting, record by record. */
interface Work {
  readonly pooled: number
  readonly peerPooled: number
  readonly claimedBy: ReadonlyArray<string>
  readonly decided: number
  readonly appeals: ReadonlyArray<"open" | "resolved" | "escalated" | "closed">
  readonly threads: ReadonlyArray<readonly ["open" | "answered" | "resolved", "learner" | "staff"]>
  readonly extensions: ReadonlyArray<"requested" | "approved" | "denied" | "expired">
  readonly incidents: ReadonlyArray<"open" | "resolved">
}

/** Writes a run's waiting records: one learner's submissions carry the review assignments and appeals. */
const seedRun = async (c: TestCourse, run: string, work: Work) => {
  const learner = await m.profile()
  const enrollment = await enrollDirectly(m, { uuid: c.uuid, run }, learner)
  let attempt = 0
  const submission = async () => {
    const uuid = randomUUID()
    attempt += 1
    await m.sql(
      `INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, attempt_no, reply, status)
       VALUES ($1, $2, $3, $4, $5, 's1', 1, $6, '{}', 'awaiting_review')`,
      uuid, enrollment, c.uuid, run, learner.profileUuid, attempt
    )
    return uuid
  }
  const assignment = async (kind: string, status: string, reviewer: string | null) =>
    m.sql(
      `INSERT INTO learning_review_assignments (uuid, submission_uuid, course_uuid, run_uuid, node_key, learner_profile_uuid, pseudonym, kind, status, reviewer_profile_uuid)
       VALUES ($1, $2, $3, $4, 's1', $5, 'Учащийся', $6, $7, $8)`,
      randomUUID(), await submission(), c.uuid, run, learner.profileUuid, kind, status, reviewer
    )
  for (let i = 0; i < work.pooled; i++) await assignment("staff", "pooled", null)
  for (let i = 0; i < work.peerPooled; i++) await assignment("peer", "pooled", null)
  for (const reviewer of work.claimedBy) await assignment("staff", "claimed", reviewer)
  for (let i = 0; i < work.decided; i++) await assignment("staff", "decided", owner.profileUuid)
  for (const status of work.appeals) {
    await m.sql(
      `INSERT INTO learning_appeals (uuid, submission_uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, node_key, reason, initial_points, status)
       VALUES ($1, $2, $3, $4, $5, $6, 's1', 'Прошу пересмотреть', 1, $7)`,
      randomUUID(), await submission(), c.uuid, run, enrollment, learner.profileUuid, status
    )
  }
  for (const [status, last] of work.threads) {
    await m.sql(
      `INSERT INTO learning_threads (uuid, course_uuid, run_uuid, enrollment_uuid, learner_profile_uuid, author_profile_uuid, author_role, visibility, title, status, last_author_role)
       VALUES ($1, $2, $3, $4, $5, $5, 'learner', 'private', 'Вопрос', $6, $7)`,
      randomUUID(), c.uuid, run, enrollment, learner.profileUuid, status, last
    )
  }
  for (const status of work.extensions) {
    await m.sql(
      `INSERT INTO learning_extension_requests (uuid, course_uuid, run_uuid, enrollment_uuid, profile_uuid, original_due_at, requested_due_at, reason, status)
       VALUES ($1, $2, $3, $4, $5, now() + interval '1 day', now() + interval '3 days', 'Болел', $6)`,
      randomUUID(), c.uuid, run, enrollment, learner.profileUuid, status
    )
  }
  for (const status of work.incidents) {
    await m.sql(
      `INSERT INTO learning_incidents (uuid, course_uuid, run_uuid, kind, window_from, window_to, description, status, created_by)
       VALUES ($1, $2, $3, 'platform_outage', now() - interval '2 hours', now() - interval '1 hour', 'Сбой', $4, $5)`,
      randomUUID(), c.uuid, run, status, owner.profileUuid
    )
  }
  return enrollment
}

const checker = (c: TestCourse, status: string, errorStreak: number) =>
  m.sql(
    `INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, rules, status, error_streak) VALUES ($1, $2, $3, 'declarative', '{"kind": "exact", "answers": ["42"]}', $4, $5)`,
    randomUUID(), c.uuid, randomUUID(), status, errorStreak
  )

/** A course with two runs of waiting work (the second run smaller) and three checkers; `reviewer` holds claims in both runs. */
const busyCourse = async () => {
  const c = await publishedCourse(m, owner)
  const second = await addRun(m, owner, c.uuid)
  const reviewer = await staffMember(c, "reviewer")
  const first = await seedRun(c, c.run, {
    pooled: 3,
    peerPooled: 2,
    claimedBy: [reviewer.profileUuid, owner.profileUuid],
    decided: 1,
    appeals: ["open", "open", "escalated", "resolved", "closed"],
    threads: [["open", "learner"], ["open", "learner"], ["open", "staff"], ["answered", "staff"], ["resolved", "learner"]],
    extensions: ["requested", "requested", "approved", "denied"],
    incidents: ["open", "resolved"]
  })
  const other = await seedRun(c, second, {
    pooled: 2,
    peerPooled: 0,
    claimedBy: [reviewer.profileUuid],
    decided: 0,
    appeals: ["open"],
    threads: [["open", "learner"]],
    extensions: ["requested"],
    incidents: ["open"]
  })
  await checker(c, "suspended", 5)
  await checker(c, "ready", 2)
  await checker(c, "ready", 0)
  await checker(c, "superseded", 1)
  return { c, second, reviewer, enrollments: [first, other] as const }
}

describe("learning teaching: one course's dashboard", () => {
  it("shows the owner every count of the course, and the sum as todo", async () => {
    const { c } = await busyCourse()
    const view = ok<TeachingCourse>(await dashboard(owner, c))
    expect([view.courseUuid, view.courseTitle, view.courseStatus, view.roles, view.assignments.map((a) => [a.role, a.scope])])
      .toEqual([c.uuid, "Курс команды", "published", ["owner"], [["owner", {}]]])
    expect(view.counts).toEqual({
      reviewsToClaim: 5,
      reviewsClaimed: 1,
      appealsOpen: 3,
      threadsUnanswered: 3,
      extensionsPending: 3,
      incidentsOpen: 2,
      checkersSuspended: 1,
      checkersFailing: 1
    } satisfies TeachingCounts)
    expect(view.todo).toBe(19)
  })

  it("narrows the counts to the atoms of the caller's role: reviewer, assistant, analyst, and grants and denies", async () => {
    const { c, reviewer } = await busyCourse()
    expect(await counts(reviewer, c)).toEqual({ reviewsToClaim: 5, reviewsClaimed: 2, appealsOpen: 3, threadsUnanswered: 3 })
    expect(await counts(await staffMember(c, "assistant"), c)).toEqual({ threadsUnanswered: 3, extensionsPending: 3 })
    const analyst = ok<TeachingCourse>(await dashboard(await staffMember(c, "analyst"), c))
    expect([analyst.counts, analyst.todo, analyst.roles]).toEqual([{}, 0, ["analyst"]])
    expect(analyst.rights).toEqual(["analytics_read", "audit_read"])
    expect(ok<TeachingCourse>(await dashboard(reviewer, c)).rights).toEqual(["review", "appeals_resolve", "grades_release", "community_staff"])
    const granted = ok<TeachingCourse>(await dashboard(await staffMember(c, "assistant", {}, { grants: ["grades_adjust"], denies: ["community_staff"] }), c))
    expect(granted.rights).toEqual(["roster_manage", "dates_grant", "grades_adjust"])
    expect(await counts(await staffMember(c, "analyst", {}, { grants: ["checkers_manage"] }), c)).toEqual({ checkersSuspended: 1, checkersFailing: 1 })
    expect(Object.keys(await counts(await staffMember(c, "instructor", {}, { denies: ["review", "community_staff"] }), c)).sort())
      .toEqual(["appealsOpen", "checkersFailing", "checkersSuspended", "extensionsPending", "incidentsOpen"])
  })

  it("counts only the runs of run-scoped staff; course-level checkers need a course-wide assignment", async () => {
    const { c, second } = await busyCourse()
    const instructor = await staffMember(c, "instructor", { runUuid: second })
    expect(await counts(instructor, c)).toEqual({ reviewsToClaim: 2, reviewsClaimed: 0, appealsOpen: 1, threadsUnanswered: 1, extensionsPending: 1, incidentsOpen: 1 })
    // A second assignment on the first run widens the scope to both runs, counting each record once.
    const both = await staffMember(c, "assistant", { runUuid: c.run }, {}, await staffMember(c, "assistant", { runUuid: second }))
    const view = ok<TeachingCourse>(await dashboard(both, c))
    expect([view.counts, view.roles, view.assignments.map((a) => a.scope.runUuid).sort()])
      .toEqual([{ threadsUnanswered: 3, extensionsPending: 3 }, ["assistant"], [c.run, second].sort()])
  })

  it("counts the records of a group-scoped caller's members once, in two groups or beside a run scope, as its lists show them", async () => {
    const { c, enrollments, second } = await busyCourse()
    const group = async (run: string, members: ReadonlyArray<string>) => {
      const uuid = randomUUID()
      await m.sql(`INSERT INTO learning_groups (uuid, course_uuid, run_uuid, name, kind, visibility, assignment, member_count, created_by)
        VALUES ($1, $2, $3, 'Группа', 'section', 'separate', 'manual', $4, $5)`, uuid, c.uuid, run, members.length, owner.profileUuid)
      for (const member of members) await m.sql(`INSERT INTO learning_group_members (group_uuid, enrollment_uuid) VALUES ($1, $2)`, uuid, member)
      return uuid
    }
    // The first run's learner is in two groups; the second run's group has no member with waiting work.
    const [a, b, empty] = [await group(c.run, [enrollments[0]]), await group(c.run, [enrollments[0]]), await group(second, [])]
    const instructor = await staffMember(c, "instructor", { groupUuid: a }, {}, await staffMember(c, "instructor", { groupUuid: b }))
    // Each record of the learner once; incidents concern a run, not a learner: no count for a group scope.
    const expected = { reviewsToClaim: 3, reviewsClaimed: 0, appealsOpen: 2, threadsUnanswered: 2, extensionsPending: 2 }
    expect(await counts(instructor, c)).toEqual(expected)
    const items = async (operation: string, path: Record<string, string>, urlParams: Record<string, string>) =>
      ok<Page<{ kind?: string }>>(await m.invoke(operation, instructor, { path, urlParams: { ...urlParams, limit: "100" } })).items
    const course = { course: c.uuid }
    expect({
      reviewsToClaim: (await items("learning.reviews.assignment_list", course, { status: "pooled" })).filter((a) => a.kind === "staff").length,
      reviewsClaimed: 0,
      appealsOpen: (await items("learning.appeals.list", course, { status: "open" })).length,
      threadsUnanswered: (await items("learning.community.staff_list", course, { status: "unanswered" })).length,
      extensionsPending: (await items("learning.extensions.course_list", course, { status: "requested" })).length
    }).toEqual(expected)
    // A run scope beside a group of that run and the empty group: the first run's records once.
    const mixed = await staffMember(c, "assistant", { runUuid: c.run }, {}, await staffMember(c, "assistant", { groupUuid: a }, {}, await staffMember(c, "assistant", { groupUuid: empty })))
    expect(await counts(mixed, c)).toEqual({ threadsUnanswered: 2, extensionsPending: 2 })
    const onlyEmpty = await staffMember(c, "assistant", { groupUuid: empty })
    expect(await counts(onlyEmpty, c)).toEqual({ threadsUnanswered: 0, extensionsPending: 0 })
  })

  it("agrees with the list operations showing the same records", async () => {
    const { c, second } = await busyCourse()
    const items = async <T>(operation: string, path: Record<string, string>, urlParams: Record<string, string>) =>
      ok<Page<T>>(await m.invoke(operation, owner, { path, urlParams: { ...urlParams, limit: "100" } })).items
    const course = { course: c.uuid }
    const view = await counts(owner, c)
    const pooled = await items<{ kind: string }>("learning.reviews.assignment_list", course, { status: "pooled" })
    const mine = await items<{ kind: string }>("learning.reviews.assignment_list", course, { status: "claimed", mine: "true" })
    const incidents = [
      ...await items("learning.incidents.list", { run: c.run }, { status: "open" }),
      ...await items("learning.incidents.list", { run: second }, { status: "open" })
    ]
    const checkers = await items<{ status: string; errorStreak: number }>("learning.checkers.list", course, {})
    expect(view).toEqual({
      reviewsToClaim: pooled.filter((a) => a.kind === "staff").length,
      reviewsClaimed: mine.length,
      appealsOpen: (await items("learning.appeals.list", course, { status: "open" })).length,
      threadsUnanswered: (await items("learning.community.staff_list", course, { status: "unanswered" })).length,
      extensionsPending: (await items("learning.extensions.course_list", course, { status: "requested" })).length,
      incidentsOpen: incidents.length,
      checkersSuspended: checkers.filter((k) => k.status === "suspended").length,
      checkersFailing: checkers.filter((k) => k.status === "ready" && k.errorStreak > 0).length
    })
  })

  it("refuses who holds no active assignment: 404 where the course is hidden from them, 403 where they may see it", async () => {
    const c = await publishedCourse(m, owner)
    expect(refused(await dashboard(await m.profile(), c))).toEqual([404, "not_found"])
    expect(refused(await dashboard(owner, { uuid: randomUUID() }))).toEqual([404, "not_found"])
    const learner = await m.profile()
    await enrollDirectly(m, c, learner)
    expect(refused(await dashboard(learner, c))).toEqual([403, "forbidden"])
    const listed = await publishedCourse(m, owner, "unlisted")
    expect(refused(await dashboard(await m.profile(), listed))).toEqual([403, "forbidden"])
    // Invited but not accepted, then revoked: no dashboard either.
    const invitee = await m.profile()
    const invited = ok<StaffAssignment>(await m.invoke("learning.staff.assign", owner, {
      path: { course: c.uuid },
      payload: command({ profileUuid: invitee.profileUuid, role: "reviewer", scope: {} })
    }))
    expect(refused(await dashboard(invitee, c))).toEqual([404, "not_found"])
    ok(await m.invoke("learning.staff.accept", invitee, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) }))
    ok(await dashboard(invitee, c))
    ok(await m.invoke("learning.staff.revoke", owner, {
      path: { course: c.uuid },
      payload: command({ assignmentUuid: invited.uuid, expectedRevision: 2, reason: "Ушёл" })
    }))
    expect(refused(await dashboard(invitee, c))).toEqual([404, "not_found"])
  })
})

describe("learning teaching: the caller's courses", () => {
  it("lists the courses of the caller's active assignments, newest first, page by page, with each course's counts", async () => {
    const teacher = await m.profile()
    const { c: busy, reviewer } = await busyCourse()
    await staffMember(busy, "assistant", {}, {}, teacher)
    const quiet = await publishedCourse(m, owner)
    await staffMember(quiet, "reviewer", {}, {}, teacher)
    const elsewhere = await publishedCourse(m, owner)
    const invited = ok<StaffAssignment>(await m.invoke("learning.staff.assign", owner, {
      path: { course: elsewhere.uuid },
      payload: command({ profileUuid: teacher.profileUuid, role: "reviewer", scope: {} })
    }))
    expect(invited.status).toBe("invited")

    const all = ok<Page<TeachingCourse>>(await m.invoke("learning.teaching.list", teacher, { urlParams: {} }))
    expect(all.items.map((item) => [item.courseUuid, item.roles, item.counts])).toEqual([
      [quiet.uuid, ["reviewer"], { reviewsToClaim: 0, reviewsClaimed: 0, appealsOpen: 0, threadsUnanswered: 0 }],
      [busy.uuid, ["assistant"], { threadsUnanswered: 3, extensionsPending: 3 }]
    ])
    // Each item is the course's dashboard.
    expect(all.items[1]).toEqual(ok<TeachingCourse>(await dashboard(teacher, busy)))

    const first = ok<Page<TeachingCourse>>(await m.invoke("learning.teaching.list", teacher, { urlParams: { limit: "1" } }))
    expect(first.items.map((item) => item.courseUuid)).toEqual([quiet.uuid])
    const rest = ok<Page<TeachingCourse>>(await m.invoke("learning.teaching.list", teacher, { urlParams: { limit: "1", cursor: first.nextCursor! } }))
    expect([rest.items.map((item) => item.courseUuid), rest.nextCursor]).toEqual([[busy.uuid], undefined])

    const asAssistant = ok<Page<TeachingCourse>>(await m.invoke("learning.teaching.list", teacher, { urlParams: { role: "assistant" } }))
    expect(asAssistant.items.map((item) => item.courseUuid)).toEqual([busy.uuid])
    const reviewerList = ok<Page<TeachingCourse>>(await m.invoke("learning.teaching.list", reviewer, { urlParams: {} }))
    expect(reviewerList.items.map((item) => [item.courseUuid, item.todo])).toEqual([[busy.uuid, 13]])
    expect(ok<Page<TeachingCourse>>(await m.invoke("learning.teaching.list", await m.profile(), { urlParams: {} })).items).toEqual([])
    expect(refused(await m.invoke("learning.teaching.list", teacher, { urlParams: { role: "learner" } }))).toEqual([400, "invalid_request"])
  })
})
