import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { command, enrollDirectly, publishedCourse } from "../../../test/learning.js"
import { bodyOf, codeOf, type Marketplace, okBody, openMarketplace, refusal } from "../../../test/marketplace.js"
import type { KeyActor, SessionActor } from "../../kernel/Authentication.js"
import type { MailMessage } from "../../mail/Mailer.js"
import type { Answer } from "../../operations/Operations.js"
import { eligibility } from "../community/CourseReviews.js"
import { emailTransitions } from "./EmailInvitations.js"
import { ownershipTransitions } from "./Ownership.js"
import { staffTransitions } from "./Staff.js"
import type { CourseReview, EmailInvitation, OwnershipInvitation, StaffAssignment } from "./StaffModel.js"

/**
 * The people side of learning through `Operations.invoke` on real
 * Postgres: staff assignment and its state machine, email invitations (token mailed, usable once,
 * only by the verified addressee, never in answers, rows or logs), ownership transfer (exactly one
 * owner, even with acceptances racing) and course reviews (eligibility, bounds, summary).
 */

let m: Marketplace
let owner: SessionActor
let stranger: SessionActor
const mails: Array<MailMessage> = []
const logs: Array<string> = []

beforeAll(async () => {
  m = await openMarketplace("learnstaff", { mail: (message) => mails.push(message), log: (line) => logs.push(line) })
  owner = await m.profile({ name: "Владелец" })
  stranger = await m.profile({ name: "Прохожий" })
})
afterAll(async () => {
  await m?.close()
})

const ok = okBody
const refused = refusal
/** A published private course of `owner` with one draft run. */
const course = (visibility: "private" | "unlisted" = "private") => publishedCourse(m, owner, visibility)

const enroll = (c: { uuid: string; run: string }, learner: SessionActor, status = "active", started = true) => enrollDirectly(m, c, learner, status, started)

const assign = (c: { uuid: string }, profile: SessionActor, extra: Record<string, unknown> = {}, actor: SessionActor = owner) =>
  m.invoke("learning.staff.assign", actor, { path: { course: c.uuid }, payload: command({ profileUuid: profile.profileUuid, role: "reviewer", scope: {}, ...extra }) })

const owners = async (courseUuid: string) =>
  (await m.sql<{ profile_uuid: string }>("SELECT profile_uuid FROM learning_staff WHERE course_uuid = $1 AND role = 'owner' AND status = 'active'", courseUuid))
    .map((row) => row.profile_uuid)

describe("learning staff: assign, accept, revoke, permissions", () => {
  it("invites a profile, which sees and accepts the invitation; every change is audited", async () => {
    const c = await course()
    const reviewer = await m.profile({ name: "Рецензент" })
    const invited = ok<StaffAssignment>(await assign(c, reviewer, { role: "reviewer", scope: { runUuid: c.run }, grants: ["dates_grant"], denies: ["community_staff"] }))
    expect([invited.status, invited.role, invited.scope, invited.grants, invited.denies]).toEqual(["invited", "reviewer", { runUuid: c.run }, ["dates_grant"], ["community_staff"]])
    // Invited is not yet staff: the private course stays unknown to them.
    expect(refused(await m.invoke("learning.staff.list", reviewer, { path: { course: c.uuid } }))).toEqual([404, "not_found"])
    const mine = ok<{ items: Array<StaffAssignment> }>(await m.invoke("learning.staff.invitations", reviewer))
    expect(mine.items.map((a) => a.uuid)).toEqual([invited.uuid])
    expect(ok<{ items: Array<StaffAssignment> }>(await m.invoke("learning.staff.invitations", stranger)).items).toEqual([])
    // Only the invitee accepts: anyone else does not know the assignment.
    expect(refused(await m.invoke("learning.staff.accept", stranger, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) })))
      .toEqual([404, "not_found"])
    const active = ok<StaffAssignment>(await m.invoke("learning.staff.accept", reviewer, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) }))
    expect([active.status, active.revision]).toEqual(["active", 2])
    const list = ok<{ items: Array<StaffAssignment> }>(await m.invoke("learning.staff.list", reviewer, { path: { course: c.uuid } }))
    expect(list.items.map((a) => [a.profileUuid, a.role, a.status])).toEqual([[owner.profileUuid, "owner", "active"], [reviewer.profileUuid, "reviewer", "active"]])
    const courseWide = ok<StaffAssignment>(await assign(c, await m.profile(), { role: "analyst" }))
    const inRun = ok<{ items: Array<StaffAssignment> }>(await m.invoke("learning.staff.list", owner, { path: { course: c.uuid }, urlParams: { runUuid: c.run } }))
    expect(inRun.items.map((a) => a.uuid)).toEqual([list.items[0]!.uuid, invited.uuid, courseWide.uuid])
    const otherRun = ok<{ items: Array<StaffAssignment> }>(await m.invoke("learning.staff.list", owner, { path: { course: c.uuid }, urlParams: { runUuid: randomUUID(), role: "reviewer" } }))
    expect(otherRun.items).toEqual([])
    const audit = await m.sql<{ action: string }>("SELECT action FROM learning_audit_events WHERE subject_uuid = $1 ORDER BY created_at", invited.uuid)
    expect(audit.map((row) => row.action)).toEqual(["staff.assign", "staff.accept"])
    // A learner sees names and roles of the active staff, nothing more.
    const learner = await m.profile()
    await enroll(c, learner)
    const seen = ok<{ items: Array<StaffAssignment> }>(await m.invoke("learning.staff.list", learner, { path: { course: c.uuid } }))
    expect(seen.items.map((a) => [a.profileName, a.role, a.grants, a.scope])).toEqual([["Владелец", "owner", undefined, undefined], ["Рецензент", "reviewer", undefined, undefined]])
    // A stranger gets 404 on a private course.
    expect(refused(await m.invoke("learning.staff.list", stranger, { path: { course: c.uuid } }))).toEqual([404, "not_found"])
  })

  it("follows its transition table: every state × operation × actor, allowed exactly where the table says", async () => {
    const c = await course()
    const states = ["invited", "active", "revoked", "rejected"] as const
    const cases = [
      { operation: "learning.staff.accept", by: "assignee" },
      { operation: "learning.staff.revoke", by: "owner" },
      { operation: "learning.staff.revoke", by: "assignee" },
      { operation: "learning.staff.permissions", by: "owner" }
    ] as const
    for (const state of states) {
      for (const { by, operation } of cases) {
        const profile = await m.profile()
        const assignment = ok<StaffAssignment>(await assign(c, profile, { role: "assistant" }))
        await m.sql("UPDATE learning_staff SET status = $1 WHERE uuid = $2", state, assignment.uuid)
        const actor = by === "owner" ? owner : profile
        const answer = operation === "learning.staff.accept"
          ? await m.invoke(operation, actor, { path: { assignment: assignment.uuid }, payload: command({ expectedRevision: 1 }) })
          : operation === "learning.staff.revoke"
          ? await m.invoke(operation, actor, { path: { course: c.uuid }, payload: command({ assignmentUuid: assignment.uuid, expectedRevision: 1, reason: "Так надо" }) })
          : await m.invoke(operation, actor, { path: { course: c.uuid, assignment: assignment.uuid }, payload: command({ expectedRevision: 1, grants: ["pii_read"], denies: [] }) })
        const allowed = staffTransitions.find((t) => t.operation === operation && t.by === by && t.from === state)
        const label = `${operation} by ${by} from ${state}`
        if (allowed === undefined) {
          expect(refused(answer), label).toEqual([409, "invalid_state"])
        } else {
          expect(bodyOf<StaffAssignment>(answer).status, label).toBe(allowed.to)
          const [row] = await m.sql<{ status: string }>("SELECT status FROM learning_staff WHERE uuid = $1", assignment.uuid)
          expect(row!.status, label).toBe(allowed.to)
        }
      }
    }
  })

  it("keeps the one owner: revoking or re-permissioning the owner's assignment is owner_required", async () => {
    const c = await course()
    const [ownerRow] = await m.sql<{ uuid: string; revision: number }>("SELECT uuid, revision FROM learning_staff WHERE course_uuid = $1 AND role = 'owner'", c.uuid)
    expect(refused(await m.invoke("learning.staff.revoke", owner, {
      path: { course: c.uuid },
      payload: command({ assignmentUuid: ownerRow!.uuid, expectedRevision: ownerRow!.revision, reason: "Ухожу" })
    }))).toEqual([409, "owner_required"])
    expect(refused(await m.invoke("learning.staff.permissions", owner, {
      path: { course: c.uuid, assignment: ownerRow!.uuid },
      payload: command({ expectedRevision: ownerRow!.revision, grants: [], denies: ["content_edit"] })
    }))).toEqual([409, "owner_required"])
    expect(await owners(c.uuid)).toEqual([owner.profileUuid])
  })

  it("refuses a learner of the run (conflict_of_interest), owner-only atoms, a second invitation and non-owners", async () => {
    const c = await course()
    const learner = await m.profile()
    await enroll(c, learner)
    expect(refused(await assign(c, learner, { scope: { runUuid: c.run } }))).toEqual([403, "conflict_of_interest"])
    expect(refused(await assign(c, learner))).toEqual([403, "conflict_of_interest"])
    const other = await m.profile()
    expect(refused(await assign(c, other, { grants: ["staff_manage"] }))).toEqual([400, "invalid_request"])
    expect(refused(await assign(c, other, { denies: ["ownership"] }))).toEqual([400, "invalid_request"])
    expect(refused(await assign(c, other, { role: "owner" }))).toEqual([400, "invalid_request"])
    expect(refused(await assign(c, other, { scope: { runUuid: randomUUID() } }))).toEqual([404, "not_found"])
    expect(refused(await assign(c, other, { extra: true }))).toEqual([400, "invalid_request"])
    const first = ok<StaffAssignment>(await assign(c, other))
    expect(refused(await assign(c, other))).toEqual([409, "invalid_state"])
    expect(refused(await assign(c, owner))).toEqual([409, "invalid_state"])
    // An instructor holds no staff_manage: 403; a stranger does not know the private course: 404.
    const instructor = await m.profile()
    const invited = ok<StaffAssignment>(await assign(c, instructor, { role: "instructor" }))
    ok(await m.invoke("learning.staff.accept", instructor, { path: { assignment: invited.uuid }, payload: command({ expectedRevision: 1 }) }))
    expect(refused(await assign(c, await m.profile(), {}, instructor))).toEqual([403, "forbidden"])
    expect(refused(await assign(c, await m.profile(), {}, stranger))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.staff.revoke", instructor, {
      path: { course: c.uuid },
      payload: command({ assignmentUuid: first.uuid, expectedRevision: 1, reason: "" })
    }))).toEqual([403, "forbidden"])
    // Revoking an active reviewer: audited, its (future) review claims returned by the hook in the same transaction.
    const revoked = ok<StaffAssignment>(await m.invoke("learning.staff.revoke", owner, {
      path: { course: c.uuid },
      payload: command({ assignmentUuid: invited.uuid, expectedRevision: 2, reason: "Курс закрыт" })
    }))
    expect(revoked.status).toBe("revoked")
    const [audit] = await m.sql<{ reason: string; before: unknown; after: unknown }>(
      "SELECT reason, before, after FROM learning_audit_events WHERE subject_uuid = $1 AND action = 'staff.revoke'", invited.uuid)
    expect(audit).toEqual({ reason: "Курс закрыт", before: { status: "active" }, after: { status: "revoked", profileUuid: instructor.profileUuid, role: "instructor" } })
    // A stale revision changes nothing.
    expect(refused(await m.invoke("learning.staff.revoke", owner, {
      path: { course: c.uuid },
      payload: command({ assignmentUuid: first.uuid, expectedRevision: 5, reason: "" })
    }))).toEqual([409, "revision_conflict"])
  })

  it("suggests candidates to the owner only: own profiles, past staff, alumni, deal partners", async () => {
    const c = await course()
    const [account] = await m.sql<{ account_uuid: string }>("SELECT account_uuid FROM profiles WHERE uuid = $1", owner.profileUuid)
    const [second] = await m.sql<{ uuid: string }>(
      "INSERT INTO profiles (id, account_uuid, name, type) VALUES ($1, $2, 'Второй профиль владельца', 'Физлицо') RETURNING uuid", `p-${randomUUID()}`, account!.account_uuid)
    const alumnus = await m.profile({ name: "Выпускник" })
    await enroll(c, alumnus, "completed")
    const past = await m.profile({ name: "Бывший рецензент" })
    const earlier = await course()
    const assignment = ok<StaffAssignment>(await assign(earlier, past))
    await m.sql("UPDATE learning_staff SET status = 'revoked' WHERE uuid = $1", assignment.uuid)
    const partner = await m.profile({ name: "Партнёр по сделке" })
    const task = await m.publication(owner, "task")
    await m.sql(`WITH offer AS (
        INSERT INTO relations (kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, publication_uuid, body)
        VALUES ('offer', 'accepted', $1, $2, 'customer', $3, 'Предложение') RETURNING uuid)
      INSERT INTO relations (kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, publication_uuid, origin_relation_uuid, body)
      SELECT 'deal', 'active', $2, $1, 'contractor', $3, uuid, 'Сделка' FROM offer`, owner.profileUuid, partner.profileUuid, task)
    const found = ok<{ items: Array<{ profileUuid: string; source: string }> }>(
      await m.invoke("learning.staff.candidates", owner, { path: { course: c.uuid }, urlParams: { limit: "100" } }))
    const sources = new Map(found.items.map((item) => [item.profileUuid, item.source]))
    expect(sources.get(second!.uuid)).toBe("owner_profiles")
    expect(sources.get(past.profileUuid)).toBe("past_staff")
    expect(sources.get(alumnus.profileUuid)).toBe("alumni")
    expect(sources.get(partner.profileUuid)).toBe("deal_partners")
    expect(sources.has(owner.profileUuid)).toBe(false)
    const alumni = ok<{ items: Array<{ profileUuid: string }> }>(
      await m.invoke("learning.staff.candidates", owner, { path: { course: c.uuid }, urlParams: { source: "alumni", q: "выпуск" } }))
    expect(alumni.items.map((item) => item.profileUuid)).toEqual([alumnus.profileUuid])
    expect(refused(await m.invoke("learning.staff.candidates", stranger, { path: { course: c.uuid } }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.ownership.candidates", stranger, { path: { course: c.uuid } }))).toEqual([404, "not_found"])
    const forOwnership = ok<{ items: Array<{ profileUuid: string; source: string }> }>(
      await m.invoke("learning.ownership.candidates", owner, { path: { course: c.uuid } }))
    expect(forOwnership.items.map((item) => [item.profileUuid, item.source])).toEqual([[second!.uuid, "owner_profiles"]])
  })
})

describe("learning staff email invitations", () => {
  const invite = (c: { uuid: string }, email: string, extra: Record<string, unknown> = {}) =>
    m.invoke("learning.staff.email_invite", owner, { path: { course: c.uuid }, payload: command({ email, role: "assistant", scope: {}, ...extra }) })
  const tokenOf = (mail: MailMessage) => /#token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!

  it("mails a token that is used once, only by a profile of the verified addressee, and never shows in answers, rows or logs", async () => {
    const c = await course()
    const addressee = await m.profile({ name: "Адресат" })
    const before = mails.length
    const answers: Array<Answer> = []
    const sent = ok<EmailInvitation>(await invite(c, addressee.email.toUpperCase(), { message: "Добро пожаловать" }))
    answers.push(await invite(c, "someone@example.com"))
    expect(mails.length).toBe(before + 2)
    const mail = mails[before]!
    expect(mail.to).toBe(addressee.email)
    const token = tokenOf(mail)
    expect(token.length).toBeGreaterThanOrEqual(40)
    expect(mail.text).toContain(`/learning/staff-invitations/${sent.uuid}#token=`)
    expect([sent.status, sent.role, sent.emailHint]).toEqual(["pending", "assistant", `${addressee.email[0]}***@example.com`])
    expect(new Date(sent.expiresAt).getTime() - Date.now()).toBeGreaterThan(13.9 * 86_400_000)

    // The addressee finds it by their verified email; a stranger sees nothing of it.
    const listed = ok<{ items: Array<EmailInvitation> }>(await m.invoke("learning.staff.email_invitations", addressee))
    expect(listed.items.map((i) => i.uuid)).toEqual([sent.uuid])
    expect(ok<{ items: Array<EmailInvitation> }>(await m.invoke("learning.staff.email_invitations", stranger)).items).toEqual([])
    answers.push(await m.invoke("learning.staff.email_invitations", addressee))
    answers.push(await m.invoke("learning.staff.email_get", addressee, { path: { invitation: sent.uuid } }))
    answers.push(await m.invoke("learning.staff.email_get", owner, { path: { invitation: sent.uuid } }))
    answers.push(await m.invoke("learning.staff.email_list", owner, { path: { course: c.uuid } }))
    expect(refused(await m.invoke("learning.staff.email_get", stranger, { path: { invitation: sent.uuid } }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.staff.email_list", stranger, { path: { course: c.uuid } }))).toEqual([404, "not_found"])

    // Another account, even holding the token, may not accept: 403; a wrong token: 403.
    expect(refused(await m.invoke("learning.staff.email_accept", stranger, { path: { invitation: sent.uuid }, payload: command({ token }) })))
      .toEqual([403, "forbidden"])
    expect(refused(await m.invoke("learning.staff.email_accept", addressee, { path: { invitation: sent.uuid }, payload: command({ token: `${token}x` }) })))
      .toEqual([403, "forbidden"])
    // Not for someone else's profile.
    expect(refused(await m.invoke("learning.staff.email_accept", addressee, {
      path: { invitation: sent.uuid },
      payload: command({ token, profileUuid: stranger.profileUuid })
    }))).toEqual([403, "forbidden"])
    // For one of the addressee's own profiles: the second profile of the same account.
    const [account] = await m.sql<{ account_uuid: string }>("SELECT account_uuid FROM profiles WHERE uuid = $1", addressee.profileUuid)
    const [studio] = await m.sql<{ uuid: string }>(
      "INSERT INTO profiles (id, account_uuid, name, type) VALUES ($1, $2, 'Студия адресата', 'ИП') RETURNING uuid", `p-${randomUUID()}`, account!.account_uuid)
    const accepted = await m.invoke("learning.staff.email_accept", addressee, { path: { invitation: sent.uuid }, payload: command({ token, profileUuid: studio!.uuid }) })
    answers.push(accepted)
    const assignment = ok<StaffAssignment>(accepted)
    expect([assignment.profileUuid, assignment.role, assignment.status]).toEqual([studio!.uuid, "assistant", "active"])
    // Used once: the same token, again, from either profile.
    expect(refused(await m.invoke("learning.staff.email_accept", addressee, { path: { invitation: sent.uuid }, payload: command({ token }) })))
      .toEqual([409, "invalid_state"])
    const after = ok<EmailInvitation>(await m.invoke("learning.staff.email_get", addressee, { path: { invitation: sent.uuid } }))
    expect([after.status, after.acceptedProfileUuid, after.assignmentUuid]).toEqual(["accepted", studio!.uuid, assignment.uuid])
    answers.push(await m.invoke("learning.staff.email_get", addressee, { path: { invitation: sent.uuid } }))

    // Nowhere but in the mail: not in any answer, any stored row, or any log line.
    for (const answer of answers) expect(JSON.stringify(bodyOf(answer))).not.toContain(token)
    const [row] = await m.sql<Record<string, unknown>>("SELECT * FROM learning_email_invitations WHERE uuid = $1", sent.uuid)
    expect(JSON.stringify(row)).not.toContain(token)
    expect(JSON.stringify(row)).not.toContain(addressee.email)
    const audit = await m.sql<Record<string, unknown>>("SELECT * FROM learning_audit_events WHERE course_uuid = $1", c.uuid)
    expect(JSON.stringify(audit)).not.toContain(token)
    const idempotency = await m.sql<Record<string, unknown>>("SELECT response FROM idempotency_keys WHERE operation_id LIKE 'learning.staff.email%'")
    expect(JSON.stringify(idempotency)).not.toContain(token)
    expect(logs.length).toBeGreaterThan(0)
    expect(logs.filter((line) => line.includes(token))).toEqual([])
  })

  it("never takes the mailed token into a prepared command: a key accepts by the verified address alone", async () => {
    const c = await course()
    const addressee = await m.profile({ name: "Агент адресата" })
    const before = mails.length
    const sent = ok<EmailInvitation>(await invite(c, addressee.email))
    const token = tokenOf(mails[before]!)
    const [keyRow] = await m.sql<{ uuid: string }>(
      `INSERT INTO api_keys (account_uuid, profile_uuid, kind, name, scopes, http_enabled, mcp_enabled, lifetime_days)
       VALUES ($1, $2, 'application', 'agent', '["learning:staff"]'::jsonb, true, true, 90) RETURNING uuid`,
      addressee.accountUuid, addressee.profileUuid
    )
    const key: KeyActor = {
      ...addressee, via: "mcp", keyUuid: keyRow!.uuid, keyName: "agent", keyKind: "application", scopes: ["learning:staff"], httpEnabled: true, mcpEnabled: true
    }
    const prepare = (args: Record<string, unknown>) =>
      m.invoke("integrationCommands.prepare", key, { payload: { operationId: "learning.staff.email_accept", arguments: { invitation: sent.uuid, ...args } } })
    const withToken = await prepare({ token })
    expect(refused(withToken)).toEqual([400, "invalid_request"])
    expect(JSON.stringify(bodyOf(withToken))).toContain("arguments.token")
    expect(JSON.stringify(bodyOf(withToken))).not.toContain(token)
    const prepared = ok<{ command: { uuid: string; operationId: string } }>(await prepare({}))
    expect(prepared.command.operationId).toBe("learning.staff.email_accept")
    const stored = await m.sql<Record<string, unknown>>("SELECT * FROM integration_commands WHERE key_uuid = $1", keyRow!.uuid)
    expect(stored.length).toBe(1)
    expect(JSON.stringify(stored)).not.toContain(token)
  })

  it("follows its transition table, with expiry computed on read", async () => {
    const c = await course()
    const states = ["pending", "accepted", "rejected", "revoked", "expired"] as const
    const operations = [
      { operation: "learning.staff.email_accept", by: "addressee" },
      { operation: "learning.staff.email_reject", by: "addressee" },
      { operation: "learning.staff.email_revoke", by: "owner" }
    ] as const
    for (const state of states) {
      for (const { by, operation } of operations) {
        const addressee = await m.profile()
        const sent = ok<EmailInvitation>(await invite(c, addressee.email))
        if (state === "expired") {
          await m.sql("UPDATE learning_email_invitations SET expires_at = now() - interval '1 second' WHERE uuid = $1", sent.uuid)
          expect(ok<EmailInvitation>(await m.invoke("learning.staff.email_get", owner, { path: { invitation: sent.uuid } })).status).toBe("expired")
        } else {
          await m.sql("UPDATE learning_email_invitations SET status = $1 WHERE uuid = $2", state, sent.uuid)
        }
        const answer = await m.invoke(operation, by === "owner" ? owner : addressee, { path: { invitation: sent.uuid }, payload: command() })
        const allowed = emailTransitions.find((t) => t.operation === operation && t.by === by && t.from === state)
        const label = `${operation} from ${state}`
        if (allowed === undefined) {
          expect(refused(answer), label).toEqual([409, "invalid_state"])
        } else {
          expect(answer.status, label).toBe(200)
          expect(ok<EmailInvitation>(await m.invoke("learning.staff.email_get", owner, { path: { invitation: sent.uuid } })).status, label).toBe(allowed.to)
        }
      }
    }
    // Filtering the course's list by the computed status.
    const expired = ok<{ items: Array<EmailInvitation> }>(await m.invoke("learning.staff.email_list", owner, { path: { course: c.uuid }, urlParams: { status: "expired", limit: "100" } }))
    expect(expired.items.length).toBe(3)
    expect(expired.items.every((i) => i.status === "expired")).toBe(true)
    // The addressee may not revoke, the owner may not reject, nobody else may do either.
    const addressee = await m.profile()
    const sent = ok<EmailInvitation>(await invite(c, addressee.email))
    expect(refused(await m.invoke("learning.staff.email_revoke", addressee, { path: { invitation: sent.uuid }, payload: command() }))).toEqual([403, "forbidden"])
    expect(refused(await m.invoke("learning.staff.email_reject", owner, { path: { invitation: sent.uuid }, payload: command() }))).toEqual([403, "forbidden"])
    expect(refused(await m.invoke("learning.staff.email_revoke", stranger, { path: { invitation: sent.uuid }, payload: command() }))).toEqual([404, "not_found"])
  })

  it("refuses an enrolled learner's acceptance and keeps at most 50 invitations a day per course", async () => {
    const c = await course()
    const learner = await m.profile()
    await enroll(c, learner)
    const sent = ok<EmailInvitation>(await invite(c, learner.email))
    expect(refused(await m.invoke("learning.staff.email_accept", learner, { path: { invitation: sent.uuid }, payload: command() }))).toEqual([403, "conflict_of_interest"])
    for (let i = 1; i < 50; i++) ok(await invite(c, `limit-${i}@example.com`))
    expect(refused(await invite(c, "limit-50@example.com"))).toEqual([429, "rate_limited"])
    expect(refused(await invite(c, "not-an-email"))).toEqual([400, "invalid_request"])
  })
})

describe("learning ownership transfer", () => {
  const inviteOwner = (c: { uuid: string }, profile: SessionActor, previousOwnerRole = "instructor", actor = owner) =>
    m.invoke("learning.ownership.invite", actor, { path: { course: c.uuid }, payload: command({ profileUuid: profile.profileUuid, previousOwnerRole }) })

  it("leaves exactly one owner when two acceptances race; the old owner becomes an instructor", async () => {
    const c = await course()
    const heir = await m.profile({ name: "Наследник" })
    const invitation = ok<OwnershipInvitation>(await inviteOwner(c, heir))
    expect(refused(await inviteOwner(c, await m.profile()))).toEqual([409, "invalid_state"])
    const answers = await Promise.all([1, 2, 3].map(() => m.invoke("learning.ownership.accept", heir, { path: { invitation: invitation.uuid }, payload: command() })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409])
    expect(await owners(c.uuid)).toEqual([heir.profileUuid])
    const [row] = await m.sql<{ owner_profile_uuid: string }>("SELECT owner_profile_uuid FROM learning_courses WHERE uuid = $1", c.uuid)
    expect(row!.owner_profile_uuid).toBe(heir.profileUuid)
    const roles = await m.sql<{ role: string; status: string }>("SELECT role, status FROM learning_staff WHERE course_uuid = $1 AND profile_uuid = $2", c.uuid, owner.profileUuid)
    expect(roles).toEqual([{ role: "instructor", status: "active" }])
    // The old owner lost the owner's atoms; the new one has them.
    expect(refused(await inviteOwner(c, stranger, "none", owner))).toEqual([403, "forbidden"])
    const back = ok<OwnershipInvitation>(await inviteOwner(c, owner, "none", heir))
    ok(await m.invoke("learning.ownership.accept", owner, { path: { invitation: back.uuid }, payload: command() }))
    expect(await owners(c.uuid)).toEqual([owner.profileUuid])
    // `none`: the previous owner leaves; the new owner's instructor assignment ended when it became owner.
    const statuses = await m.sql<{ profile_uuid: string; role: string; status: string }>(
      "SELECT profile_uuid, role, status FROM learning_staff WHERE course_uuid = $1 ORDER BY created_at", c.uuid)
    expect(statuses.filter((s) => s.status === "active").map((s) => [s.profile_uuid, s.role])).toEqual([[owner.profileUuid, "owner"]])
    const audit = await m.sql<{ action: string }>("SELECT action FROM learning_audit_events WHERE course_uuid = $1 AND action LIKE 'ownership.%' ORDER BY created_at", c.uuid)
    expect(audit.map((a) => a.action)).toEqual(["ownership.invite", "ownership.owner", "ownership.accept", "ownership.invite", "ownership.owner", "ownership.accept"])
  })

  it("keeps one owner over repeated rounds of racing acceptances", async () => {
    for (let round = 0; round < 5; round++) {
      const c = await course()
      const heir = await m.profile()
      const invitation = ok<OwnershipInvitation>(await inviteOwner(c, heir, round % 2 === 0 ? "instructor" : "none"))
      const answers = await Promise.all([1, 2, 3, 4].map(() => m.invoke("learning.ownership.accept", heir, { path: { invitation: invitation.uuid }, payload: command() })))
      expect(answers.map((a) => [a.status, codeOf(a)]).sort(), `round ${round}`).toEqual([[200, undefined], [409, "invalid_state"], [409, "invalid_state"], [409, "invalid_state"]])
      expect(await owners(c.uuid)).toEqual([heir.profileUuid])
      const heirRows = await m.sql<{ role: string }>("SELECT role FROM learning_staff WHERE course_uuid = $1 AND profile_uuid = $2 AND status = 'active'", c.uuid, heir.profileUuid)
      expect(heirRows).toEqual([{ role: "owner" }])
    }
  })

  it("races an acceptance against a cancellation: one wins, the owner count stays one", async () => {
    for (let round = 0; round < 3; round++) {
      const c = await course()
      const heir = await m.profile()
      const invitation = ok<OwnershipInvitation>(await inviteOwner(c, heir))
      const [accepted, cancelled] = await Promise.all([
        m.invoke("learning.ownership.accept", heir, { path: { invitation: invitation.uuid }, payload: command() }),
        m.invoke("learning.ownership.cancel", owner, { path: { invitation: invitation.uuid }, payload: command() })
      ])
      const statuses = [accepted.status, cancelled.status]
      expect(statuses.filter((s) => s === 200).length, JSON.stringify([bodyOf(accepted), bodyOf(cancelled)])).toBe(1)
      expect((await owners(c.uuid)).length).toBe(1)
      expect(await owners(c.uuid)).toEqual([accepted.status === 200 ? heir.profileUuid : owner.profileUuid])
    }
  })

  it("follows its transition table; expiry is computed on read; a learner of the course cannot become owner", async () => {
    const states = ["pending", "accepted", "rejected", "cancelled", "expired"] as const
    const operations = [
      { operation: "learning.ownership.accept", by: "invitee" },
      { operation: "learning.ownership.reject", by: "invitee" },
      { operation: "learning.ownership.cancel", by: "owner" }
    ] as const
    for (const state of states) {
      for (const { by, operation } of operations) {
        const c = await course()
        const heir = await m.profile()
        const invitation = ok<OwnershipInvitation>(await inviteOwner(c, heir))
        if (state === "expired") await m.sql("UPDATE learning_ownership_invitations SET expires_at = now() - interval '1 second' WHERE uuid = $1", invitation.uuid)
        else await m.sql("UPDATE learning_ownership_invitations SET status = $1 WHERE uuid = $2", state, invitation.uuid)
        const answer = await m.invoke(operation, by === "owner" ? owner : heir, { path: { invitation: invitation.uuid }, payload: command() })
        const allowed = ownershipTransitions.find((t) => t.operation === operation && t.by === by && t.from === state)
        const label = `${operation} from ${state}`
        if (allowed === undefined) expect(refused(answer), label).toEqual([409, "invalid_state"])
        else expect(bodyOf<OwnershipInvitation>(answer).status, label).toBe(allowed.to)
        expect((await owners(c.uuid)).length, label).toBe(1)
      }
    }
    // A lapsed invitation no longer blocks a new one.
    const c = await course()
    const first = ok<OwnershipInvitation>(await inviteOwner(c, await m.profile()))
    await m.sql("UPDATE learning_ownership_invitations SET expires_at = now() - interval '1 second' WHERE uuid = $1", first.uuid)
    const listed = ok<{ items: Array<OwnershipInvitation> }>(await m.invoke("learning.ownership.invitations", owner, { urlParams: { direction: "out", limit: "1" } }))
    expect(listed.items.map((i) => [i.uuid, i.status])).toEqual([[first.uuid, "expired"]])
    const learner = await m.profile()
    await enroll(c, learner)
    const toLearner = ok<OwnershipInvitation>(await inviteOwner(c, learner))
    expect(ok<{ items: Array<OwnershipInvitation> }>(await m.invoke("learning.ownership.invitations", learner, { urlParams: { direction: "in" } })).items.map((i) => i.uuid))
      .toEqual([toLearner.uuid])
    expect(refused(await m.invoke("learning.ownership.accept", learner, { path: { invitation: toLearner.uuid }, payload: command() }))).toEqual([403, "conflict_of_interest"])
    // Nobody else may act on it: the stranger does not know it; a profile already owner is refused.
    expect(refused(await m.invoke("learning.ownership.accept", stranger, { path: { invitation: toLearner.uuid }, payload: command() }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.ownership.reject", stranger, { path: { invitation: toLearner.uuid }, payload: command() }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.ownership.cancel", stranger, { path: { invitation: toLearner.uuid }, payload: command() }))).toEqual([404, "not_found"])
    expect(refused(await m.invoke("learning.ownership.invite", stranger, { path: { course: c.uuid }, payload: command({ profileUuid: stranger.profileUuid, previousOwnerRole: "none" }) })))
      .toEqual([404, "not_found"])
    expect(await owners(c.uuid)).toEqual([owner.profileUuid])
  })
})

describe("learning course reviews", () => {
  const save = (learner: SessionActor, enrollment: string, body: Record<string, unknown>) =>
    m.invoke("learning.course_reviews.save", learner, { path: { enrollment }, payload: command(body) })

  it("decides eligibility from the enrollment: completed, or started and still studying", async () => {
    const c = await course("unlisted")
    const statuses = ["invited", "requested", "waitlisted", "offered", "active", "paused", "withdrawal_requested", "withdrawn", "declined", "expired", "rejected", "completed", "cancelled"]
    for (const status of statuses) {
      for (const started of [true, false]) {
        const learner = await m.profile()
        const enrollment = await enroll(c, learner, status, started)
        const own = ok<{ eligible: boolean; reason?: string }>(await m.invoke("learning.course_reviews.own", learner, { path: { enrollment } }))
        const expected = eligibility({ status, started_at: started ? new Date() : null }).eligible
        expect(own.eligible, `${status} started=${started}`).toBe(expected)
        expect(expected, `${status} started=${started}`).toBe(status === "completed" || (started && ["active", "paused", "withdrawal_requested"].includes(status)))
        const answer = await save(learner, enrollment, { rating: 4, text: "" })
        if (expected) expect(answer.status).toBe(200)
        else expect(refused(answer), status).toEqual([409, "not_eligible"])
      }
    }
  })

  it("keeps one review per learner per course, with bounds, a public summary and removal", async () => {
    const c = await course("unlisted")
    const learner = await m.profile({ name: "Ученица", public: true })
    const enrollment = await enroll(c, learner, "completed")
    for (const rating of [0, 6, 2.5]) expect(refused(await save(learner, enrollment, { rating, text: "" }))).toEqual([400, "invalid_request"])
    expect(refused(await save(learner, enrollment, { rating: 5, text: "я".repeat(5001) }))).toEqual([400, "invalid_request"])
    expect(refused(await save(learner, enrollment, { rating: 5, text: "", extra: 1 }))).toEqual([400, "invalid_request"])
    const first = ok<CourseReview>(await save(learner, enrollment, { rating: 1, text: "я".repeat(5000) }))
    expect([first.rating, first.text.length, first.enrollmentUuid, first.status]).toEqual([1, 5000, enrollment, "visible"])
    // A second save must name the revision it replaces.
    expect(refused(await save(learner, enrollment, { rating: 5, text: "Лучше" }))).toEqual([409, "revision_conflict"])
    const replaced = ok<CourseReview>(await save(learner, enrollment, { rating: 5, text: "Лучше", expectedRevision: first.revision }))
    expect([replaced.uuid, replaced.rating, replaced.revision]).toEqual([first.uuid, 5, 2])
    // Someone else's enrollment is unknown to the caller.
    expect(refused(await m.invoke("learning.course_reviews.own", stranger, { path: { enrollment } }))).toEqual([404, "not_found"])
    expect(refused(await save(stranger, enrollment, { rating: 3, text: "" }))).toEqual([404, "not_found"])
    const other = await m.profile()
    ok(await save(other, await enroll(c, other, "active"), { rating: 2, text: "Сложно" }))
    const page = ok<{ items: Array<CourseReview>; summary: { count: number; average: number; histogram: Array<number> } }>(
      await m.invoke("learning.course_reviews.list", { via: "anonymous" }, { path: { course: c.uuid } }))
    expect(page.summary).toEqual({ count: 2, average: 3.5, histogram: [0, 1, 0, 0, 1] })
    expect(page.items.map((r) => [r.rating, r.authorName, r.enrollmentUuid])).toEqual([[2, undefined, undefined], [5, "Ученица", undefined]])
    const fives = ok<{ items: Array<CourseReview> }>(await m.invoke("learning.course_reviews.list", stranger, { path: { course: c.uuid }, urlParams: { rating: "5" } }))
    expect(fives.items.map((r) => r.uuid)).toEqual([first.uuid])
    const removed = ok<CourseReview>(await m.invoke("learning.course_reviews.remove", learner, { path: { enrollment }, payload: command({ expectedRevision: 2 }) }))
    expect(removed.status).toBe("removed")
    expect(refused(await m.invoke("learning.course_reviews.remove", learner, { path: { enrollment }, payload: command({ expectedRevision: 3 }) }))).toEqual([409, "invalid_state"])
    const after = ok<{ summary: { count: number } }>(await m.invoke("learning.course_reviews.list", stranger, { path: { course: c.uuid } }))
    expect(after.summary.count).toBe(1)
    expect(ok<{ review?: CourseReview; eligible: boolean }>(await m.invoke("learning.course_reviews.own", learner, { path: { enrollment } }))).toEqual({ eligible: true })
    // A private course's reviews are unknown to a stranger.
    const hidden = await course("private")
    expect(refused(await m.invoke("learning.course_reviews.list", stranger, { path: { course: hidden.uuid } }))).toEqual([404, "not_found"])
  })
})

describe("learning people in the OpenAPI document", () => {
  it("lists their learning error codes, approval flags and the learning:staff scope", async () => {
    const { openApiDocument } = await import("../../api/BirzhaApi.js")
    const doc = JSON.parse(JSON.stringify(openApiDocument())) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; "x-scopes": Array<string>; "x-approval": boolean }>>
      "x-scopes": Array<string>
    }
    const op = (path: string, method: string) => doc.paths[`/api/v1/learning${path}`]![method]!
    expect(JSON.stringify(op("/courses/{course}/staff", "post").responses["403"])).toContain("ConflictOfInterestError")
    expect(JSON.stringify(op("/courses/{course}/staff/revoke", "post").responses["409"])).toContain("OwnerRequiredError")
    expect(JSON.stringify(op("/enrollments/{enrollment}/course-review", "post").responses["409"])).toContain("NotEligibleError")
    expect(JSON.stringify(op("/courses/{course}/staff/email-invitations", "post").responses["429"])).toContain("rate_limited")
    expect([op("/ownership/{invitation}/accept", "post")["x-approval"], op("/ownership/{invitation}/reject", "post")["x-approval"]]).toEqual([true, false])
    expect(op("/ownership/{invitation}/accept", "post")["x-scopes"]).toEqual(["learning:staff"])
    expect(op("/courses/{course}/course-reviews", "get")["x-scopes"]).toEqual([])
    expect(doc["x-scopes"]).toContain("learning:staff")
  })
})
