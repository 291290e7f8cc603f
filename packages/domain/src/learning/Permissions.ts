import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { Forbidden, NotFound } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { rowsDecoder } from "../store/Rows.js"

/**
 * The learning permission model as data: roles, the atoms each role holds by
 * default, and what every learning operation requires. `authorizeCourse` is the one place that
 * answers "may this caller do this to this course or run": 404 when the caller has no role on the
 * course and the course is not public to them, 403 when they may know it but lack the right.
 */

export const staffRoles = ["owner", "instructor", "reviewer", "assistant", "analyst"] as const
export type StaffRole = typeof staffRoles[number]

const decodeGroupMemberships = rowsDecoder(Schema.Struct({ group_uuid: Schema.String }))
/** An active staff assignment of the caller, or the one all-NULL row that says the caller is a learner (`standingOn`). */
const decodeStandingRows = rowsDecoder(Schema.Struct({
  role: Schema.NullOr(Schema.Literal(...staffRoles)),
  run_uuid: Schema.NullOr(Schema.String),
  group_uuid: Schema.NullOr(Schema.String),
  grants: Schema.NullOr(Schema.Array(Schema.String)),
  denies: Schema.NullOr(Schema.Array(Schema.String))
}))

export const atoms = [
  "content_edit",
  "content_publish",
  "checkers_manage",
  "runs_manage",
  "roster_manage",
  "dates_grant",
  "review",
  "appeals_resolve",
  "grades_release",
  "grades_adjust",
  "community_staff",
  "analytics_read",
  "audit_read",
  "pii_read",
  "staff_manage",
  "ownership"
] as const
export type Atom = typeof atoms[number]

/** Atoms only the owner ever holds: `staff.permissions` can neither grant nor deny them. */
export const ownerOnlyAtoms: ReadonlyArray<Atom> = ["staff_manage", "ownership"]

/** The atoms each role holds unless denied (the owner holds every atom, always). */
export const roleAtoms: Readonly<Record<StaffRole, ReadonlyArray<Atom>>> = {
  owner: atoms,
  // Everything but staff and ownership.
  instructor: atoms.filter((atom) => atom !== "staff_manage" && atom !== "ownership"),
  reviewer: ["review", "appeals_resolve", "grades_release", "community_staff"],
  assistant: ["roster_manage", "dates_grant", "community_staff"],
  analyst: ["analytics_read", "audit_read"]
}

/**
 * What an operation requires of the caller on the course it names:
 * - `public`: anyone the course is visible to (published or archived, listed or unlisted), its staff and learners;
 * - `staff`: any active staff assignment on the course (author reads);
 * - `member`: the course's staff and its learners (the staff list: learners see names and roles);
 * - `teaching`: any active staff assignment; a learner or visitor who may see the course gets 403
 *   (a dashboard of the caller's own work, not an author record whose existence is hidden);
 * - `owner`: the owner only;
 * - an atom: a staff assignment holding it (in scope of the run when the operation names one).
 * A caller with no role on a course that is not public to them gets 404 in every case.
 */
export type Requirement =
  | { readonly kind: "public" }
  | { readonly kind: "staff" }
  | { readonly kind: "member" }
  | { readonly kind: "teaching" }
  | { readonly kind: "owner" }
  | { readonly kind: "atom"; readonly atom: Atom }

const atom = (name: Atom): Requirement => ({ kind: "atom", atom: name })

/** Every L1 operation that acts on a course, and what it requires (column "who"). */
export const requirements = {
  "learning.courses.get": { kind: "public" },
  "learning.courses.update": atom("content_edit"),
  "learning.courses.author_get": { kind: "staff" },
  "learning.courses.archive": { kind: "owner" },
  "learning.courses.bundle": atom("content_edit"),
  "learning.courses.copy": atom("content_edit"),
  "learning.courses.preview": { kind: "staff" },
  "learning.courses.publish": atom("content_publish"),
  "learning.courses.validate": { kind: "staff" },
  "learning.versions.list": { kind: "staff" },
  "learning.runs.create": atom("runs_manage"),
  "learning.runs.list": { kind: "public" },
  "learning.runs.update": atom("runs_manage"),
  "learning.runs.archive": atom("runs_manage"),
  "learning.runs.cancel": { kind: "owner" },
  "learning.runs.finish": atom("runs_manage"),
  "learning.admissions.preview": { kind: "public" },
  "learning.schedule.preview": atom("runs_manage"),
  "learning.schedule.apply": atom("runs_manage"),
  "learning.audit.list": atom("audit_read"),
  "learning.library.save": atom("content_edit"),
  "learning.library.insert": atom("content_edit"),
  "learning.exports.course": atom("content_edit"),
  "learning.analytics.get": atom("analytics_read"),
  "learning.analytics.export": atom("analytics_read"),
  // L2, the enrollment side: operations on a run or a course (those on one enrollment are in EnrollmentAccess).
  "learning.enrollments.enroll": { kind: "public" },
  "learning.enrollments.invite": atom("roster_manage"),
  "learning.enrollments.course_list": { kind: "staff" },
  "learning.transfers.preview": atom("roster_manage"),
  "learning.transfers.apply": atom("roster_manage"),
  // L4 people: staff and ownership atoms are the owner's alone.
  "learning.staff.list": { kind: "member" },
  "learning.staff.assign": atom("staff_manage"),
  "learning.staff.candidates": { kind: "owner" },
  "learning.staff.revoke": atom("staff_manage"),
  "learning.staff.permissions": atom("staff_manage"),
  "learning.staff.email_invite": atom("staff_manage"),
  "learning.staff.email_list": atom("staff_manage"),
  "learning.ownership.candidates": atom("ownership"),
  "learning.ownership.invite": atom("ownership"),
  "learning.ownership.cancel": atom("ownership"),
  "learning.course_reviews.list": { kind: "public" },
  // Teaching: the dashboard's counts narrow to the caller's atoms and scope (Teaching.ts).
  "learning.teaching.get": { kind: "teaching" },
  // Community: thread reads and writes decide per thread (Community.ts).
  "learning.community.recipients": { kind: "member" },
  "learning.community.staff_create": atom("community_staff"),
  "learning.community.staff_list": atom("community_staff"),
  // Groups: roster_manage covers groups; group staff are the owner's; learners list their own and visible groups.
  "learning.groups.create": atom("roster_manage"),
  "learning.groups.list": { kind: "member" },
  "learning.groups.members": atom("roster_manage"),
  "learning.groups.staff": atom("staff_manage"),
  "learning.groups.update": atom("roster_manage"),
  // L3 corrections: extensions, incidents, appeals, regrade plans.
  "learning.extensions.course_list": atom("dates_grant"),
  "learning.extensions.decide": atom("dates_grant"),
  "learning.incidents.create": atom("runs_manage"),
  "learning.incidents.list": { kind: "staff" },
  "learning.incidents.get": { kind: "staff" },
  "learning.incidents.preview": atom("runs_manage"),
  "learning.incidents.apply": atom("runs_manage"),
  "learning.appeals.list": atom("appeals_resolve"),
  "learning.appeals.replacements": atom("appeals_resolve"),
  /** First level (an open appeal); closing an escalated one needs grades_adjust (Appeals.ts). */
  "learning.appeals.decide": atom("appeals_resolve"),
  "learning.regrade_plans.create": atom("grades_adjust"),
  "learning.regrade_plans.get": atom("grades_adjust"),
  "learning.regrade_plans.commit": atom("grades_adjust"),
  // L3 reviews and automatic overrides: the course-level lists; scope and "own" narrowing in Reviews.ts / AutomaticOverrides.ts.
  "learning.reviews.list": { kind: "staff" },
  "learning.reviews.assignment_list": { kind: "member" },
  "learning.automatic_overrides.candidates": { kind: "staff" },
  // L3 checkers and grading: checkers are authoring; usage is also the analyst's; regrades adjust grades.
  "learning.checkers.list": atom("checkers_manage"),
  "learning.checkers.get": atom("checkers_manage"),
  "learning.checkers.create": atom("checkers_manage"),
  "learning.checkers.preflight": atom("checkers_manage"),
  "learning.preflights.get": atom("checkers_manage"),
  "learning.checkers.resume": atom("checkers_manage"),
  "learning.checkers.suspend": atom("checkers_manage"),
  "learning.checkers.control_history": atom("checkers_manage"),
  "learning.grading.diagnostics": atom("checkers_manage"),
  "learning.grading.usage": atom("analytics_read"),
  "learning.regrades.candidates": atom("grades_adjust"),
  "learning.regrades.create": atom("grades_adjust"),
  "learning.regrades.get": atom("grades_adjust"),
  "learning.regrades.apply": atom("grades_adjust")
} as const satisfies Readonly<Record<string, Requirement>>
export type CourseOperation = keyof typeof requirements

/** One active staff assignment, as the check reads it. */
export interface Assignment {
  readonly role: StaffRole
  readonly runUuid: string | null
  readonly groupUuid: string | null
  readonly grants: ReadonlyArray<string>
  readonly denies: ReadonlyArray<string>
}

/** The atoms an assignment holds: its role's, plus grants, minus denies; the owner's are fixed. */
export const atomsOf = (assignment: Assignment): ReadonlySet<Atom> => {
  if (assignment.role === "owner") return new Set(atoms)
  const held = new Set<Atom>(roleAtoms[assignment.role])
  for (const grant of assignment.grants) if (atoms.includes(grant as Atom) && !ownerOnlyAtoms.includes(grant as Atom)) held.add(grant as Atom)
  for (const deny of assignment.denies) held.delete(deny as Atom)
  return held
}

/**
 * What a check is about: a run (run-scoped assignments count there) and, for a learner's record,
 * the groups its enrollment is a member of (group-scoped assignments count for those).
 */
export interface Target {
  readonly runUuid?: string | undefined
  readonly groupUuids?: ReadonlyArray<string> | undefined
}

/**
 * Whether an assignment's scope covers a target: a course-scoped assignment everywhere, a
 * run-scoped one its run, a group-scoped one only the records of that group's members.
 */
export const covers = (assignment: Assignment, target: Target): boolean =>
  // Uuids as given (the schema takes upper case) against the stored ones (lower case).
  assignment.groupUuid !== null
    ? (target.groupUuids ?? []).some((group) => group.toLowerCase() === assignment.groupUuid)
    : assignment.runUuid === null || target.runUuid !== undefined && assignment.runUuid === target.runUuid.toLowerCase()

/** Whether assignments allow an atom for a target (`covers` and the assignment holds the atom). */
export const holdsAtom = (assignments: ReadonlyArray<Assignment>, wanted: Atom, target: Target): boolean =>
  assignments.some((assignment) => covers(assignment, target) && atomsOf(assignment).has(wanted))

/** Whether some assignment is group-scoped: only then do checks need the enrollment's groups. */
export const groupScoped = (assignments: ReadonlyArray<Assignment>): boolean => assignments.some((assignment) => assignment.groupUuid !== null)

/** Whether every assignment is group-scoped: such staff get 404 (not 403) for learners outside their groups. */
export const onlyGroupScoped = (assignments: ReadonlyArray<Assignment>): boolean =>
  assignments.length > 0 && assignments.every((assignment) => assignment.groupUuid !== null)

/** The groups an enrollment is a member of (archived groups included: their staff keep seeing their learners). */
export const enrollmentGroupUuids = (enrollmentUuid: string): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(sql`SELECT group_uuid FROM learning_group_members WHERE enrollment_uuid = ${enrollmentUuid}`, decodeGroupMemberships),
      (rows) => rows.map((row) => row.group_uuid)
    ))

/** 404 unless the group is one of the course's (list filters by `groupUuid`). */
export const requireCourseGroup = (courseUuid: string, groupUuid: string | undefined): Effect.Effect<void, NotFound | SqlError, SqlClient.SqlClient> =>
  groupUuid === undefined ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT 1 FROM learning_groups WHERE uuid = ${groupUuid} AND course_uuid = ${courseUuid}`,
      (rows) => rows.length > 0 ? Effect.void : Effect.fail(new NotFound({ message: `groupUuid: no group ${groupUuid} in this course` }))
    ))

/** The target of a check on one enrollment: its run, and its groups when the caller has group-scoped assignments. */
export const enrollmentTarget = (
  assignments: ReadonlyArray<Assignment>,
  enrollment: { readonly uuid: string; readonly runUuid: string }
): Effect.Effect<Target, SqlError, SqlClient.SqlClient> =>
  groupScoped(assignments)
    ? Effect.map(enrollmentGroupUuids(enrollment.uuid), (groupUuids) => ({ runUuid: enrollment.runUuid, groupUuids }))
    : Effect.succeed({ runUuid: enrollment.runUuid })

/**
 * Where assignments hold an atom: everywhere in the course (a course-scoped assignment), in the
 * listed runs, or for the members of the listed groups.
 */
export const atomScope = (
  assignments: ReadonlyArray<Assignment>,
  wanted: Atom
): { readonly course: boolean; readonly runs: ReadonlyArray<string>; readonly groups: ReadonlyArray<string> } => {
  const holding = assignments.filter((assignment) => atomsOf(assignment).has(wanted))
  return {
    course: holding.some((assignment) => assignment.runUuid === null && assignment.groupUuid === null),
    runs: holding.flatMap((assignment) => assignment.runUuid !== null && assignment.groupUuid === null ? [assignment.runUuid] : []),
    groups: holding.flatMap((assignment) => assignment.groupUuid !== null ? [assignment.groupUuid] : [])
  }
}

/** The records whose enrollment (`enrollmentColumn`) is a member of one of the groups, as SQL. */
export const inGroups = (sql: SqlClient.SqlClient, enrollmentColumn: Fragment, groups: ReadonlyArray<string>): Fragment =>
  sql`EXISTS (SELECT 1 FROM learning_group_members gm WHERE gm.enrollment_uuid = ${enrollmentColumn} AND gm.group_uuid IN ${sql.in([...groups])})`

/**
 * The records a scope of `atomScope` (or `staffScope`) reaches, as SQL over their run and
 * enrollment columns: course-wide all, else those of its runs and of its groups' members.
 */
export const scopeReach = (
  sql: SqlClient.SqlClient,
  scope: { readonly course: boolean; readonly runs: ReadonlyArray<string>; readonly groups: ReadonlyArray<string> },
  runColumn: Fragment,
  enrollmentColumn: Fragment
): Fragment =>
  scope.course
    ? sql`TRUE`
    : sql`(${scope.runs.length > 0 ? sql`${runColumn} IN ${sql.in([...scope.runs])}` : sql`FALSE`}
        OR ${scope.groups.length > 0 ? inGroups(sql, enrollmentColumn, scope.groups) : sql`FALSE`})`

/** Whether a scope of `atomScope` (or `staffScope`) reaches anything at all. */
export const reachesAny = (scope: { readonly course: boolean; readonly runs: ReadonlyArray<string>; readonly groups: ReadonlyArray<string> }): boolean =>
  scope.course || scope.runs.length > 0 || scope.groups.length > 0

/** Where the assignments reach regardless of atoms (staff reads such as the roster). */
export const staffScope = (assignments: ReadonlyArray<Assignment>) => ({
  course: assignments.some((assignment) => assignment.runUuid === null && assignment.groupUuid === null),
  runs: [...new Set(assignments.flatMap((assignment) => assignment.runUuid !== null && assignment.groupUuid === null ? [assignment.runUuid] : []))],
  groups: [...new Set(assignments.flatMap((assignment) => assignment.groupUuid !== null ? [assignment.groupUuid] : []))]
})

/** What the check knows of a course: enough to decide visibility. */
export interface CourseFacts {
  readonly uuid: string
  readonly status: "draft" | "published" | "archived"
  readonly visibility: "listed" | "unlisted" | "private"
  readonly latestVersion: number
}

/** The caller's standing on a course: its staff assignments and whether it is a learner there. */
export interface Standing {
  readonly assignments: ReadonlyArray<Assignment>
  readonly learner: boolean
}

export const noStanding: Standing = { assignments: [], learner: false }

/** Reads the caller's active assignments and enrollments on a course. */
export const standingOn = (actor: Actor | undefined, courseUuid: string): Effect.Effect<Standing, SqlError, SqlClient.SqlClient> =>
  actor === undefined ? Effect.succeed(noStanding) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(sql`
      SELECT role, run_uuid, group_uuid, grants, denies FROM learning_staff
      WHERE course_uuid = ${courseUuid} AND profile_uuid = ${actor.profileUuid} AND status = 'active'
      UNION ALL
      -- One row when the caller is a learner of the course: an enrollment that was not refused,
      -- declined, let expire or cancelled (those leave no learner role).
      SELECT NULL, NULL, NULL, NULL, NULL WHERE EXISTS (SELECT 1 FROM learning_enrollments
        WHERE course_uuid = ${courseUuid} AND profile_uuid = ${actor.profileUuid}
          AND status NOT IN ('declined', 'rejected', 'expired', 'cancelled'))`, decodeStandingRows)
    return {
      assignments: rows.filter((row) => row.role !== null).map((row) => ({
        role: row.role!,
        runUuid: row.run_uuid,
        groupUuid: row.group_uuid,
        grants: row.grants ?? [],
        denies: row.denies ?? []
      })),
      learner: rows.some((row) => row.role === null)
    }
  })

/** Whether a course is public to someone with no role on it: published once, and not private. */
export const isPublic = (course: CourseFacts): boolean => course.latestVersion > 0 && course.status !== "draft" && course.visibility !== "private"

export const courseNotFound = (uuid: string) => new NotFound({ message: `No course ${uuid}` })

/**
 * The one authorization decision of the learning area. `target.runUuid` scopes run-scoped
 * assignments. Answers 404 when the caller may not know the course exists (no role, not public,
 * or a staff-only operation asked by someone who is not staff), 403 when it may but lacks the right.
 */
export const decide = (
  operation: CourseOperation,
  course: CourseFacts,
  standing: Standing,
  target: Target = {}
): NotFound | Forbidden | undefined => {
  const requirement: Requirement = requirements[operation]
  const staff = standing.assignments.length > 0
  const known = staff || standing.learner || isPublic(course)
  if (!known) return courseNotFound(course.uuid)
  switch (requirement.kind) {
    case "public":
      return undefined
    case "staff":
      // Author views are records of their own: who is not staff may not learn they exist.
      return staff ? undefined : courseNotFound(course.uuid)
    case "member":
      return staff || standing.learner ? undefined : new Forbidden({ message: `${operation} is for the course's staff and learners` })
    case "teaching":
      return staff ? undefined : new Forbidden({ message: `${operation} is for the course's staff` })
    case "owner":
      return standing.assignments.some((a) => a.role === "owner")
        ? undefined
        : new Forbidden({ message: `${operation} is for the course's owner` })
    case "atom":
      if (holdsAtom(standing.assignments, requirement.atom, target)) return undefined
      // A check about one learner's record (the target names its groups): group-scoped staff do not see learners outside their groups.
      if (target.groupUuids !== undefined && onlyGroupScoped(standing.assignments) && !standing.assignments.some((a) => covers(a, target))) {
        return new NotFound({ message: `No such record in your groups` })
      }
      return new Forbidden({ message: `${operation} needs the ${requirement.atom} permission on this course` })
  }
}

/** `decide` as an effect: reads the caller's standing and fails with its answer. Returns the standing. */
export const authorizeCourse = (
  actor: Actor | undefined,
  operation: CourseOperation,
  course: CourseFacts,
  target: Target = {}
): Effect.Effect<Standing, NotFound | Forbidden | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(standingOn(actor, course.uuid), (standing) => {
    const refusal = decide(operation, course, standing, target)
    return refusal === undefined ? Effect.succeed(standing) : Effect.fail(refusal)
  })
