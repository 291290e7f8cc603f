import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder } from "../../store/Rows.js"
import { requireRevision } from "../../store/Revision.js"
import { appendAudit } from "../Audit.js"
import { type CourseRow, loadCourse } from "../courses/CourseRepository.js"
import { once } from "../Commands.js"
import { ConflictOfInterest, OwnerRequired } from "../LearningErrors.js"
import { type Atom, authorizeCourse, type CourseOperation, ownerOnlyAtoms, type StaffRole, standingOn, decide } from "../Permissions.js"
import { returnRevokedClaims } from "../reviews/ReviewAssignments.js"
import { CandidateSource, StaffAssignment, StaffRoleSchema } from "./StaffModel.js"
import { type AssignmentRow, assignmentSelect, decodeAssignments, findAssignment, insertAssignment, setAssignmentPermissions, setAssignmentStatus } from "./StaffRepository.js"
import { type Transition, transitionTo } from "../Transitions.js"

/**
 * Staff assignments: the owner invites a profile to a role and a
 * scope (`invited`), the invitee accepts (`active`); the owner revokes, the assignee leaves or
 * declines. The state machine is the table `staffTransitions`; every change writes its audit row in
 * its transaction; the owner's own assignment changes only through an ownership transfer
 * (`owner_required` otherwise).
 */
export interface NewAssignment {
  readonly courseUuid: string
  readonly profileUuid: string
  readonly role: StaffRole
  readonly runUuid?: string | undefined
  readonly groupUuid?: string | undefined
  readonly grants?: ReadonlyArray<Atom> | undefined
  readonly denies?: ReadonlyArray<Atom> | undefined
  /** Who assigns (null: the system); recorded in the audit log. */
  readonly byProfileUuid: string | null
  readonly requestUuid?: string | undefined
  /** `invited` (staff.assign: the invitee accepts) or `active` (course creation, email and ownership acceptance). */
  readonly status?: "invited" | "active" | undefined
  /** The audit action; `staff.assign` unless told. */
  readonly action?: string | undefined
}

/** Creates an assignment; a second owner answers `owner_required` (exactly one owner per course). */
export const assignStaff = (assignment: NewAssignment): Effect.Effect<string, SqlError | OwnerRequired, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (assignment.role === "owner") {
      const owners = yield* sql`SELECT 1 FROM learning_staff WHERE course_uuid = ${assignment.courseUuid} AND role = 'owner' AND status = 'active'`
      if (owners.length > 0) return yield* new OwnerRequired({ message: "The course already has its one owner" })
    }
    const uuid = crypto.randomUUID()
    const status = assignment.status ?? "active"
    const grants = (assignment.grants ?? []).filter((atom) => !ownerOnlyAtoms.includes(atom))
    const denies = (assignment.denies ?? []).filter((atom) => !ownerOnlyAtoms.includes(atom))
    yield* insertAssignment({
      uuid,
      courseUuid: assignment.courseUuid,
      profileUuid: assignment.profileUuid,
      role: assignment.role,
      runUuid: assignment.runUuid ?? null,
      groupUuid: assignment.groupUuid ?? null,
      grants,
      denies,
      status,
      invitedBy: assignment.byProfileUuid
    })
    yield* appendAudit({
      courseUuid: assignment.courseUuid,
      actorProfileUuid: assignment.byProfileUuid,
      action: assignment.action ?? "staff.assign",
      subjectKind: "staff_assignment",
      subjectUuid: uuid,
      after: {
        profileUuid: assignment.profileUuid,
        role: assignment.role,
        status,
        ...(assignment.runUuid !== undefined ? { runUuid: assignment.runUuid } : {}),
        ...(assignment.groupUuid !== undefined ? { groupUuid: assignment.groupUuid } : {}),
        grants,
        denies
      },
      requestUuid: assignment.requestUuid
    })
    return uuid
  })

// ---- the state machine as data ----

export type StaffStatus = "invited" | "active" | "revoked" | "rejected"
/** Who acts on an assignment: the course's owner, or the profile it is for. */
export type StaffActor = "owner" | "assignee"

/**
 * Every allowed transition of a (non-owner) assignment: operation × who × from → to. Anything not
 * listed answers 409 `invalid_state`; the owner's own assignment answers `owner_required` first.
 */
export const staffTransitions: ReadonlyArray<
  Transition<"learning.staff.accept" | "learning.staff.revoke" | "learning.staff.permissions", StaffActor, StaffStatus>
> = [
  { operation: "learning.staff.accept", by: "assignee", from: "invited", to: "active" },
  { operation: "learning.staff.revoke", by: "owner", from: "invited", to: "revoked" },
  { operation: "learning.staff.revoke", by: "owner", from: "active", to: "revoked" },
  // The assignee declining an invitation, or leaving the course.
  { operation: "learning.staff.revoke", by: "assignee", from: "invited", to: "rejected" },
  { operation: "learning.staff.revoke", by: "assignee", from: "active", to: "revoked" },
  { operation: "learning.staff.permissions", by: "owner", from: "invited", to: "invited" },
  { operation: "learning.staff.permissions", by: "owner", from: "active", to: "active" }
]

export const staffTransition = (operation: typeof staffTransitions[number]["operation"], by: StaffActor, row: { readonly uuid: string; readonly status: StaffStatus }) =>
  transitionTo(staffTransitions, { resource: "staff_assignment", uuid: row.uuid }, operation, by, row.status)

// ---- rows and views ----

export type { AssignmentRow } from "./StaffRepository.js"

const decodeRunUuids = rowsDecoder(Schema.Struct({ run_uuid: Schema.String }))
const decodeRoles = rowsDecoder(Schema.Struct({ role: StaffRoleSchema }))
const decodeCandidates = rowsDecoder(Schema.Struct({ profile_uuid: Schema.String, name: Schema.String, source: CandidateSource }))

export const scopeOf = (row: { readonly run_uuid: string | null; readonly group_uuid: string | null }) => ({
  ...(row.run_uuid !== null ? { runUuid: row.run_uuid } : {}),
  ...(row.group_uuid !== null ? { groupUuid: row.group_uuid } : {})
})

/** The full view (staff, the assignee); `namesOnly` for learners: names and roles. */
export const assignmentView = (row: AssignmentRow, namesOnly = false): StaffAssignment => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  courseTitle: row.course_title,
  profileUuid: row.profile_uuid,
  profileName: row.profile_name,
  role: row.role,
  status: row.status,
  ...(namesOnly ? {} : { scope: scopeOf(row), grants: [...row.grants], denies: [...row.denies] }),
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export const loadAssignment = (uuid: string) =>
  Effect.gen(function*() {
    const row = yield* findAssignment(uuid)
    return row === undefined ? yield* new NotFound({ message: `No staff assignment ${uuid}` }) : row
  })

const lockAssignment = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 FROM learning_staff WHERE uuid = ${uuid} FOR UPDATE`)

// ---- shared checks (also used by email invitations and ownership) ----

export const courseFacts = (row: CourseRow) => ({ uuid: row.uuid, status: row.status, visibility: row.visibility, latestVersion: row.latest_version })

/** Loads (and locks, when asked) a course and authorizes the operation; returns the course and the caller's standing. */
export const authorizedCourse = (actor: Actor | undefined, operation: CourseOperation, uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const course = yield* loadCourse(uuid, { lock })
    const standing = yield* authorizeCourse(actor, operation, courseFacts(course))
    return { course, standing }
  })

/** The decision alone, for operations whose actor may also be the assignee or invitee. */
export const refusalOn = (actor: Actor, operation: CourseOperation, course: CourseRow) =>
  Effect.map(standingOn(actor, course.uuid), (standing) => decide(operation, courseFacts(course), standing))

export const requireProfile = (profileUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT 1 FROM profiles WHERE uuid = ${profileUuid}`
    if (rows.length === 0) return yield* new NotFound({ message: `No profile ${profileUuid}` })
  })

/**
 * A scope is the course (nothing), one of its runs, or one of its groups (404 for another
 * course's). A group scope names the group's run too (given or not; a different run is 404), so a
 * group-scoped assignment is also counted where run-scoped checks look. Returns the scope as stored.
 */
export const requireScope = (courseUuid: string, scope: { readonly runUuid?: string | undefined; readonly groupUuid?: string | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (scope.groupUuid !== undefined) {
      const [group] = yield* Effect.flatMap(
        sql`SELECT run_uuid FROM learning_groups WHERE uuid = ${scope.groupUuid} AND course_uuid = ${courseUuid}`,
        decodeRunUuids
      )
      if (group === undefined || scope.runUuid !== undefined && scope.runUuid !== group.run_uuid) {
        return yield* new NotFound({ message: `scope.groupUuid: no group ${scope.groupUuid} in this course${scope.runUuid !== undefined ? " and run" : ""}` })
      }
      return { runUuid: group.run_uuid, groupUuid: scope.groupUuid }
    }
    if (scope.runUuid !== undefined) {
      const rows = yield* sql`SELECT 1 FROM learning_runs WHERE uuid = ${scope.runUuid} AND course_uuid = ${courseUuid}`
      if (rows.length === 0) return yield* new NotFound({ message: `No run ${scope.runUuid} in this course` })
      return { runUuid: scope.runUuid }
    }
    return {}
  })

/** Atoms only the owner holds cannot be granted or denied (400 naming them). */
export const requireGrantable = (grants: ReadonlyArray<Atom>, denies: ReadonlyArray<Atom>) => {
  const refused = [...grants, ...denies].filter((atom) => ownerOnlyAtoms.includes(atom))
  return refused.length === 0
    ? Effect.void
    : Effect.fail(new InvalidRequest({ message: `grants/denies: ${refused.join(", ")} belong to the owner alone and cannot be granted or denied` }))
}

/**
 * `conflict_of_interest`: a profile enrolled as a learner (an enrollment that was not refused,
 * declined, let expire or cancelled) in the run of the scope, or anywhere in the course for a
 * course-wide role, cannot also be its staff.
 */
export const requireNoEnrollment = (courseUuid: string, profileUuid: string, runUuid?: string | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT 1 FROM learning_enrollments WHERE course_uuid = ${courseUuid} AND profile_uuid = ${profileUuid}
      AND status NOT IN ('declined', 'rejected', 'expired', 'cancelled')
      ${runUuid !== undefined ? sql`AND run_uuid = ${runUuid}` : sql``} LIMIT 1`
    if (rows.length > 0) {
      return yield* new ConflictOfInterest({ message: "The profile is enrolled as a learner here; a learner cannot be staff of their own run" })
    }
  })

/** One invited or active assignment per profile, role and scope; the owner is never assigned another role. */
export const requireNotAssigned = (
  courseUuid: string,
  profileUuid: string,
  role: StaffRole,
  scope: { readonly runUuid?: string | undefined; readonly groupUuid?: string | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT role FROM learning_staff WHERE course_uuid = ${courseUuid} AND profile_uuid = ${profileUuid}
      AND status IN ('invited', 'active') AND (role = 'owner' OR (role = ${role}
        AND run_uuid IS NOT DISTINCT FROM ${scope.runUuid ?? null}::uuid AND group_uuid IS NOT DISTINCT FROM ${scope.groupUuid ?? null}::uuid))`,
      decodeRoles
    )
    if (rows.some((row) => row.role === "owner")) return yield* new InvalidState({ message: "The profile is the course's owner" })
    if (rows.length > 0) return yield* new InvalidState({ message: "The profile already holds or was already invited to this role and scope" })
  })

/**
 * Where a revoked reviewer's claims go back to the review pool, inside
 * the revoking transaction: claimed staff review assignments the profile no longer may hold
 * (no other active assignment with `review` for that run) become pooled (ReviewAssignments.ts).
 */
export const returnClaimsToPool = (assignment: { readonly uuid: string; readonly courseUuid: string; readonly profileUuid: string }) =>
  Effect.asVoid(returnRevokedClaims(assignment))

// ---- operations ----

/** learning.staff.list: staff see every invited and active assignment in full; learners the active ones' names and roles. */
export const listStaff = (
  actor: Actor,
  courseUuid: string,
  filter: { readonly role?: StaffRole | undefined; readonly runUuid?: string | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { standing } = yield* authorizedCourse(actor, "learning.staff.list", courseUuid, false)
    const staff = standing.assignments.length > 0
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const conditions = [
      sql`s.course_uuid = ${courseUuid}`,
      staff ? sql`s.status IN ('invited', 'active')` : sql`s.status = 'active'`,
      ...(filter.role !== undefined ? [sql`s.role = ${filter.role}`] : []),
      // Who acts in a run: its run-scoped staff and the course-wide ones.
      ...(filter.runUuid !== undefined ? [sql`(s.run_uuid = ${filter.runUuid} OR (s.run_uuid IS NULL AND s.group_uuid IS NULL))`] : []),
      ...(position._tag === "Some" ? [sql`(s.created_at, s.uuid) > (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)`] : [])
    ]
    const rows = yield* Effect.flatMap(
      sql`${sql.literal(assignmentSelect)} WHERE ${sql.and(conditions)}
      ORDER BY s.created_at, s.uuid LIMIT ${limit + 1}`,
      decodeAssignments
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => assignmentView(row, !staff))
  })

/** learning.staff.invitations: the caller's pending staff invitations, newest first. */
export const listStaffInvitations = (actor: Actor, filter: { readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`${sql.literal(assignmentSelect)}
      WHERE s.profile_uuid = ${actor.profileUuid} AND s.status = 'invited'
        ${position._tag === "Some" ? sql`AND (s.created_at, s.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY s.created_at DESC, s.uuid DESC LIMIT ${limit + 1}`,
      decodeAssignments
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => assignmentView(row))
  })

/** learning.staff.assign: the owner invites a profile to a role and scope; the assignment waits for the invitee's acceptance. */
export const inviteStaff = (
  actor: Actor,
  courseUuid: string,
  input: {
    readonly requestUuid: string
    readonly profileUuid: string
    readonly role: Exclude<StaffRole, "owner">
    readonly scope: { readonly runUuid?: string | undefined; readonly groupUuid?: string | undefined }
    readonly grants?: ReadonlyArray<Atom> | undefined
    readonly denies?: ReadonlyArray<Atom> | undefined
  }
) =>
  once(actor, "learning.staff.assign", input, StaffAssignment, Effect.gen(function*() {
    yield* authorizedCourse(actor, "learning.staff.assign", courseUuid, true)
    yield* requireGrantable(input.grants ?? [], input.denies ?? [])
    yield* requireProfile(input.profileUuid)
    const scope: { readonly runUuid?: string; readonly groupUuid?: string } = yield* requireScope(courseUuid, input.scope)
    yield* requireNotAssigned(courseUuid, input.profileUuid, input.role, scope)
    yield* requireNoEnrollment(courseUuid, input.profileUuid, scope.runUuid)
    const uuid = yield* assignStaff({
      courseUuid,
      profileUuid: input.profileUuid,
      role: input.role,
      runUuid: scope.runUuid,
      groupUuid: scope.groupUuid,
      grants: input.grants,
      denies: input.denies,
      byProfileUuid: actor.profileUuid,
      requestUuid: input.requestUuid,
      status: "invited"
    })
    return assignmentView(yield* loadAssignment(uuid))
  }))

/** Moves an assignment along `staffTransitions` at `expectedRevision`, with its audit row. */
const moveAssignment = (
  actor: Actor,
  row: AssignmentRow,
  change: {
    readonly operation: typeof staffTransitions[number]["operation"]
    readonly by: StaffActor
    readonly expectedRevision: number
    readonly requestUuid: string
    readonly reason?: string | undefined
  }
) =>
  Effect.gen(function*() {
    if (row.role === "owner") {
      return yield* new OwnerRequired({ message: "The owner's assignment changes only by transferring ownership (learning.ownership.invite)" })
    }
    const to = yield* staffTransition(change.operation, change.by, row)
    yield* requireRevision("staff assignment", row.revision, change.expectedRevision)
    yield* setAssignmentStatus(row.uuid, to, change.reason ?? "")
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: change.operation.replace("learning.", ""),
      subjectKind: "staff_assignment",
      subjectUuid: row.uuid,
      before: { status: row.status },
      after: { status: to, profileUuid: row.profile_uuid, role: row.role },
      reason: change.reason,
      requestUuid: change.requestUuid
    })
    if (to === "revoked" && row.status === "active") {
      yield* returnClaimsToPool({ uuid: row.uuid, courseUuid: row.course_uuid, profileUuid: row.profile_uuid })
    }
    return assignmentView(yield* loadAssignment(row.uuid))
  })

/** learning.staff.accept: the invitee accepts; only they may (anyone else: 404). */
export const acceptStaff = (actor: Actor, assignmentUuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number }) =>
  once(actor, "learning.staff.accept", input, StaffAssignment, Effect.gen(function*() {
    const found = yield* loadAssignment(assignmentUuid)
    if (found.profile_uuid !== actor.profileUuid) return yield* new NotFound({ message: `No staff assignment ${assignmentUuid}` })
    yield* loadCourse(found.course_uuid, { lock: true })
    yield* lockAssignment(assignmentUuid)
    const row = yield* loadAssignment(assignmentUuid)
    if (row.status === "invited") yield* requireNoEnrollment(row.course_uuid, row.profile_uuid, row.run_uuid ?? undefined)
    return yield* moveAssignment(actor, row, { operation: "learning.staff.accept", by: "assignee", ...input })
  }))

/**
 * learning.staff.revoke: the owner revokes an assignment, or its assignee leaves (an invitation
 * they decline becomes `rejected`). The owner's own assignment: `owner_required`.
 */
export const revokeStaff = (
  actor: Actor,
  courseUuid: string,
  input: { readonly requestUuid: string; readonly assignmentUuid: string; readonly expectedRevision: number; readonly reason: string }
) =>
  once(actor, "learning.staff.revoke", input, StaffAssignment, Effect.gen(function*() {
    const course = yield* loadCourse(courseUuid, { lock: true })
    yield* lockAssignment(input.assignmentUuid)
    const row = yield* loadAssignment(input.assignmentUuid).pipe(
      Effect.filterOrFail((found) => found.course_uuid === courseUuid, () => new NotFound({ message: `No staff assignment ${input.assignmentUuid}` }))
    )
    const assignee = row.profile_uuid === actor.profileUuid && row.role !== "owner"
    if (!assignee) {
      const refusal = yield* refusalOn(actor, "learning.staff.revoke", course)
      if (refusal !== undefined) return yield* refusal
    }
    return yield* moveAssignment(actor, row, { operation: "learning.staff.revoke", by: assignee ? "assignee" : "owner", ...input })
  }))

/** learning.staff.permissions: the owner sets grants, denies and scope of an invited or active assignment. */
export const setStaffPermissions = (
  actor: Actor,
  courseUuid: string,
  assignmentUuid: string,
  input: {
    readonly requestUuid: string
    readonly expectedRevision: number
    readonly grants: ReadonlyArray<Atom>
    readonly denies: ReadonlyArray<Atom>
    readonly scope?: { readonly runUuid?: string | undefined; readonly groupUuid?: string | undefined } | undefined
  }
) =>
  once(actor, "learning.staff.permissions", input, StaffAssignment, Effect.gen(function*() {
    yield* authorizedCourse(actor, "learning.staff.permissions", courseUuid, true)
    yield* lockAssignment(assignmentUuid)
    const row = yield* loadAssignment(assignmentUuid).pipe(
      Effect.filterOrFail((found) => found.course_uuid === courseUuid, () => new NotFound({ message: `No staff assignment ${assignmentUuid}` }))
    )
    if (row.role === "owner") return yield* new OwnerRequired({ message: "The owner holds every permission; transfer ownership to change it" })
    yield* staffTransition("learning.staff.permissions", "owner", row)
    yield* requireRevision("staff assignment", row.revision, input.expectedRevision)
    yield* requireGrantable(input.grants, input.denies)
    const scope: { readonly runUuid?: string | undefined; readonly groupUuid?: string | undefined } = input.scope !== undefined
      ? yield* requireScope(courseUuid, input.scope)
      : { runUuid: row.run_uuid ?? undefined, groupUuid: row.group_uuid ?? undefined }
    if (input.scope !== undefined) yield* requireNoEnrollment(courseUuid, row.profile_uuid, scope.runUuid)
    yield* setAssignmentPermissions(assignmentUuid, {
      grants: input.grants,
      denies: input.denies,
      runUuid: scope.runUuid ?? null,
      groupUuid: scope.groupUuid ?? null
    })
    yield* appendAudit({
      courseUuid,
      actorProfileUuid: actor.profileUuid,
      action: "staff.permissions",
      subjectKind: "staff_assignment",
      subjectUuid: assignmentUuid,
      before: { grants: row.grants, denies: row.denies, scope: scopeOf(row) },
      after: { grants: input.grants, denies: input.denies, scope },
      requestUuid: input.requestUuid
    })
    return assignmentView(yield* loadAssignment(assignmentUuid))
  }))

/**
 * learning.staff.candidates (owner): profiles worth inviting, each once under its first source —
 * the owner's other profiles, past staff of the owner's courses, this course's alumni (completed
 * enrollments), the owner's deal partners — without those already invited or active here.
 */
export const staffCandidates = (actor: Actor, courseUuid: string, filter: CandidateFilter) =>
  candidatesFor(actor, "learning.staff.candidates", courseUuid, filter, (sql) =>
    sql`SELECT s.profile_uuid, 'past_staff', 2 FROM learning_staff s JOIN learning_courses c ON c.uuid = s.course_uuid
        WHERE c.owner_profile_uuid = ${actor.profileUuid} AND s.role <> 'owner'
      UNION ALL
      SELECT profile_uuid, 'alumni', 3 FROM learning_enrollments WHERE course_uuid = ${courseUuid} AND status = 'completed'
      UNION ALL
      SELECT CASE WHEN initiator_profile_uuid = ${actor.profileUuid} THEN recipient_profile_uuid ELSE initiator_profile_uuid END, 'deal_partners', 4
        FROM relations WHERE kind = 'deal' AND (initiator_profile_uuid = ${actor.profileUuid} OR recipient_profile_uuid = ${actor.profileUuid})`)

export interface CandidateFilter {
  readonly q?: string | undefined
  readonly source?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/**
 * Candidates (owner only: both candidate lists): the caller's account's other profiles, then the
 * operation's own sources, a `(profile_uuid, source, priority)` union.
 */
export const candidatesFor = (
  actor: Actor,
  operation: "learning.staff.candidates" | "learning.ownership.candidates",
  courseUuid: string,
  filter: CandidateFilter,
  others: (sql: SqlClient.SqlClient) => Fragment
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* authorizedCourse(actor, operation, courseUuid, false)
    return yield* candidatePage(filter, sql`
      SELECT uuid AS profile_uuid, 'owner_profiles' AS source, 1 AS priority FROM profiles
        WHERE account_uuid = ${actor.accountUuid} AND uuid <> ${actor.profileUuid}
      UNION ALL ${others(sql)}`, courseUuid, actor.profileUuid)
  })

/** One page of candidates from a `(profile_uuid, source, priority)` union: distinct profiles by uuid, not yet staff here. */
const candidatePage = (
  filter: CandidateFilter,
  union: Fragment,
  courseUuid: string,
  ownerProfileUuid: string
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`
      SELECT DISTINCT ON (u.profile_uuid) u.profile_uuid, p.name, u.source
      FROM (${union}) u JOIN profiles p ON p.uuid = u.profile_uuid
      WHERE u.profile_uuid <> ${ownerProfileUuid}
        ${filter.source !== undefined ? sql`AND u.source = ${filter.source}` : sql``}
        ${filter.q !== undefined && filter.q !== "" ? sql`AND p.name ILIKE ${"%" + filter.q.replace(/[\\%_]/g, "\\$&") + "%"}` : sql``}
        ${position._tag === "Some" ? sql`AND u.profile_uuid > ${position.value.uuid}::uuid` : sql``}
        AND NOT EXISTS (SELECT 1 FROM learning_staff s WHERE s.course_uuid = ${courseUuid} AND s.profile_uuid = u.profile_uuid
          AND s.status IN ('invited', 'active') AND u.source <> 'instructors')
      ORDER BY u.profile_uuid, u.priority LIMIT ${limit + 1}`,
      decodeCandidates
    )
    return pageOf(rows, limit, (row) => ({ key: row.source, uuid: row.profile_uuid }), (row) => ({
      profileUuid: row.profile_uuid,
      name: row.name,
      source: row.source
    }))
  })
