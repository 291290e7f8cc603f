import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import { loadCourse, updateCourse } from "../courses/CourseRepository.js"
import { once } from "../Commands.js"
import { invitationLifetimeDays } from "./EmailInvitations.js"
import { ConflictOfInterest } from "../LearningErrors.js"
import { assignStaff, authorizedCourse, type CandidateFilter, candidatesFor, refusalOn, requireProfile } from "./Staff.js"
import { OwnershipInvitation, OwnershipStatus as OwnershipStatusSchema, PreviousOwnerRole } from "./StaffModel.js"
import { demoteOwner, endAssignmentsOfNewOwner, revokeOwner } from "./StaffRepository.js"
import { type Transition, transitionTo } from "../Transitions.js"

/**
 * Ownership transfer: exactly one owner per course, at most one pending
 * invitation per course (a partial unique index). Acceptance is one transaction that first locks
 * the course row, so two acceptances racing serialise: the first moves ownership, the second finds
 * the invitation no longer pending (409). The old owner becomes an instructor or leaves, as the
 * invitation said; the new owner's other assignments on the course end (the owner holds every atom).
 */

export type OwnershipStatus = "pending" | "accepted" | "rejected" | "cancelled" | "expired"
export type OwnershipActor = "owner" | "invitee"

export const ownershipTransitions: ReadonlyArray<
  Transition<"learning.ownership.accept" | "learning.ownership.reject" | "learning.ownership.cancel", OwnershipActor, OwnershipStatus>
> = [
  { operation: "learning.ownership.accept", by: "invitee", from: "pending", to: "accepted" },
  { operation: "learning.ownership.reject", by: "invitee", from: "pending", to: "rejected" },
  { operation: "learning.ownership.cancel", by: "owner", from: "pending", to: "cancelled" }
]

const OwnershipRow = Schema.Struct({
  uuid: Schema.String,
  revision: Schema.Number,
  course_uuid: Schema.String,
  course_title: Schema.String,
  from_profile_uuid: Schema.String,
  to_profile_uuid: Schema.String,
  to_profile_name: Schema.String,
  previous_owner_role: PreviousOwnerRole,
  message: Schema.String,
  status: OwnershipStatusSchema,
  expires_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  position: Schema.String,
  /** `status`, with a pending invitation past its expiry read as expired. */
  effective_status: OwnershipStatusSchema
})
type OwnershipRow = typeof OwnershipRow.Type

const ownershipSelect = `SELECT ${
  selectList(OwnershipRow, "o", {
    course_title: "c.title",
    to_profile_name: "p.name",
    position: "o.created_at::text",
    effective_status: "CASE WHEN o.status = 'pending' AND o.expires_at <= now() THEN 'expired' ELSE o.status END"
  })
}
  FROM learning_ownership_invitations o JOIN learning_courses c ON c.uuid = o.course_uuid JOIN profiles p ON p.uuid = o.to_profile_uuid`
const decodeOwnerships = rowsDecoder(OwnershipRow)

const view = (row: OwnershipRow): OwnershipInvitation => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  courseTitle: row.course_title,
  fromProfileUuid: row.from_profile_uuid,
  toProfileUuid: row.to_profile_uuid,
  toProfileName: row.to_profile_name,
  previousOwnerRole: row.previous_owner_role,
  message: row.message,
  status: row.effective_status,
  expiresAt: row.expires_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const loadOwnership = (uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (lock) yield* sql`SELECT 1 FROM learning_ownership_invitations WHERE uuid = ${uuid} FOR UPDATE`
    const [row] = yield* Effect.flatMap(sql`${sql.literal(ownershipSelect)} WHERE o.uuid = ${uuid}`, decodeOwnerships)
    return row === undefined ? yield* new NotFound({ message: `No ownership invitation ${uuid}` }) : row
  })

const requireTransition = (operation: typeof ownershipTransitions[number]["operation"], by: OwnershipActor, row: OwnershipRow) =>
  transitionTo(ownershipTransitions, { resource: "ownership_invitation", uuid: row.uuid }, operation, by, row.effective_status)

/** Sets a new status and writes the audit row. */
const settle = (actor: Actor, row: OwnershipRow, to: OwnershipStatus, requestUuid: string, after: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE learning_ownership_invitations SET status = ${to}, revision = revision + 1, updated_at = now() WHERE uuid = ${row.uuid}`
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: `ownership.${to === "accepted" ? "accept" : to === "rejected" ? "reject" : "cancel"}`,
      subjectKind: "ownership_invitation",
      subjectUuid: row.uuid,
      before: { status: row.effective_status },
      after: { status: to, ...after },
      requestUuid
    })
    return view(yield* loadOwnership(row.uuid, false))
  })

/** learning.ownership.invite (owner): one pending invitation per course; a lapsed one is stored as expired first. */
export const inviteOwner = (
  actor: Actor,
  courseUuid: string,
  input: { readonly requestUuid: string; readonly profileUuid: string; readonly previousOwnerRole: "instructor" | "none"; readonly message?: string | undefined }
) =>
  once(actor, "learning.ownership.invite", input, OwnershipInvitation, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { course } = yield* authorizedCourse(actor, "learning.ownership.invite", courseUuid, true)
    yield* requireProfile(input.profileUuid)
    if (input.profileUuid === course.owner_profile_uuid) return yield* new InvalidState({ message: "The profile already owns the course" })
    yield* sql`UPDATE learning_ownership_invitations SET status = 'expired', revision = revision + 1, updated_at = now()
      WHERE course_uuid = ${courseUuid} AND status = 'pending' AND expires_at <= now()`
    const pending = yield* sql`SELECT 1 FROM learning_ownership_invitations WHERE course_uuid = ${courseUuid} AND status = 'pending'`
    if (pending.length > 0) return yield* new InvalidState({ message: "The course already has a pending ownership invitation; cancel it first" })
    const uuid = randomUUID()
    yield* sql`INSERT INTO learning_ownership_invitations (uuid, course_uuid, from_profile_uuid, to_profile_uuid, previous_owner_role, message, expires_at)
      VALUES (${uuid}, ${courseUuid}, ${actor.profileUuid}, ${input.profileUuid}, ${input.previousOwnerRole}, ${input.message ?? ""},
        now() + make_interval(days => ${invitationLifetimeDays}))`
    yield* appendAudit({
      courseUuid,
      actorProfileUuid: actor.profileUuid,
      action: "ownership.invite",
      subjectKind: "ownership_invitation",
      subjectUuid: uuid,
      after: { toProfileUuid: input.profileUuid, previousOwnerRole: input.previousOwnerRole },
      requestUuid: input.requestUuid
    })
    return view(yield* loadOwnership(uuid, false))
  }))

/** learning.ownership.invitations: to the caller (`in`), from the caller (`out`), or both; newest first. */
export const listOwnershipInvitations = (
  actor: Actor,
  filter: { readonly direction?: "in" | "out" | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const whose = filter.direction === "in"
      ? sql`o.to_profile_uuid = ${actor.profileUuid}`
      : filter.direction === "out"
      ? sql`o.from_profile_uuid = ${actor.profileUuid}`
      : sql`(o.to_profile_uuid = ${actor.profileUuid} OR o.from_profile_uuid = ${actor.profileUuid})`
    const rows = yield* Effect.flatMap(
      sql`${sql.literal(ownershipSelect)} WHERE ${whose}
        ${position._tag === "Some" ? sql`AND (o.created_at, o.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY o.created_at DESC, o.uuid DESC LIMIT ${limit + 1}`,
      decodeOwnerships
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), view)
  })

/** The invitation for its invitee (anyone else: 404), with the course locked first. */
const inviteeInvitation = (actor: Actor, uuid: string) =>
  Effect.gen(function*() {
    const found = yield* loadOwnership(uuid, false)
    if (found.to_profile_uuid !== actor.profileUuid) return yield* new NotFound({ message: `No ownership invitation ${uuid}` })
    const course = yield* loadCourse(found.course_uuid, { lock: true })
    return { course, row: yield* loadOwnership(uuid, true) }
  })

/**
 * learning.ownership.accept: in one transaction, with the course locked — the old owner's
 * assignment becomes an instructor's (or is revoked), the invitee's other assignments end, the
 * invitee becomes the one active owner, the course records its new owner.
 */
export const acceptOwnership = (actor: Actor, uuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.ownership.accept", input, OwnershipInvitation, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { course, row } = yield* inviteeInvitation(actor, uuid)
    const to = yield* requireTransition("learning.ownership.accept", "invitee", row)
    const enrolled = yield* sql`SELECT 1 FROM learning_enrollments WHERE course_uuid = ${course.uuid} AND profile_uuid = ${actor.profileUuid}
      AND status NOT IN ('declined', 'rejected', 'expired', 'cancelled') LIMIT 1`
    if (enrolled.length > 0) return yield* new ConflictOfInterest({ message: "A learner of the course cannot become its owner; withdraw first" })
    const previous = course.owner_profile_uuid
    yield* (row.previous_owner_role === "instructor" ? demoteOwner(course.uuid) : revokeOwner(course.uuid))
    yield* endAssignmentsOfNewOwner(course.uuid, actor.profileUuid)
    yield* assignStaff({ courseUuid: course.uuid, profileUuid: actor.profileUuid, role: "owner", byProfileUuid: actor.profileUuid, requestUuid: input.requestUuid, action: "ownership.owner" })
    yield* updateCourse(course.uuid, { owner_profile_uuid: actor.profileUuid })
    return yield* settle(actor, row, to, input.requestUuid, { previousOwnerUuid: previous, ownerUuid: actor.profileUuid, previousOwnerRole: row.previous_owner_role })
  }))

/** learning.ownership.reject: the invitee declines. */
export const rejectOwnership = (actor: Actor, uuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.ownership.reject", input, OwnershipInvitation, Effect.gen(function*() {
    const { row } = yield* inviteeInvitation(actor, uuid)
    return yield* settle(actor, row, yield* requireTransition("learning.ownership.reject", "invitee", row), input.requestUuid)
  }))

/** learning.ownership.cancel: the course's owner withdraws the invitation (others: 404/403 by the course decision). */
export const cancelOwnership = (actor: Actor, uuid: string, input: { readonly requestUuid: string }) =>
  once(actor, "learning.ownership.cancel", input, OwnershipInvitation, Effect.gen(function*() {
    const found = yield* loadOwnership(uuid, false)
    const course = yield* loadCourse(found.course_uuid, { lock: true })
    const refusal = yield* refusalOn(actor, "learning.ownership.cancel", course)
    if (refusal !== undefined) return yield* refusal
    const row = yield* loadOwnership(uuid, true)
    return yield* settle(actor, row, yield* requireTransition("learning.ownership.cancel", "owner", row), input.requestUuid)
  }))

/** learning.ownership.candidates (owner): the owner's other profiles and the course's active instructors. */
export const ownershipCandidates = (actor: Actor, courseUuid: string, filter: CandidateFilter) =>
  candidatesFor(actor, "learning.ownership.candidates", courseUuid, filter, (sql) =>
    sql`SELECT profile_uuid, 'instructors', 2 FROM learning_staff WHERE course_uuid = ${courseUuid} AND role = 'instructor' AND status = 'active'`)
