import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { Forbidden, NotFound, RateLimited, ServiceUnavailable } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { keyedHash, sameHash, ServerSecret } from "../../auth/ServerSecret.js"
import { normalizeEmail } from "../../auth/SignIn.js"
import { Mailer } from "../../mail/Mailer.js"
import type { Call } from "../../operations/Implementation.js"
import { PublicOrigin } from "../../operations/PublicOrigin.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import { loadCourse } from "../courses/CourseRepository.js"
import { once } from "../Commands.js"
import {
  assignmentView,
  assignStaff,
  authorizedCourse,
  loadAssignment,
  refusalOn,
  requireNoEnrollment,
  requireNotAssigned,
  requireScope,
  scopeOf
} from "./Staff.js"
import { AssignableRole, EmailInvitation, InvitationStatus as InvitationStatusSchema, StaffAssignment } from "./StaffModel.js"
import { type Transition, transitionTo } from "../Transitions.js"

/**
 * Staff invitations by email. The address and the mailed token are
 * stored only as keyed hashes (the server key, a purpose label each); the inviter's list shows a
 * masked hint. The addressee is whoever is signed in with that verified address (an account's
 * email is verified by sign-in); they accept for one of their account's profiles, once. Expiry
 * (14 days) is computed on read. Neither token nor hash ever leaves this module.
 */

export const invitationLifetimeDays = 14
/** Email invitations per course per 24 hours. */
export const emailInvitationsPerDay = 50

export type InvitationStatus = "pending" | "accepted" | "rejected" | "revoked" | "expired"
export type InvitationActor = "owner" | "addressee"

/** The email invitation's state machine as data; a pending invitation past `expiresAt` reads (and acts) as `expired`. */
export const emailTransitions: ReadonlyArray<
  Transition<"learning.staff.email_accept" | "learning.staff.email_reject" | "learning.staff.email_revoke", InvitationActor, InvitationStatus>
> = [
  { operation: "learning.staff.email_accept", by: "addressee", from: "pending", to: "accepted" },
  { operation: "learning.staff.email_reject", by: "addressee", from: "pending", to: "rejected" },
  { operation: "learning.staff.email_revoke", by: "owner", from: "pending", to: "revoked" }
]

const emailHash = (secret: Parameters<typeof keyedHash>[0], email: string) => keyedHash(secret, "learning-invitation-email", normalizeEmail(email))
const tokenHash = (secret: Parameters<typeof keyedHash>[0], uuid: string, token: string) => keyedHash(secret, "learning-invitation-token", `${uuid}:${token}`)

/** `ada@example.com` → `a***@example.com`: enough for the inviter to recognise, nothing more. */
export const emailHint = (email: string): string => {
  const [local = "", domain = ""] = normalizeEmail(email).split("@")
  return `${local.slice(0, 1)}***@${domain}`
}

const InvitationRow = Schema.Struct({
  uuid: Schema.String,
  revision: Schema.Number,
  course_uuid: Schema.String,
  course_title: Schema.String,
  email_hash: Schema.String,
  email_hint: Schema.String,
  token_hash: Schema.String,
  role: AssignableRole,
  run_uuid: Schema.NullOr(Schema.String),
  group_uuid: Schema.NullOr(Schema.String),
  message: Schema.String,
  status: InvitationStatusSchema,
  accepted_profile_uuid: Schema.NullOr(Schema.String),
  assignment_uuid: Schema.NullOr(Schema.String),
  expires_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  position: Schema.String,
  /** `status`, with a pending invitation past its expiry read as expired. */
  effective_status: InvitationStatusSchema
})
type InvitationRow = typeof InvitationRow.Type

const invitationSelect = `SELECT ${
  selectList(InvitationRow, "i", {
    course_title: "c.title",
    position: "i.created_at::text",
    effective_status: "CASE WHEN i.status = 'pending' AND i.expires_at <= now() THEN 'expired' ELSE i.status END"
  })
}
  FROM learning_email_invitations i JOIN learning_courses c ON c.uuid = i.course_uuid`
const decodeInvitations = rowsDecoder(InvitationRow)
const decodeSent = rowsDecoder(Schema.Struct({ n: Schema.Number, wait: Schema.NullOr(Schema.Number) }))

const view = (row: InvitationRow): EmailInvitation => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  courseTitle: row.course_title,
  emailHint: row.email_hint,
  role: row.role,
  scope: scopeOf(row),
  message: row.message,
  status: row.effective_status,
  ...(row.accepted_profile_uuid !== null ? { acceptedProfileUuid: row.accepted_profile_uuid } : {}),
  ...(row.assignment_uuid !== null ? { assignmentUuid: row.assignment_uuid } : {}),
  expiresAt: row.expires_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const loadInvitation = (uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (lock) yield* sql`SELECT 1 FROM learning_email_invitations WHERE uuid = ${uuid} FOR UPDATE`
    const [row] = yield* Effect.flatMap(sql`${sql.literal(invitationSelect)} WHERE i.uuid = ${uuid}`, decodeInvitations)
    return row === undefined ? yield* new NotFound({ message: `No email invitation ${uuid}` }) : row
  })

const isAddressee = (actor: Actor, row: InvitationRow) => Effect.map(ServerSecret, (secret) => sameHash(emailHash(secret, actor.email), row.email_hash))

const requireTransition = (operation: typeof emailTransitions[number]["operation"], by: InvitationActor, row: InvitationRow) =>
  transitionTo(emailTransitions, { resource: "email_invitation", uuid: row.uuid }, operation, by, row.effective_status)

const move = (actor: Actor, row: InvitationRow, to: InvitationStatus, requestUuid: string, extra: { readonly profileUuid?: string; readonly assignmentUuid?: string } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE learning_email_invitations SET status = ${to}, accepted_profile_uuid = ${extra.profileUuid ?? null},
        assignment_uuid = ${extra.assignmentUuid ?? null}, revision = revision + 1, updated_at = now()
      WHERE uuid = ${row.uuid}`
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: `staff.email_${to === "accepted" ? "accept" : to === "rejected" ? "reject" : "revoke"}`,
      subjectKind: "email_invitation",
      subjectUuid: row.uuid,
      before: { status: row.effective_status },
      after: { status: to, ...(extra.profileUuid !== undefined ? { profileUuid: extra.profileUuid } : {}) },
      requestUuid
    })
  })

/**
 * learning.staff.email_invite (owner): stores the invitation and mails its link in one
 * transaction, so a refused mail leaves nothing (503); the link carries the token in its fragment.
 */
export const inviteByEmail = (
  actor: Actor,
  courseUuid: string,
  input: {
    readonly requestUuid: string
    readonly email: string
    readonly role: InvitationRow["role"]
    readonly scope: { readonly runUuid?: string | undefined; readonly groupUuid?: string | undefined }
    readonly message?: string | undefined
  },
  call: Call
) =>
  once(actor, "learning.staff.email_invite", input, EmailInvitation, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const mailer = yield* Mailer
    const origin = yield* PublicOrigin
    const { course } = yield* authorizedCourse(actor, "learning.staff.email_invite", courseUuid, true)
    const scope: { readonly runUuid?: string; readonly groupUuid?: string } = yield* requireScope(courseUuid, input.scope)
    const [sent] = yield* Effect.flatMap(
      sql`SELECT count(*)::int AS n,
        extract(epoch FROM min(created_at) + interval '24 hours' - now())::int AS wait
      FROM learning_email_invitations WHERE course_uuid = ${courseUuid} AND created_at > now() - interval '24 hours'`,
      decodeSent
    )
    if ((sent?.n ?? 0) >= emailInvitationsPerDay) {
      call.facts.retryAfterSeconds = Math.max(1, sent?.wait ?? 1)
      return yield* new RateLimited({ message: `At most ${emailInvitationsPerDay} email invitations per course in 24 hours` })
    }
    const uuid = randomUUID()
    const token = randomBytes(32).toString("base64url")
    const hint = emailHint(input.email)
    yield* sql`INSERT INTO learning_email_invitations
        (uuid, course_uuid, email_hash, email_hint, token_hash, role, run_uuid, group_uuid, message, invited_by, expires_at)
      VALUES (${uuid}, ${courseUuid}, ${emailHash(secret, input.email)}, ${hint}, ${tokenHash(secret, uuid, token)}, ${input.role},
        ${scope.runUuid ?? null}, ${scope.groupUuid ?? null}, ${input.message ?? ""}, ${actor.profileUuid},
        now() + make_interval(days => ${invitationLifetimeDays}))`
    yield* appendAudit({
      courseUuid,
      actorProfileUuid: actor.profileUuid,
      action: "staff.email_invite",
      subjectKind: "email_invitation",
      subjectUuid: uuid,
      after: { emailHint: hint, role: input.role, scope },
      requestUuid: input.requestUuid
    })
    const link = `${origin}/learning/staff-invitations/${uuid}#token=${token}`
    const note = input.message !== undefined && input.message !== "" ? `\n\n${actor.profileName}: ${input.message}` : ""
    yield* mailer.send({
      to: normalizeEmail(input.email),
      subject: `Приглашение в команду курса «${course.title}»`,
      text: `${actor.profileName} приглашает вас в команду курса «${course.title}» (роль: ${input.role}).${note}\n\n` +
        `Войдите с этим адресом и примите приглашение: ${link}\n\nПриглашение действует ${invitationLifetimeDays} дней.`,
      html: `<p>${escapeHtml(actor.profileName)} приглашает вас в команду курса «${escapeHtml(course.title)}» (роль: ${input.role}).</p>` +
        (note !== "" ? `<p>${escapeHtml(input.message ?? "")}</p>` : "") +
        `<p><a href="${escapeHtml(link)}">Принять приглашение</a></p><p>Приглашение действует ${invitationLifetimeDays} дней.</p>`
    }).pipe(Effect.mapError(() => new ServiceUnavailable({ message: "The invitation email could not be sent; nothing was saved, try again" })))
    return view(yield* loadInvitation(uuid, false))
  }))

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

type Listing = { readonly cursor?: string | undefined; readonly limit?: number | undefined }

const listWhere = (condition: ReturnType<SqlClient.SqlClient["and"]>, filter: Listing) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`${sql.literal(invitationSelect)} WHERE ${condition}
        ${position._tag === "Some" ? sql`AND (i.created_at, i.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY i.created_at DESC, i.uuid DESC LIMIT ${limit + 1}`,
      decodeInvitations
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), view)
  })

/** learning.staff.email_list (owner): the course's invitations, newest first; `status` as read (expired computed). */
export const listCourseEmailInvitations = (actor: Actor, courseUuid: string, filter: Listing & { readonly status?: InvitationStatus | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* authorizedCourse(actor, "learning.staff.email_list", courseUuid, false)
    const status = filter.status === undefined
      ? []
      : filter.status === "pending"
      ? [sql`i.status = 'pending' AND i.expires_at > now()`]
      : filter.status === "expired"
      ? [sql`(i.status = 'expired' OR (i.status = 'pending' AND i.expires_at <= now()))`]
      : [sql`i.status = ${filter.status}`]
    return yield* listWhere(sql.and([sql`i.course_uuid = ${courseUuid}`, ...status]), filter)
  })

/** learning.staff.email_invitations: invitations addressed to the caller's verified email, newest first. */
export const listMyEmailInvitations = (actor: Actor, filter: Listing) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    return yield* listWhere(sql.and([sql`i.email_hash = ${emailHash(secret, actor.email)}`]), filter)
  })

/** The invitation for its addressee or the course's owner; anyone else: 404. */
const visibleInvitation = (actor: Actor, uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const row = yield* loadInvitation(uuid, lock)
    if (yield* isAddressee(actor, row)) return { row, by: "addressee" as const }
    const refusal = yield* refusalOn(actor, "learning.staff.email_list", yield* loadCourse(row.course_uuid, { lock: false }))
    if (refusal !== undefined) return yield* new NotFound({ message: `No email invitation ${uuid}` })
    return { row, by: "owner" as const }
  })

/** learning.staff.email_get: the addressee or the course's owner. */
export const getEmailInvitation = (actor: Actor, uuid: string) => Effect.map(visibleInvitation(actor, uuid, false), ({ row }) => view(row))

/**
 * learning.staff.email_accept: the signed-in addressee (the account's verified email must be the
 * invited one: 403 otherwise) accepts for one of the account's profiles; the assignment is active
 * at once. With the mailed token, it must match. Once accepted, nothing accepts it again.
 */
export const acceptEmailInvitation = (
  actor: Actor,
  uuid: string,
  input: { readonly requestUuid: string; readonly profileUuid?: string | undefined; readonly token?: string | undefined }
) =>
  once(actor, "learning.staff.email_accept", input, StaffAssignment, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const found = yield* loadInvitation(uuid, false)
    if (!(yield* isAddressee(actor, found))) {
      return yield* new Forbidden({ message: "This invitation was sent to another email address than the one you signed in with" })
    }
    if (input.token !== undefined && !sameHash(tokenHash(secret, uuid, input.token), found.token_hash)) {
      return yield* new Forbidden({ message: "The link's token does not belong to this invitation" })
    }
    yield* loadCourse(found.course_uuid, { lock: true })
    const row = yield* loadInvitation(uuid, true)
    yield* requireTransition("learning.staff.email_accept", "addressee", row)
    const profileUuid = input.profileUuid ?? actor.profileUuid
    const own = yield* sql`SELECT 1 FROM profiles WHERE uuid = ${profileUuid} AND account_uuid = ${actor.accountUuid}`
    if (own.length === 0) return yield* new Forbidden({ message: "profileUuid: accept for one of your own profiles" })
    const scope = scopeOf(row)
    yield* requireNotAssigned(row.course_uuid, profileUuid, row.role, scope)
    yield* requireNoEnrollment(row.course_uuid, profileUuid, scope.runUuid)
    const assignmentUuid = yield* assignStaff({
      courseUuid: row.course_uuid,
      profileUuid,
      role: row.role,
      runUuid: scope.runUuid,
      groupUuid: scope.groupUuid,
      byProfileUuid: actor.profileUuid,
      requestUuid: input.requestUuid,
      status: "active",
      action: "staff.email_accept"
    })
    yield* move(actor, row, "accepted", input.requestUuid, { profileUuid, assignmentUuid })
    return assignmentView(yield* loadAssignment(assignmentUuid))
  }))

/** learning.staff.email_reject: the addressee declines (anyone else: 404). */
export const rejectEmailInvitation = (actor: Actor, uuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.staff.email_reject", input, EmailInvitation, Effect.gen(function*() {
    const { by, row } = yield* visibleInvitation(actor, uuid, true)
    if (by !== "addressee") return yield* new Forbidden({ message: "Only the invited address may decline" })
    const to = yield* requireTransition("learning.staff.email_reject", by, row)
    yield* move(actor, row, to, input.requestUuid)
    return view(yield* loadInvitation(uuid, false))
  }))

/** learning.staff.email_revoke: the course's owner withdraws a pending invitation. */
export const revokeEmailInvitation = (actor: Actor, uuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.staff.email_revoke", input, EmailInvitation, Effect.gen(function*() {
    const found = yield* loadInvitation(uuid, false)
    yield* loadCourse(found.course_uuid, { lock: true })
    const { by, row } = yield* visibleInvitation(actor, uuid, true)
    if (by !== "owner") return yield* new Forbidden({ message: "Only the course's owner may revoke an invitation" })
    const to = yield* requireTransition("learning.staff.email_revoke", by, row)
    yield* move(actor, row, to, input.requestUuid)
    return view(yield* loadInvitation(uuid, false))
  }))
