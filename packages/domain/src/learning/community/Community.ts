import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { LearningCommunityApi } from "./CommunityApi.js"
import { implement } from "../../operations/Implementation.js"
import { checkReferences } from "../../relations/References.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { appendEvent } from "../../store/Outbox.js"
import { requireRevision } from "../../store/Revision.js"
import { rowsDecoder, selectList, Timestamp, uuidArray } from "../../store/Rows.js"
import { appendAudit } from "../Audit.js"
import {
  AuthorRole,
  type RecipientQuery,
  type StaffThreadQuery,
  Thread,
  type ThreadListQuery,
  ThreadMessage,
  type Thread as ThreadType,
  type ThreadMessage as ThreadMessageType,
  ThreadStatus,
  ThreadVisibility
} from "./CommunityModel.js"
import { loadCourse, loadVersion } from "../courses/CourseRepository.js"
import { once } from "../Commands.js"
import {
  atomScope,
  decide,
  enrollmentGroupUuids,
  enrollmentTarget,
  holdsAtom,
  inGroups,
  reachesAny,
  requireCourseGroup,
  scopeReach,
  staffRoles,
  standingOn
} from "../Permissions.js"
import { courseFacts } from "../staff/Staff.js"
import { StaffRoleSchema } from "../staff/StaffModel.js"
import { type Transition, transitionTo } from "../Transitions.js"

/**
 * Community threads: a learner's question or discussion
 * per enrollment (private: the learner and the course's community staff; run: also every learner
 * of the run), or a private thread staff open to a learner. Messages are immutable. The state
 * machine is the table `threadTransitions`; each change writes its audit row and its
 * `learning.community.*` event, addressed to the participants and the community staff in scope,
 * in its transaction. Who may see a thread is decided per thread (`viewerOf`): anyone else 404.
 */

/** Enrollments whose learner takes part in the community: seated, or done. */
export const communityStatuses = ["active", "paused", "withdrawal_requested", "completed"] as const
const inCommunity = (status: string) => (communityStatuses as ReadonlyArray<string>).includes(status)
const closedRuns = ["cancelled", "archived"]

// ---- the state machine as data ----

export type ThreadActor = "learner" | "staff"
type ThreadOperation = "learning.community.reply" | "learning.community.resolve"

/**
 * Every allowed move of a thread: a staff reply answers it, a learner's (re)opens it, even a
 * resolved one; a staff reply to a resolved thread answers it again; the author (learner) or
 * staff resolve an open or answered thread. Anything else answers 409 `invalid_state`.
 */
export const threadTransitions: ReadonlyArray<Transition<ThreadOperation, ThreadActor, ThreadStatus>> = [
  { operation: "learning.community.reply", by: "learner", from: "open", to: "open" },
  { operation: "learning.community.reply", by: "learner", from: "answered", to: "open" },
  { operation: "learning.community.reply", by: "learner", from: "resolved", to: "open" },
  { operation: "learning.community.reply", by: "staff", from: "open", to: "answered" },
  { operation: "learning.community.reply", by: "staff", from: "answered", to: "answered" },
  { operation: "learning.community.reply", by: "staff", from: "resolved", to: "answered" },
  { operation: "learning.community.resolve", by: "learner", from: "open", to: "resolved" },
  { operation: "learning.community.resolve", by: "learner", from: "answered", to: "resolved" },
  { operation: "learning.community.resolve", by: "staff", from: "open", to: "resolved" },
  { operation: "learning.community.resolve", by: "staff", from: "answered", to: "resolved" }
]

// ---- rows and views ----

const ThreadRow = Schema.Struct({
  uuid: Schema.String,
  revision: Schema.Number,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  enrollment_uuid: Schema.String,
  learner_profile_uuid: Schema.String,
  author_profile_uuid: Schema.String,
  author_role: AuthorRole,
  author_name: Schema.String,
  author_public: Schema.Boolean,
  node_key: Schema.NullOr(Schema.String),
  visibility: ThreadVisibility,
  title: Schema.String,
  status: ThreadStatus,
  last_author_role: AuthorRole,
  message_count: Schema.Number,
  last_message_at: Timestamp,
  resolved_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  position: Schema.String,
  enrollment_status: Schema.String,
  run_status: Schema.String
})
type ThreadRow = typeof ThreadRow.Type

const threadSelect = `SELECT ${
  selectList(ThreadRow, "t", {
    author_name: "p.name",
    author_public: "(p.is_public AND p.hidden_by_moderation_at IS NULL)",
    position: "t.created_at::text",
    enrollment_status: "e.status",
    run_status: "r.status"
  })
}
  FROM learning_threads t JOIN profiles p ON p.uuid = t.author_profile_uuid
    JOIN learning_enrollments e ON e.uuid = t.enrollment_uuid JOIN learning_runs r ON r.uuid = t.run_uuid`
const decodeThreads = rowsDecoder(ThreadRow)

const MessageRow = Schema.Struct({
  uuid: Schema.String,
  thread_uuid: Schema.String,
  author_profile_uuid: Schema.String,
  author_role: AuthorRole,
  author_name: Schema.String,
  author_public: Schema.Boolean,
  body: Schema.String,
  file_uuids: Schema.Array(Schema.String),
  created_at: Timestamp,
  position: Schema.String
})
type MessageRow = typeof MessageRow.Type

const messageSelect = `SELECT ${
  selectList(MessageRow, "m", {
    author_name: "p.name",
    author_public: "(p.is_public AND p.hidden_by_moderation_at IS NULL)",
    position: "m.created_at::text"
  })
}
  FROM learning_thread_messages m JOIN profiles p ON p.uuid = m.author_profile_uuid`
const decodeMessages = rowsDecoder(MessageRow)

/** How the caller stands to a thread: its enrollment's learner, community staff in its run's scope, or another learner of a run-visible thread. */
export type Viewer = "learner" | "staff" | "peer"

/** Another learner sees a fellow learner's name only when that profile is public; staff and own words are always named. */
const named = (author: { readonly profileUuid: string; readonly role: AuthorRole; readonly public: boolean }, viewer: Viewer, me: string) =>
  author.role === "staff" || viewer !== "peer" || author.profileUuid === me || author.public

const messageView = (row: MessageRow, viewer: Viewer, me: string): ThreadMessageType => ({
  uuid: row.uuid,
  threadUuid: row.thread_uuid,
  authorRole: row.author_role,
  ...(named({ profileUuid: row.author_profile_uuid, role: row.author_role, public: row.author_public }, viewer, me)
    ? { authorProfileUuid: row.author_profile_uuid, authorName: row.author_name }
    : {}),
  body: row.body,
  fileUuids: [...row.file_uuids],
  createdAt: row.created_at
})

const threadView = (row: ThreadRow, viewer: Viewer, me: string): ThreadType => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  runUuid: row.run_uuid,
  ...(viewer !== "peer" ? { enrollmentUuid: row.enrollment_uuid } : {}),
  ...(row.node_key !== null ? { nodeKey: row.node_key } : {}),
  visibility: row.visibility,
  title: row.title,
  status: row.status,
  authorRole: row.author_role,
  ...(named({ profileUuid: row.author_profile_uuid, role: row.author_role, public: row.author_public }, viewer, me)
    ? { authorName: row.author_name }
    : {}),
  awaitingStaff: row.status === "open" && row.last_author_role === "learner",
  messageCount: row.message_count,
  lastMessageAt: row.last_message_at,
  ...(row.resolved_at !== null ? { resolvedAt: row.resolved_at } : {}),
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const threadNotFound = (uuid: string) => new NotFound({ message: `No thread ${uuid}` })

const loadThread = (uuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(sql`${sql.literal(threadSelect)} WHERE t.uuid = ${uuid} ${lock ? sql`FOR UPDATE OF t` : sql``}`, decodeThreads)
    return row === undefined ? yield* threadNotFound(uuid) : row
  })

/** Whether the profile is a learner of the run who takes part in its community. */
const learnsInRun = (profileUuid: string, runUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`SELECT 1 FROM learning_enrollments WHERE run_uuid = ${runUuid} AND profile_uuid = ${profileUuid}
        AND status IN ${sql.in([...communityStatuses])} LIMIT 1`,
      (rows) => rows.length > 0
    ))

/** Groups a thread of group visibility reaches: the active groups of its enrollment. */
const sharedGroups = (sql: SqlClient.SqlClient, enrollmentColumn: Fragment) =>
  sql`SELECT gm.group_uuid FROM learning_group_members gm JOIN learning_groups g ON g.uuid = gm.group_uuid
    WHERE gm.enrollment_uuid = ${enrollmentColumn} AND g.status = 'active'`

/** Whether the profile, as a learner taking part in the community, shares an active group with the enrollment. */
const sharesGroup = (profileUuid: string, enrollmentUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`SELECT 1 FROM learning_group_members mine JOIN learning_enrollments e ON e.uuid = mine.enrollment_uuid
        WHERE e.profile_uuid = ${profileUuid} AND e.status IN ${sql.in([...communityStatuses])}
          AND mine.group_uuid IN (${sharedGroups(sql, sql`${enrollmentUuid}`)}) LIMIT 1`,
      (rows) => rows.length > 0
    ))

/** How the caller may see the thread; 404 for anyone who may not (strangers, other learners of a private thread, staff out of scope). */
const viewerOf = (actor: Actor, row: ThreadRow) =>
  Effect.gen(function*() {
    if (row.learner_profile_uuid === actor.profileUuid) return "learner" as const
    const standing = yield* standingOn(actor, row.course_uuid)
    const target = yield* enrollmentTarget(standing.assignments, { uuid: row.enrollment_uuid, runUuid: row.run_uuid })
    if (holdsAtom(standing.assignments, "community_staff", target)) return "staff" as const
    if (row.visibility === "run" && (yield* learnsInRun(actor.profileUuid, row.run_uuid))) return "peer" as const
    if (row.visibility === "group" && (yield* sharesGroup(actor.profileUuid, row.enrollment_uuid))) return "peer" as const
    return yield* threadNotFound(row.uuid)
  })

/** A thread is locked once its enrollment left the community or its run was cancelled or archived: no more replies. */
const lockedReason = (row: { readonly enrollment_status: string; readonly run_status: string }) =>
  closedRuns.includes(row.run_status)
    ? `the run is ${row.run_status}`
    : inCommunity(row.enrollment_status)
    ? undefined
    : `the enrollment is ${row.enrollment_status}`

/** One page of a thread's messages, oldest first. */
const messagePage = (row: ThreadRow, viewer: Viewer, me: string, filter: { readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 50
    const rows = yield* Effect.flatMap(
      sql`${sql.literal(messageSelect)} WHERE m.thread_uuid = ${row.uuid}
        ${position._tag === "Some" ? sql`AND (m.created_at, m.uuid) > (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY m.created_at, m.uuid LIMIT ${limit + 1}`,
      decodeMessages
    )
    const page = pageOf(rows, limit, (message) => ({ key: message.position, uuid: message.uuid }), (message) => messageView(message, viewer, me))
    return {
      ...threadView(row, viewer, me),
      messages: page.items,
      ...(page.nextCursor !== undefined ? { nextMessagesCursor: page.nextCursor } : {})
    }
  })

// ---- who is addressed ----

const StaffRow = Schema.Struct({
  profile_uuid: Schema.String,
  name: Schema.String,
  role: StaffRoleSchema,
  run_uuid: Schema.NullOr(Schema.String),
  group_uuid: Schema.NullOr(Schema.String),
  grants: Schema.Array(Schema.String),
  denies: Schema.Array(Schema.String)
})
type StaffRow = typeof StaffRow.Type
const decodeStaff = rowsDecoder(StaffRow)
const staffColumns = selectList(StaffRow, "s", { name: "p.name" })
const decodeWriters = rowsDecoder(Schema.Struct({ author_profile_uuid: Schema.String }))

/**
 * The course's active staff holding community_staff for any of the runs (course-wide ones always)
 * or of the groups, one entry per profile with its highest role.
 */
const communityStaff = (courseUuid: string, runUuids: ReadonlyArray<string>, groupUuids: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(staffColumns)}
      FROM learning_staff s JOIN profiles p ON p.uuid = s.profile_uuid WHERE s.course_uuid = ${courseUuid} AND s.status = 'active'`,
      decodeStaff
    )
    const byProfile = new Map<string, StaffRow>()
    for (const row of rows) {
      const assignment = { role: row.role, runUuid: row.run_uuid, groupUuid: row.group_uuid, grants: row.grants, denies: row.denies }
      const scope = atomScope([assignment], "community_staff")
      if (!scope.course && !scope.runs.some((run) => runUuids.includes(run)) && !scope.groups.some((group) => groupUuids.includes(group))) continue
      const known = byProfile.get(row.profile_uuid)
      if (known === undefined || staffRoles.indexOf(row.role) < staffRoles.indexOf(known.role)) byProfile.set(row.profile_uuid, row)
    }
    return [...byProfile.values()]
  })

/** An event's audience: the thread's learner and author, everyone who wrote in it, and the community staff in its run's scope — not the actor. */
const audienceOf = (row: Pick<ThreadRow, "uuid" | "course_uuid" | "run_uuid" | "enrollment_uuid" | "learner_profile_uuid" | "author_profile_uuid">, actor: Actor) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const writers = yield* Effect.flatMap(
      sql`SELECT DISTINCT author_profile_uuid FROM learning_thread_messages WHERE thread_uuid = ${row.uuid}`,
      decodeWriters
    )
    const staff = yield* communityStaff(row.course_uuid, [row.run_uuid], yield* enrollmentGroupUuids(row.enrollment_uuid))
    const audience = new Set([row.learner_profile_uuid, row.author_profile_uuid, ...writers.map((w) => w.author_profile_uuid), ...staff.map((s) => s.profile_uuid)])
    audience.delete(actor.profileUuid)
    return [...audience].sort()
  })

/** Writes the thread's event (after its change) and its audit row, in the command's transaction. */
const record = (
  actor: Actor,
  row: ThreadRow,
  change: {
    readonly type: "learning.community.created" | "learning.community.replied" | "learning.community.resolved"
    readonly action: string
    readonly before?: ThreadStatus | undefined
    readonly requestUuid: string
    readonly messageUuid?: string | undefined
  }
) =>
  Effect.gen(function*() {
    yield* appendEvent({
      type: change.type,
      aggregate: { kind: "learning_thread", uuid: row.uuid, revision: row.revision },
      data: { objectUuid: row.uuid, status: row.status, visibility: row.visibility, ...(change.messageUuid !== undefined ? { messageUuid: change.messageUuid } : {}) },
      context: {
        profileUuid: actor.profileUuid,
        audience: yield* audienceOf(row, actor),
        courseUuid: row.course_uuid,
        runUuid: row.run_uuid,
        enrollmentUuid: row.enrollment_uuid,
        ...(row.node_key !== null ? { nodeKey: row.node_key } : {})
      }
    })
    yield* appendAudit({
      courseUuid: row.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: change.action,
      subjectKind: "thread",
      subjectUuid: row.uuid,
      enrollmentUuid: row.enrollment_uuid,
      ...(change.before !== undefined ? { before: { status: change.before } } : {}),
      after: { status: row.status, ...(change.messageUuid !== undefined ? { messageUuid: change.messageUuid } : {}) },
      requestUuid: change.requestUuid
    })
  })

// ---- enrollments ----

const EnrollmentRow = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  run_uuid: Schema.String,
  profile_uuid: Schema.String,
  status: Schema.String,
  run_status: Schema.String,
  version_number: Schema.Number
})
type EnrollmentRow = typeof EnrollmentRow.Type
const decodeEnrollments = rowsDecoder(EnrollmentRow)
const enrollmentColumns = selectList(EnrollmentRow, "e", { run_status: "r.status", version_number: "r.version_number" })

const loadEnrollment = (uuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(enrollmentColumns)}
      FROM learning_enrollments e JOIN learning_runs r ON r.uuid = e.run_uuid WHERE e.uuid = ${uuid}`,
      decodeEnrollments
    )
    return row
  })

/** The caller's own enrollment; anyone else's (or none) is 404. */
const ownEnrollment = (actor: Actor, uuid: string) =>
  Effect.gen(function*() {
    const row = yield* loadEnrollment(uuid)
    if (row === undefined || row.profile_uuid !== actor.profileUuid) return yield* new NotFound({ message: `No enrollment ${uuid}` })
    return row
  })

// ---- opening a thread ----

interface Opening {
  readonly requestUuid: string
  readonly title: string
  readonly body: string
  readonly nodeKey?: string | undefined
  readonly visibility: "private" | "group" | "run"
}

/** Inserts a thread with its first message and records it; the enrollment must take part in an open run. */
const openThread = (actor: Actor, enrollment: EnrollmentRow, input: Opening, authorRole: AuthorRole, action: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (input.visibility === "group" && (yield* sql`${sharedGroups(sql, sql`${enrollment.uuid}`)} LIMIT 1`).length === 0) {
      return yield* new InvalidRequest({ message: "visibility: the enrollment is in no group; use private or run visibility" })
    }
    const locked = lockedReason({ enrollment_status: enrollment.status, run_status: enrollment.run_status })
    if (locked !== undefined) return yield* new InvalidState({ message: `No thread can be opened: ${locked}` })
    if (input.nodeKey !== undefined) {
      const version = yield* loadVersion(enrollment.course_uuid, enrollment.version_number)
      if (version === undefined || !version.nodes.some((node) => node.nodeKey === input.nodeKey)) {
        return yield* new InvalidRequest({ message: `nodeKey: the run's course version ${enrollment.version_number} has no node ${input.nodeKey}` })
      }
    }
    const uuid = randomUUID()
    const messageUuid = randomUUID()
    yield* sql`INSERT INTO learning_threads (uuid, course_uuid, run_uuid, enrollment_uuid, learner_profile_uuid, author_profile_uuid, author_role,
        node_key, visibility, title, last_author_role, message_count)
      VALUES (${uuid}, ${enrollment.course_uuid}, ${enrollment.run_uuid}, ${enrollment.uuid}, ${enrollment.profile_uuid}, ${actor.profileUuid},
        ${authorRole}, ${input.nodeKey ?? null}, ${input.visibility}, ${input.title}, ${authorRole}, 1)`
    yield* sql`INSERT INTO learning_thread_messages (uuid, thread_uuid, author_profile_uuid, author_role, body)
      VALUES (${messageUuid}, ${uuid}, ${actor.profileUuid}, ${authorRole}, ${input.body})`
    const row = yield* loadThread(uuid, false)
    yield* record(actor, row, { type: "learning.community.created", action, requestUuid: input.requestUuid, messageUuid })
    return yield* messagePage(row, authorRole === "staff" ? "staff" : "learner", actor.profileUuid, {})
  })

/** The course's facts and the caller's standing on it (404 when there is no course). */
const standingFor = (actor: Actor, courseUuid: string) =>
  Effect.gen(function*() {
    const course = yield* loadCourse(courseUuid, { lock: false })
    return { facts: courseFacts(course), standing: yield* standingOn(actor, courseUuid) }
  })

/** learning.community.create: the enrollment's learner opens a private or run-visible thread. */
export const createThread = (actor: Actor, enrollmentUuid: string, input: Opening) =>
  once(actor, "learning.community.create", input, Thread, Effect.gen(function*() {
    const enrollment = yield* ownEnrollment(actor, enrollmentUuid)
    return yield* openThread(actor, enrollment, input, "learner", "community.create")
  }))

/** learning.community.staff_create: community staff in the enrollment's run open a private thread to its learner. */
export const staffCreateThread = (actor: Actor, courseUuid: string, enrollmentUuid: string, input: Omit<Opening, "visibility">) =>
  once(actor, "learning.community.staff_create", input, Thread, Effect.gen(function*() {
    // Community staff somewhere in the course learn whether the enrollment is here (404), then whether its run is in their scope (403).
    const { facts, standing } = yield* communityScopeForStaff(actor, "learning.community.staff_create", courseUuid, undefined)
    const enrollment = yield* loadEnrollment(enrollmentUuid)
    if (enrollment === undefined || enrollment.course_uuid !== courseUuid) return yield* new NotFound({ message: `No enrollment ${enrollmentUuid} in this course` })
    const target = yield* enrollmentTarget(standing.assignments, { uuid: enrollment.uuid, runUuid: enrollment.run_uuid })
    const refusal = decide("learning.community.staff_create", facts, standing, target)
    if (refusal !== undefined) return yield* refusal
    return yield* openThread(actor, enrollment, { ...input, visibility: "private" }, "staff", "community.staff_create")
  }))

// ---- reading ----

/** learning.community.get: the thread and a page of its messages. */
export const getThread = (actor: Actor, threadUuid: string, filter: { readonly cursor?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.gen(function*() {
    const row = yield* loadThread(threadUuid, false)
    return yield* messagePage(row, yield* viewerOf(actor, row), actor.profileUuid, filter)
  })

/** The inbox's `unanswered` over `learning_threads t`: open with the learner's word last (also the teaching dashboard's count). */
export const unansweredCondition = (sql: SqlClient.SqlClient) => sql`t.status = 'open' AND t.last_author_role = 'learner'`

/**
 * The status and node filters of both thread lists. The inbox's statuses (`InboxStatus`):
 * `unanswered` = open with the learner's word last, `open` = not resolved; the learner's list
 * filters by the thread's own status.
 */
const filterConditions = (
  sql: SqlClient.SqlClient,
  filter: { readonly status?: "unanswered" | "open" | "answered" | "resolved" | undefined; readonly nodeKey?: string | undefined },
  inbox: boolean
) => [
  ...(filter.status === undefined
    ? []
    : filter.status === "unanswered"
    ? [unansweredCondition(sql)]
    : filter.status === "open" && inbox
    ? [sql`t.status IN ('open', 'answered')`]
    : [sql`t.status = ${filter.status}`]),
  ...(filter.nodeKey !== undefined ? [sql`t.node_key = ${filter.nodeKey}`] : [])
]

const threadPage = (
  conditions: ReadonlyArray<Fragment>,
  filter: { readonly cursor?: string | undefined; readonly limit?: number | undefined },
  viewer: (row: ThreadRow) => Viewer,
  me: string
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const all = [
      ...conditions,
      ...(position._tag === "Some" ? [sql`(t.created_at, t.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)`] : [])
    ]
    const rows = yield* Effect.flatMap(
      sql`${sql.literal(threadSelect)} WHERE ${sql.and(all)} ORDER BY t.created_at DESC, t.uuid DESC LIMIT ${limit + 1}`,
      decodeThreads
    )
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => threadView(row, viewer(row), me))
  })

/** learning.community.list: the learner's own threads of this enrollment and the run-visible ones of its run, newest first. */
export const listThreads = (
  actor: Actor,
  enrollmentUuid: string,
  filter: typeof ThreadListQuery.Type
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const enrollment = yield* ownEnrollment(actor, enrollmentUuid)
    const conditions = [
      inCommunity(enrollment.status)
        ? sql`(t.enrollment_uuid = ${enrollment.uuid} OR (t.visibility = 'run' AND t.run_uuid = ${enrollment.run_uuid})
          OR (t.visibility = 'group' AND EXISTS (${sharedGroups(sql, sql`t.enrollment_uuid`)}
            AND gm.group_uuid IN (SELECT group_uuid FROM learning_group_members WHERE enrollment_uuid = ${enrollment.uuid}))))`
        : sql`t.enrollment_uuid = ${enrollment.uuid}`,
      ...filterConditions(sql, filter, false)
    ]
    return yield* threadPage(conditions, filter, (row) => row.learner_profile_uuid === actor.profileUuid ? "learner" : "peer", actor.profileUuid)
  })

/** learning.community.staff_list: the inbox of community staff, threads in their scope, newest first. */
export const staffListThreads = (
  actor: Actor,
  courseUuid: string,
  filter: typeof StaffThreadQuery.Type
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { scope } = yield* communityScopeForStaff(actor, "learning.community.staff_list", courseUuid, filter.runUuid)
    yield* requireCourseGroup(courseUuid, filter.groupUuid)
    const conditions = [
      sql`t.course_uuid = ${courseUuid}`,
      inScope(sql, scope, sql`t.run_uuid`, sql`t.enrollment_uuid`, filter.runUuid),
      ...(filter.groupUuid !== undefined ? [inGroups(sql, sql`t.enrollment_uuid`, [filter.groupUuid])] : []),
      ...filterConditions(sql, filter, true)
    ]
    return yield* threadPage(conditions, filter, () => "staff", actor.profileUuid)
  })

/**
 * The records in a staff scope (`scopeReach`), narrowed to one run when named (a run outside the
 * runs leaves only its group members).
 */
const inScope = (
  sql: SqlClient.SqlClient,
  scope: { readonly course: boolean; readonly runs: ReadonlyArray<string>; readonly groups: ReadonlyArray<string> },
  runColumn: Fragment,
  enrollmentColumn: Fragment,
  runUuid: string | undefined
) => {
  const reach = scopeReach(sql, scope, runColumn, enrollmentColumn)
  return runUuid !== undefined ? sql`${runColumn} = ${runUuid} AND ${reach}` : reach
}

/**
 * Community staff on the course: `decide` with the named run, or, without one, holding the atom
 * course-wide or in some run (a run-scoped assistant's inbox is their runs).
 */
const communityScopeForStaff = (
  actor: Actor,
  operation: "learning.community.staff_list" | "learning.community.staff_create",
  courseUuid: string,
  runUuid: string | undefined
) =>
  Effect.gen(function*() {
    const { facts, standing } = yield* standingFor(actor, courseUuid)
    const scope = atomScope(standing.assignments, "community_staff")
    if (runUuid === undefined && reachesAny(scope)) return { facts, standing, scope }
    // Group-scoped community staff: the named run when one of their groups is in it.
    if (runUuid !== undefined && scope.groups.length > 0 && (yield* groupsInRun(scope.groups, runUuid))) return { facts, standing, scope }
    const refusal = decide(operation, facts, standing, { runUuid })
    if (refusal !== undefined) return yield* refusal
    return { facts, standing, scope }
  })

const groupsInRun = (groups: ReadonlyArray<string>, runUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql`SELECT 1 FROM learning_groups WHERE uuid IN ${sql.in([...groups])} AND run_uuid = ${runUuid} LIMIT 1`, (rows) => rows.length > 0))

// ---- writing ----

/** learning.community.reply: a message from the learner, another learner of a run-visible thread, or community staff. */
export const replyToThread = (
  actor: Actor,
  threadUuid: string,
  input: { readonly requestUuid: string; readonly body: string; readonly fileUuids?: ReadonlyArray<string> | undefined }
) =>
  once(actor, "learning.community.reply", input, ThreadMessage, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const row = yield* loadThread(threadUuid, true)
    const viewer = yield* viewerOf(actor, row)
    const locked = lockedReason(row)
    if (locked !== undefined) return yield* new InvalidState({ message: `The thread is locked: ${locked}` })
    const by: ThreadActor = viewer === "staff" ? "staff" : "learner"
    const to = yield* transitionTo(threadTransitions, { resource: "thread", uuid: row.uuid }, "learning.community.reply", by, row.status)
    // The marketplace's rule for attachments: ready files of the caller.
    const files = yield* checkReferences(actor.profileUuid, (input.fileUuids ?? []).map((uuid) => ({ kind: "file", uuid })))
    const messageUuid = randomUUID()
    yield* sql`INSERT INTO learning_thread_messages (uuid, thread_uuid, author_profile_uuid, author_role, body, file_uuids)
      VALUES (${messageUuid}, ${row.uuid}, ${actor.profileUuid}, ${by}, ${input.body},
        ${uuidArray(sql, files.map((file) => file.uuid))})`
    yield* sql`UPDATE learning_threads SET status = ${to}, last_author_role = ${by}, message_count = message_count + 1,
        last_message_at = now(), resolved_at = NULL, resolved_by = NULL, revision = revision + 1, updated_at = now()
      WHERE uuid = ${row.uuid}`
    yield* record(actor, yield* loadThread(row.uuid, false), {
      type: "learning.community.replied",
      action: "community.reply",
      before: row.status,
      requestUuid: input.requestUuid,
      messageUuid
    })
    const [message] = yield* Effect.flatMap(sql`${sql.literal(messageSelect)} WHERE m.uuid = ${messageUuid}`, decodeMessages)
    return messageView(message!, viewer, actor.profileUuid)
  }))

/** learning.community.resolve: the thread's author or community staff mark it resolved (also on a locked thread). */
export const resolveThread = (actor: Actor, threadUuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number }) =>
  once(actor, "learning.community.resolve", input, Thread, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const row = yield* loadThread(threadUuid, true)
    const viewer = yield* viewerOf(actor, row)
    if (viewer !== "staff" && row.author_profile_uuid !== actor.profileUuid) {
      return yield* new Forbidden({ message: "Only the thread's author or the course's community staff resolve it" })
    }
    const by: ThreadActor = viewer === "staff" ? "staff" : "learner"
    const to = yield* transitionTo(threadTransitions, { resource: "thread", uuid: row.uuid }, "learning.community.resolve", by, row.status)
    yield* requireRevision("thread", row.revision, input.expectedRevision)
    yield* sql`UPDATE learning_threads SET status = ${to}, resolved_at = now(), resolved_by = ${actor.profileUuid},
        revision = revision + 1, updated_at = now()
      WHERE uuid = ${row.uuid}`
    const changed = yield* loadThread(row.uuid, false)
    yield* record(actor, changed, { type: "learning.community.resolved", action: "community.resolve", before: row.status, requestUuid: input.requestUuid })
    return threadView(changed, viewer, actor.profileUuid)
  }))

// ---- recipients ----

const decodeLearners = rowsDecoder(Schema.Struct({ uuid: Schema.String, run_uuid: Schema.String, profile_uuid: Schema.String, name: Schema.String }))
const decodeRunUuids = rowsDecoder(Schema.Struct({ run_uuid: Schema.String }))
const decodeGroupUuids = rowsDecoder(Schema.Struct({ group_uuid: Schema.String }))

/**
 * learning.community.recipients: for a learner, the community staff of their runs (names, roles);
 * for community staff, the learners in their scope (run-scoped staff: their runs only). Staff
 * without community_staff anywhere: 403.
 */
export const listRecipients = (
  actor: Actor,
  courseUuid: string,
  filter: typeof RecipientQuery.Type
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { facts, standing } = yield* standingFor(actor, courseUuid)
    const refusal = decide("learning.community.recipients", facts, standing)
    if (refusal !== undefined) return yield* refusal
    yield* requireCourseGroup(courseUuid, filter.groupUuid)
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const after = position._tag === "Some" ? position.value.uuid : undefined
    const q = filter.q !== undefined && filter.q !== "" ? "%" + filter.q.replace(/[\\%_]/g, "\\$&") + "%" : undefined
    if (standing.assignments.length > 0) {
      const scope = atomScope(standing.assignments, "community_staff")
      const runReached = (run: string) => scope.course || scope.runs.includes(run)
      if (!reachesAny(scope) || filter.runUuid !== undefined && !runReached(filter.runUuid) && scope.groups.length === 0) {
        return yield* new Forbidden({ message: "learning.community.recipients needs the community_staff permission in this scope" })
      }
      const rows = yield* Effect.flatMap(
        sql`
        SELECT e.uuid, e.run_uuid, e.profile_uuid, p.name FROM learning_enrollments e JOIN profiles p ON p.uuid = e.profile_uuid
        WHERE e.course_uuid = ${courseUuid} AND e.status IN ${sql.in([...communityStatuses])}
          AND ${inScope(sql, scope, sql`e.run_uuid`, sql`e.uuid`, filter.runUuid)}
          ${filter.groupUuid !== undefined ? sql`AND ${inGroups(sql, sql`e.uuid`, [filter.groupUuid])}` : sql``}
          ${q !== undefined ? sql`AND p.name ILIKE ${q}` : sql``}
          ${after !== undefined ? sql`AND e.uuid > ${after}::uuid` : sql``}
        ORDER BY e.uuid LIMIT ${limit + 1}`,
        decodeLearners
      )
      return pageOf(rows, limit, (row) => ({ key: "", uuid: row.uuid }), (row) => ({
        profileUuid: row.profile_uuid,
        name: row.name,
        role: "learner" as const,
        enrollmentUuid: row.uuid,
        runUuid: row.run_uuid
      }))
    }
    const mine = yield* Effect.flatMap(
      sql`SELECT DISTINCT run_uuid FROM learning_enrollments
      WHERE course_uuid = ${courseUuid} AND profile_uuid = ${actor.profileUuid} AND status IN ${sql.in([...communityStatuses])}`,
      decodeRunUuids
    )
    const runs = mine.map((row) => row.run_uuid).filter((run) => filter.runUuid === undefined || run === filter.runUuid)
    const needle = filter.q?.toLowerCase() ?? ""
    const groups = runs.length === 0 ? [] : (yield* Effect.flatMap(
      sql`SELECT gm.group_uuid FROM learning_group_members gm
      JOIN learning_enrollments e ON e.uuid = gm.enrollment_uuid WHERE e.course_uuid = ${courseUuid} AND e.profile_uuid = ${actor.profileUuid}`,
      decodeGroupUuids
    )).map((row) => row.group_uuid)
    const staff = runs.length === 0 ? [] : (yield* communityStaff(courseUuid, runs, groups))
      .filter((row) => row.name.toLowerCase().includes(needle) && (after === undefined || row.profile_uuid > after))
      .sort((a, b) => a.profile_uuid < b.profile_uuid ? -1 : 1)
    return pageOf(staff, limit, (row) => ({ key: "", uuid: row.profile_uuid }), (row) => ({ profileUuid: row.profile_uuid, name: row.name, role: row.role }))
  })

/** The community operations over this module. */
export const LearningCommunityOperations = implement(LearningCommunityApi)({
  "learning.community.create": ({ path, payload }, actor) => createThread(actor, path.enrollment, payload),
  "learning.community.list": ({ path, urlParams }, actor) => listThreads(actor, path.enrollment, urlParams),
  "learning.community.get": ({ path, urlParams }, actor) => getThread(actor, path.thread, urlParams),
  "learning.community.reply": ({ path, payload }, actor) => replyToThread(actor, path.thread, payload),
  "learning.community.resolve": ({ path, payload }, actor) => resolveThread(actor, path.thread, payload),
  "learning.community.recipients": ({ path, urlParams }, actor) => listRecipients(actor, path.course, urlParams),
  "learning.community.staff_create": ({ path, payload }, actor) => staffCreateThread(actor, path.course, path.enrollment, payload),
  "learning.community.staff_list": ({ path, urlParams }, actor) => staffListThreads(actor, path.course, urlParams)
})
