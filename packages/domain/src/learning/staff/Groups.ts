import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { Forbidden, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { LearningGroupsApi } from "./GroupsApi.js"
import { implement } from "../../operations/Implementation.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { requireRevision } from "../../store/Revision.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import { loadCourse } from "../courses/CourseRepository.js"
import { once } from "../Commands.js"
import { courseFacts as facts } from "./Staff.js"
import { type DeadlineTarget, withDeadlineChanges } from "../corrections/Extensions.js"
import { Group, GroupAssignment, GroupKind as GroupKindSchema, type GroupKindT as GroupKind, GroupStatus as GroupStatusSchema, GroupVisibility } from "./GroupsModel.js"
import { CapacityFull, ConflictOfInterest } from "../LearningErrors.js"
import { authorizeCourse, type CourseOperation, decide, holdsAtom, type Standing, staffScope, standingOn } from "../Permissions.js"
import { loadRun } from "../courses/RunRepository.js"
import { StaffRoleSchema } from "./StaffModel.js"
import { setAssignmentScope } from "./StaffRepository.js"
import { type Transition, transitionTo } from "../Transitions.js"

/**
 * Learning groups: cohorts, teams and sections of
 * one run. Members are enrollments of the run, at most one group of each kind per enrollment;
 * adding locks the group row, so concurrent adds never pass the capacity (`capacity_full`).
 * Group-scoped staff assignments are the group's staff: they see only its members' records
 * (Permissions.ts `covers`). A group's date overrides (schedule.apply with a group) feed its
 * members' effective dates (Dates.ts); joining or leaving emits `learning.deadline.changed` to
 * the members whose computed dates changed. Every change writes its audit row.
 */

type GroupStatus = "active" | "archived"
type GroupActor = "staff" | "learner" | "owner"
type GroupOperation = "learning.groups.members" | "learning.groups.staff" | "learning.groups.update" | "learning.groups.archive"

/** The state machine as data: a group is changed while active; archiving is final (active → archived). */
export const groupTransitions: ReadonlyArray<Transition<GroupOperation, GroupActor, GroupStatus>> = [
  { operation: "learning.groups.members", by: "staff", from: "active", to: "active" },
  // A learner joining or leaving a self-assignment group with their own enrollment.
  { operation: "learning.groups.members", by: "learner", from: "active", to: "active" },
  { operation: "learning.groups.staff", by: "owner", from: "active", to: "active" },
  { operation: "learning.groups.update", by: "staff", from: "active", to: "active" },
  { operation: "learning.groups.archive", by: "staff", from: "active", to: "archived" }
]

/** Enrollment statuses that may be in a group: those holding a place in the run. */
const memberStatuses = ["invited", "offered", "active", "paused", "withdrawal_requested"] as const
/** Who auto-fill places: the run's active enrollments in no group of the kind. */
const autoFillStatuses = ["active"] as const

export const GroupRow = Schema.Struct({
  uuid: Schema.String,
  revision: Schema.Number,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  name: Schema.String,
  kind: GroupKindSchema,
  visibility: GroupVisibility,
  assignment: GroupAssignment,
  capacity: Schema.NullOr(Schema.Number),
  member_count: Schema.Number,
  status: GroupStatusSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
  archived_at: Schema.NullOr(Timestamp),
  position: Schema.String
})
export type GroupRow = typeof GroupRow.Type

const groupColumns = selectList(GroupRow, "g", { position: "g.created_at::text" })
const decodeGroups = rowsDecoder(GroupRow)
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decodeGroupUuids = rowsDecoder(Schema.Struct({ group_uuid: Schema.String }))

const groupNotFound = (uuid: string) => new NotFound({ message: `No group ${uuid}` })

const loadGroup = (uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(groupColumns)} FROM learning_groups g WHERE g.uuid = ${uuid}
      ${lock ? sql`FOR UPDATE OF g` : sql``}`,
      decodeGroups
    )
    return row === undefined ? yield* groupNotFound(uuid) : row
  })

const MemberRow = Schema.Struct({
  group_uuid: Schema.String,
  enrollment_uuid: Schema.String,
  profile_uuid: Schema.String,
  name: Schema.String,
  created_at: Timestamp
})
type MemberRow = typeof MemberRow.Type
const decodeMembers = rowsDecoder(MemberRow)
const memberColumns = selectList(MemberRow, "m", { profile_uuid: "e.profile_uuid", name: "p.name" })

const StaffRefRow = Schema.Struct({
  group_uuid: Schema.String,
  uuid: Schema.String,
  profile_uuid: Schema.String,
  name: Schema.String,
  role: StaffRoleSchema,
  status: Schema.Literal("invited", "active")
})
type StaffRefRow = typeof StaffRefRow.Type
const decodeStaffRefs = rowsDecoder(StaffRefRow)
const staffRefColumns = selectList(StaffRefRow, "s", { name: "p.name" })

const staffRefs = (groupUuids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    groupUuids.length === 0 ? Effect.succeed([] as ReadonlyArray<StaffRefRow>) : Effect.flatMap(
      sql`
      SELECT ${sql.literal(staffRefColumns)} FROM learning_staff s JOIN profiles p ON p.uuid = s.profile_uuid
      WHERE s.group_uuid IN ${sql.in([...groupUuids])} AND s.status IN ('invited', 'active') ORDER BY s.created_at, s.uuid`,
      decodeStaffRefs
    ))

const members = (groupUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(memberColumns)}
      FROM learning_group_members m JOIN learning_enrollments e ON e.uuid = m.enrollment_uuid JOIN profiles p ON p.uuid = e.profile_uuid
      WHERE m.group_uuid = ${groupUuid} ORDER BY m.created_at, m.enrollment_uuid`,
      decodeMembers
    ))

const view = (
  row: GroupRow,
  extras: { readonly members?: ReadonlyArray<MemberRow>; readonly staff?: ReadonlyArray<StaffRefRow>; readonly joined?: boolean }
): Group => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  runUuid: row.run_uuid,
  name: row.name,
  kind: row.kind,
  visibility: row.visibility,
  assignment: row.assignment,
  ...(row.capacity !== null ? { capacity: row.capacity } : {}),
  status: row.status,
  memberCount: row.member_count,
  ...(extras.members !== undefined
    ? { members: extras.members.map((m) => ({ enrollmentUuid: m.enrollment_uuid, profileUuid: m.profile_uuid, name: m.name, addedAt: m.created_at })) }
    : {}),
  ...(extras.staff !== undefined
    ? {
      staff: extras.staff.filter((s) => s.group_uuid === row.uuid).map((s) => ({
        assignmentUuid: s.uuid,
        profileUuid: s.profile_uuid,
        profileName: s.name,
        role: s.role,
        status: s.status
      }))
    }
    : {}),
  ...(extras.joined !== undefined ? { joined: extras.joined } : {}),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  ...(row.archived_at !== null ? { archivedAt: row.archived_at } : {})
})

/** One group in full, as its staff see it after a change: members and staff refs. */
const fullView = (uuid: string) =>
  Effect.gen(function*() {
    const row = yield* loadGroup(uuid, false)
    return view(row, { members: yield* members(uuid), staff: yield* staffRefs([uuid]) })
  })

/**
 * Loads (locked) a group and decides an operation on it: the check's target is the group's run
 * and the group itself, so its group-scoped staff are in scope. Returns the refusal rather than
 * failing, for the learner's self-assignment path.
 */
const groupFor = (actor: Actor, operation: CourseOperation, groupUuid: string) =>
  Effect.gen(function*() {
    const group = yield* loadGroup(groupUuid, true)
    const course = yield* loadCourse(group.course_uuid, { lock: false })
    const standing = yield* standingOn(actor, group.course_uuid)
    const refusal = decide(operation, facts(course), standing, { runUuid: group.run_uuid, groupUuids: [group.uuid] })
    return { group, standing, refusal }
  })

const audit = (actor: Actor, group: GroupRow, action: string, requestUuid: string, before: unknown, after: unknown) =>
  appendAudit({
    courseUuid: group.course_uuid,
    actorProfileUuid: actor.profileUuid,
    action,
    subjectKind: "group",
    subjectUuid: group.uuid,
    before,
    after,
    requestUuid
  })

/**
 * A group's revision counts changes of the group itself (settings, staff), not of its membership:
 * `expectedRevision` on groups.members says "the group I saw (its capacity, assignment) is still
 * this one", so concurrent joins do not refuse each other; the row lock and the capacity decide.
 */
const bump = (groupUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE learning_groups SET revision = revision + 1, updated_at = now() WHERE uuid = ${groupUuid}`)

const setMemberCount = (groupUuid: string, memberCount: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE learning_groups SET member_count = ${memberCount}, updated_at = now() WHERE uuid = ${groupUuid}`)

// ---- create and list ----

/** learning.groups.create: roster_manage in the run; the run must not be cancelled or archived. */
export const createGroup = (
  actor: Actor,
  runUuid: string,
  input: {
    readonly requestUuid: string
    readonly name: string
    readonly kind: GroupKind
    readonly visibility: "separate" | "visible"
    readonly assignment: "manual" | "random" | "self"
    readonly capacity?: number | undefined
  }
) =>
  once(actor, "learning.groups.create", input, Group, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = yield* loadRun(runUuid, { lock: false })
    const course = yield* loadCourse(run.course_uuid, { lock: false })
    yield* authorizeCourse(actor, "learning.groups.create", facts(course), { runUuid })
    if (run.status === "cancelled" || run.status === "archived") return yield* new InvalidState({ message: `The run is ${run.status}; no groups can be added` })
    const uuid = crypto.randomUUID()
    yield* sql`INSERT INTO learning_groups (uuid, course_uuid, run_uuid, name, kind, visibility, assignment, capacity, created_by)
      VALUES (${uuid}, ${run.course_uuid}, ${runUuid}, ${input.name}, ${input.kind}, ${input.visibility}, ${input.assignment},
        ${input.capacity ?? null}, ${actor.profileUuid})`
    const group = yield* loadGroup(uuid, false)
    const { requestUuid: _, ...after } = input
    yield* audit(actor, group, "groups.create", input.requestUuid, undefined, after)
    return view(group, { members: [], staff: [] })
  }))

/**
 * learning.groups.list: staff see the groups in their scope (course-wide: all; run-scoped: their
 * runs; group-scoped: their groups) with staff refs; a learner sees, in the runs they are enrolled
 * in, their own groups, visible groups and self-assignment groups they may join, with `joined`.
 */
export const listGroups = (
  actor: Actor,
  courseUuid: string,
  query: { readonly runUuid?: string | undefined; readonly kind?: GroupKind | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const course = yield* loadCourse(courseUuid, { lock: false })
    const standing = yield* authorizeCourse(actor, "learning.groups.list", facts(course))
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const staff = standing.assignments.length > 0
    const scope = staffScope(standing.assignments)
    const mine = sql`SELECT m.group_uuid FROM learning_group_members m JOIN learning_enrollments e ON e.uuid = m.enrollment_uuid
      WHERE e.profile_uuid = ${actor.profileUuid} AND e.course_uuid = ${courseUuid}`
    const reach = staff
      ? scope.course
        ? sql`TRUE`
        : sql`(${scope.runs.length > 0 ? sql`g.run_uuid IN ${sql.in(scope.runs)}` : sql`FALSE`}
            OR ${scope.groups.length > 0 ? sql`g.uuid IN ${sql.in(scope.groups)}` : sql`FALSE`})`
      : sql`(g.uuid IN (${mine}) OR (g.status = 'active' AND (g.visibility = 'visible' OR g.assignment = 'self')
          AND g.run_uuid IN (SELECT run_uuid FROM learning_enrollments WHERE profile_uuid = ${actor.profileUuid} AND course_uuid = ${courseUuid}
            AND status IN ${sql.in([...memberStatuses])})))`
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(groupColumns)} FROM learning_groups g
      WHERE g.course_uuid = ${courseUuid} AND ${reach}
        ${query.runUuid !== undefined ? sql`AND g.run_uuid = ${query.runUuid}` : sql``}
        ${query.kind !== undefined ? sql`AND g.kind = ${query.kind}` : sql``}
        ${position._tag === "Some" ? sql`AND (g.created_at, g.uuid) > (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY g.created_at, g.uuid LIMIT ${limit + 1}`,
      decodeGroups
    )
    const shown = rows.slice(0, limit).map((row) => row.uuid)
    if (staff) {
      const refs = yield* staffRefs(shown)
      return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => view(row, { staff: refs }))
    }
    const joined = new Set(shown.length === 0 ? [] : (yield* Effect.flatMap(sql`${mine} AND m.group_uuid IN ${sql.in(shown)}`, decodeGroupUuids)).map((row) => row.group_uuid))
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => view(row, { joined: joined.has(row.uuid) }))
  })

// ---- members ----

const EnrollmentRef = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  status: Schema.String
})
type EnrollmentRef = typeof EnrollmentRef.Type & DeadlineTarget
const decodeEnrollmentRefs = rowsDecoder(EnrollmentRef)
const enrollmentRefColumns = selectList(EnrollmentRef, "e")
const decodeTaken = rowsDecoder(Schema.Struct({ enrollment_uuid: Schema.String, name: Schema.String }))

/** Locks the named enrollments of the run (in uuid order, so concurrent changes never deadlock); 404 naming the first unknown one. */
const lockEnrollments = (runUuid: string, uuids: ReadonlyArray<string>, field: string) =>
  Effect.gen(function*() {
    if (uuids.length === 0) return [] as ReadonlyArray<EnrollmentRef>
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(enrollmentRefColumns)} FROM learning_enrollments e
      WHERE e.uuid IN ${sql.in([...uuids])} AND e.run_uuid = ${runUuid} ORDER BY e.uuid FOR UPDATE`,
      decodeEnrollmentRefs
    )
    const found = new Set(rows.map((row) => row.uuid))
    const missing = uuids.findIndex((uuid) => !found.has(uuid))
    if (missing >= 0) return yield* new NotFound({ message: `${field}.${missing}: no enrollment ${uuids[missing]} in the group's run` })
    return rows
  })

/** 409 when an enrollment to add is already in another active group of the same kind of the run. */
const requireUngrouped = (group: GroupRow, adding: ReadonlyArray<EnrollmentRef>) =>
  Effect.gen(function*() {
    if (adding.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const [taken] = yield* Effect.flatMap(
      sql`SELECT m.enrollment_uuid, g.name FROM learning_group_members m
      JOIN learning_groups g ON g.uuid = m.group_uuid
      WHERE m.enrollment_uuid IN ${sql.in(adding.map((e) => e.uuid))} AND g.kind = ${group.kind} AND g.status = 'active' AND g.uuid <> ${group.uuid}
      LIMIT 1`,
      decodeTaken
    )
    if (taken !== undefined) {
      return yield* new InvalidState({ message: `Enrollment ${taken.enrollment_uuid} is already in the ${group.kind} "${taken.name}"; remove it there first` })
    }
  })

/** Auto-fill: up to `count` random active enrollments of the run in no active group of this kind, locked (skipping rows others hold). */
const autoFillCandidates = (group: GroupRow, count: number | undefined, excluded: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (count === 0) return [] as ReadonlyArray<EnrollmentRef>
    return yield* Effect.flatMap(
      sql`SELECT ${sql.literal(enrollmentRefColumns)} FROM learning_enrollments e
      WHERE e.run_uuid = ${group.run_uuid} AND e.status IN ${sql.in([...autoFillStatuses])}
        ${excluded.length > 0 ? sql`AND e.uuid NOT IN ${sql.in([...excluded])}` : sql``}
        AND NOT EXISTS (SELECT 1 FROM learning_group_members m JOIN learning_groups g ON g.uuid = m.group_uuid
          WHERE m.enrollment_uuid = e.uuid AND g.kind = ${group.kind} AND g.status = 'active')
      ORDER BY random() ${count !== undefined ? sql`LIMIT ${count}` : sql``} FOR UPDATE OF e SKIP LOCKED`,
      decodeEnrollmentRefs
    )
  })

/**
 * learning.groups.members: roster_manage in scope adds, removes and auto-fills; adding (and
 * auto-fill) needs roster_manage for the whole run, so group-scoped staff only remove (they do not
 * see other learners). A learner joins or leaves an active self-assignment group with their own
 * enrollment (docs/decisions.md). The group row is locked first: concurrent adds queue, and none
 * passes the capacity (409 `capacity_full`).
 */
export const changeMembers = (
  actor: Actor,
  groupUuid: string,
  input: {
    readonly requestUuid: string
    readonly expectedRevision: number
    readonly add: ReadonlyArray<string>
    readonly remove: ReadonlyArray<string>
    readonly autoFill?: boolean | undefined
  }
) =>
  once(actor, "learning.groups.members", input, Group, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { group, refusal, standing } = yield* groupFor(actor, "learning.groups.members", groupUuid)
    const by = refusal === undefined ? "staff" as const : yield* selfAssignment(actor, group, standing, input, refusal)
    yield* transitionTo(groupTransitions, { resource: "group", uuid: group.uuid }, "learning.groups.members", by, group.status)
    yield* requireRevision("group", group.revision, input.expectedRevision)
    const runWide = by === "learner" || holdsAtom(standing.assignments, "roster_manage", { runUuid: group.run_uuid })
    if (!runWide && (input.add.length > 0 || input.autoFill === true)) {
      // Group-scoped staff: learners outside their group do not exist for them.
      return yield* new NotFound({ message: input.add.length > 0 ? `add.0: no enrollment ${input.add[0]} in your groups` : "autoFill: your scope is this group only" })
    }
    const current = new Set((yield* members(group.uuid)).map((m) => m.enrollment_uuid))
    const removing = yield* lockEnrollments(group.run_uuid, [...new Set(input.remove)].filter((uuid) => current.has(uuid)), "remove")
    const listed = yield* lockEnrollments(group.run_uuid, [...new Set(input.add)], "add")
    const notPlaced = listed.findIndex((e) => !(memberStatuses as ReadonlyArray<string>).includes(e.status))
    if (notPlaced >= 0) return yield* new InvalidState({ message: `add: enrollment ${listed[notPlaced]!.uuid} is ${listed[notPlaced]!.status}; only enrollments holding a place join groups` })
    const adding = listed.filter((e) => !current.has(e.uuid))
    yield* requireUngrouped(group, adding)
    const kept = current.size - removing.length + adding.length
    if (group.capacity !== null && kept > group.capacity) {
      return yield* new CapacityFull({ message: `The group holds ${group.capacity}; it would have ${kept} members` })
    }
    const filling = input.autoFill === true
      ? yield* autoFillCandidates(group, group.capacity === null ? undefined : group.capacity - kept, [...adding.map((e) => e.uuid), ...current])
      : []
    const joining = [...adding, ...filling]
    const memberCount = kept + filling.length
    const write = Effect.gen(function*() {
      if (removing.length > 0) {
        yield* sql`DELETE FROM learning_group_members WHERE group_uuid = ${group.uuid} AND enrollment_uuid IN ${sql.in(removing.map((e) => e.uuid))}`
      }
      for (const enrollment of joining) {
        yield* sql`INSERT INTO learning_group_members (group_uuid, enrollment_uuid, added_by) VALUES (${group.uuid}, ${enrollment.uuid}, ${actor.profileUuid})`
      }
      yield* setMemberCount(group.uuid, memberCount)
    })
    // Only a group with date overrides can move its members' dates.
    const [dated] = yield* sql`SELECT 1 FROM learning_date_overrides WHERE group_uuid = ${group.uuid} AND status = 'active' LIMIT 1`
    if (dated === undefined) yield* write
    else yield* withDeadlineChanges([...removing, ...joining], actor.profileUuid, write, { groupUuid: group.uuid })
    yield* audit(actor, group, "groups.members", input.requestUuid, { memberCount: group.member_count }, {
      memberCount,
      added: adding.map((e) => e.uuid),
      autoFilled: filling.map((e) => e.uuid),
      removed: removing.map((e) => e.uuid)
    })
    const changed = yield* loadGroup(group.uuid, false)
    if (by === "learner") return view(changed, { joined: joining.length > 0 })
    return view(changed, { members: yield* members(group.uuid), staff: yield* staffRefs([group.uuid]) })
  }))

/**
 * The learner's path of groups.members: allowed only for an assignment=self group, with nothing
 * but their own enrollments of the run and no auto-fill; otherwise the staff refusal stands.
 */
const selfAssignment = (
  actor: Actor,
  group: GroupRow,
  standing: Standing,
  input: { readonly add: ReadonlyArray<string>; readonly remove: ReadonlyArray<string>; readonly autoFill?: boolean | undefined },
  refusal: NotFound | Forbidden
) =>
  Effect.gen(function*() {
    if (!standing.learner || standing.assignments.length > 0) return yield* refusal
    const sql = yield* SqlClient.SqlClient
    const own = new Set((yield* Effect.flatMap(
      sql`SELECT uuid FROM learning_enrollments WHERE run_uuid = ${group.run_uuid}
      AND profile_uuid = ${actor.profileUuid}`,
      decodeUuids
    )).map((row) => row.uuid))
    if (own.size === 0) return yield* groupNotFound(group.uuid)
    if (group.assignment !== "self") return yield* new Forbidden({ message: "Learners join only self-assignment groups; staff place members here" })
    if (input.autoFill === true || [...input.add, ...input.remove].some((uuid) => !own.has(uuid))) {
      return yield* new Forbidden({ message: "A learner adds or removes only their own enrollment" })
    }
    return "learner" as const
  })

// ---- staff ----

const AssignmentScopeRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  profile_uuid: Schema.String,
  role: StaffRoleSchema,
  status: Schema.String,
  run_uuid: Schema.NullOr(Schema.String),
  group_uuid: Schema.NullOr(Schema.String)
})
type AssignmentScopeRow = typeof AssignmentScopeRow.Type
const decodeAssignmentScopes = rowsDecoder(AssignmentScopeRow)
const assignmentScopeColumns = selectList(AssignmentScopeRow)

/**
 * learning.groups.staff (owner): `add` attaches invited or active assignments of the course —
 * course-wide, of the group's run, or already this group's — whose scope becomes the group (they
 * then see only its members); `remove` detaches this group's assignments back to the group's run.
 */
export const changeGroupStaff = (
  actor: Actor,
  groupUuid: string,
  input: { readonly requestUuid: string; readonly expectedRevision: number; readonly add: ReadonlyArray<string>; readonly remove: ReadonlyArray<string> }
) =>
  once(actor, "learning.groups.staff", input, Group, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { group, refusal } = yield* groupFor(actor, "learning.groups.staff", groupUuid)
    if (refusal !== undefined) return yield* refusal
    yield* transitionTo(groupTransitions, { resource: "group", uuid: group.uuid }, "learning.groups.staff", "owner", group.status)
    yield* requireRevision("group", group.revision, input.expectedRevision)
    const wanted = [...new Set([...input.add, ...input.remove])]
    const rows = wanted.length === 0 ? [] : yield* Effect.flatMap(
      sql`SELECT ${sql.literal(assignmentScopeColumns)}
      FROM learning_staff WHERE uuid IN ${sql.in(wanted)} AND course_uuid = ${group.course_uuid} ORDER BY uuid FOR UPDATE`,
      decodeAssignmentScopes
    )
    const byUuid = new Map(rows.map((row) => [row.uuid, row]))
    const found = (uuid: string, field: string, i: number) => {
      const row = byUuid.get(uuid)
      return row === undefined || !["invited", "active"].includes(row.status)
        ? Effect.fail(new NotFound({ message: `${field}.${i}: no invited or active staff assignment ${uuid} in this course` }))
        : Effect.succeed(row)
    }
    const moves: Array<{ row: AssignmentScopeRow; groupUuid: string | null }> = []
    for (const [i, uuid] of input.add.entries()) {
      const row = yield* found(uuid, "add", i)
      if (row.group_uuid === group.uuid) continue
      if (row.role === "owner") return yield* new InvalidState({ message: `add.${i}: the owner's scope is the whole course` })
      if (row.group_uuid !== null || row.run_uuid !== null && row.run_uuid !== group.run_uuid) {
        return yield* new InvalidState({ message: `add.${i}: the assignment is scoped to another run or group; change its scope first` })
      }
      const [enrolled] = yield* sql`SELECT 1 FROM learning_enrollments WHERE run_uuid = ${group.run_uuid} AND profile_uuid = ${row.profile_uuid}
        AND status NOT IN ('declined', 'rejected', 'expired', 'cancelled') LIMIT 1`
      if (enrolled !== undefined) return yield* new ConflictOfInterest({ message: `add.${i}: the profile is a learner of the group's run` })
      moves.push({ row, groupUuid: group.uuid })
    }
    for (const [i, uuid] of input.remove.entries()) {
      const row = yield* found(uuid, "remove", i)
      if (row.group_uuid !== group.uuid) return yield* new NotFound({ message: `remove.${i}: assignment ${uuid} is not this group's staff` })
      moves.push({ row, groupUuid: null })
    }
    for (const { groupUuid: to, row } of moves) {
      yield* setAssignmentScope(row.uuid, group.run_uuid, to)
      yield* appendAudit({
        courseUuid: group.course_uuid,
        actorProfileUuid: actor.profileUuid,
        action: "groups.staff",
        subjectKind: "staff_assignment",
        subjectUuid: row.uuid,
        before: { runUuid: row.run_uuid, groupUuid: row.group_uuid },
        after: { runUuid: group.run_uuid, groupUuid: to },
        requestUuid: input.requestUuid
      })
    }
    yield* bump(group.uuid)
    return yield* fullView(group.uuid)
  }))

// ---- update ----

/** learning.groups.update: rename, capacity (not below the members; null removes it), visibility, archive (final). */
export const updateGroup = (
  actor: Actor,
  groupUuid: string,
  input: {
    readonly requestUuid: string
    readonly expectedRevision: number
    readonly name?: string | undefined
    readonly capacity?: number | null | undefined
    readonly visibility?: "separate" | "visible" | undefined
    readonly archived?: boolean | undefined
  }
) =>
  once(actor, "learning.groups.update", input, Group, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { group, refusal } = yield* groupFor(actor, "learning.groups.update", groupUuid)
    if (refusal !== undefined) return yield* refusal
    const archiving = input.archived === true
    const status = yield* transitionTo(groupTransitions, { resource: "group", uuid: group.uuid }, archiving ? "learning.groups.archive" : "learning.groups.update", "staff", group.status)
    if (input.archived === false) return yield* new InvalidState({ message: "archived: an archived group stays archived; create a new one" })
    yield* requireRevision("group", group.revision, input.expectedRevision)
    if (input.capacity !== undefined && input.capacity !== null && input.capacity < group.member_count) {
      return yield* new InvalidState({ message: `capacity: the group has ${group.member_count} members; remove some first` })
    }
    const values: Record<string, string | number | null> = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.capacity !== undefined ? { capacity: input.capacity } : {}),
      ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
      status
    }
    yield* sql`UPDATE learning_groups SET ${sql.update(values)}, revision = revision + 1, updated_at = now()
      ${archiving ? sql`, archived_at = now()` : sql``} WHERE uuid = ${group.uuid}`
    yield* audit(actor, group, archiving ? "groups.archive" : "groups.update", input.requestUuid, {
      name: group.name,
      capacity: group.capacity,
      visibility: group.visibility,
      status: group.status
    }, values)
    return yield* fullView(group.uuid)
  }))

// ---- what other modules use ----

/**
 * An enrollment moving to another run (transfers.apply) leaves the groups of its old run, in the
 * moving transaction: the groups are locked (as groups.members does) before their counts drop.
 */
export const leaveRunGroups = (enrollmentUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const groups = yield* Effect.flatMap(
      sql`SELECT uuid FROM learning_groups
      WHERE uuid IN (SELECT group_uuid FROM learning_group_members WHERE enrollment_uuid = ${enrollmentUuid}) ORDER BY uuid FOR UPDATE`,
      decodeUuids
    )
    if (groups.length === 0) return
    yield* sql`DELETE FROM learning_group_members WHERE enrollment_uuid = ${enrollmentUuid}`
    yield* sql`UPDATE learning_groups SET member_count = member_count - 1, updated_at = now() WHERE uuid IN ${sql.in(groups.map((g) => g.uuid))}`
  })

const GroupOfEnrollment = Schema.Struct({ enrollment_uuid: Schema.String, uuid: Schema.String, name: Schema.String, kind: GroupKindSchema })
const decodeGroupsOfEnrollments = rowsDecoder(GroupOfEnrollment)
const groupOfEnrollmentColumns = selectList(GroupOfEnrollment, "g", { enrollment_uuid: "m.enrollment_uuid" })

/** The groups of enrollments, keyed by enrollment uuid. */
export const groupsOfEnrollments = (
  enrollmentUuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<{ uuid: string; name: string; kind: GroupKind }>>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (enrollmentUuids.length === 0) return new Map()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`
      SELECT ${sql.literal(groupOfEnrollmentColumns)} FROM learning_group_members m JOIN learning_groups g ON g.uuid = m.group_uuid
      WHERE m.enrollment_uuid IN ${sql.in([...enrollmentUuids])} AND g.status = 'active' ORDER BY g.created_at, g.uuid`,
      decodeGroupsOfEnrollments
    )
    const result = new Map<string, Array<{ uuid: string; name: string; kind: GroupKind }>>()
    for (const row of rows) {
      const list = result.get(row.enrollment_uuid) ?? []
      list.push({ uuid: row.uuid, name: row.name, kind: row.kind })
      result.set(row.enrollment_uuid, list)
    }
    return result
  })

/** The group operations over this module. */
export const LearningGroupsOperations = implement(LearningGroupsApi)({
  "learning.groups.create": ({ path, payload }, actor) => createGroup(actor, path.run, payload),
  "learning.groups.list": ({ path, urlParams }, actor) => listGroups(actor, path.course, urlParams),
  "learning.groups.members": ({ path, payload }, actor) => changeMembers(actor, path.group, payload),
  "learning.groups.staff": ({ path, payload }, actor) => changeGroupStaff(actor, path.group, payload),
  "learning.groups.update": ({ path, payload }, actor) => updateGroup(actor, path.group, payload)
})
