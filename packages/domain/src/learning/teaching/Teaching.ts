import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Schema } from "effect"
import type { Actor } from "../../kernel/Authentication.js"
import { LearningTeachingApi } from "./TeachingApi.js"
import { implement } from "../../operations/Implementation.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder } from "../../store/Rows.js"
import { storedArray } from "../courses/StoredJson.js"
import { unansweredCondition } from "../community/Community.js"
import { type Assignment, type Atom, atoms, atomScope, atomsOf, courseNotFound, decide, type StaffRole, staffRoles, standingOn } from "../Permissions.js"
import { queueStatusCondition } from "../reviews/Reviews.js"
import type { TeachingCounts, TeachingCourse, TeachingListQuery } from "./TeachingModel.js"

/**
 * Teaching dashboards: per course where the caller
 * holds an active staff assignment, the to-do counts of the work its assignments let it act on.
 *
 * Each count is a row of `countDefinitions`: the atom the work needs and the condition that makes
 * a record waiting — the same SQL fragments as the list operations that show those records (the
 * review queue's `pooled`, the inbox's `unanswered`, …). Where a count applies is `atomScope` of
 * the caller's assignments: course-wide, the runs of run-scoped assignments, and the members of
 * the groups of group-scoped ones (records about a learner: an incident or a checker has none);
 * a count the caller holds no atom for is absent. A record counts once: those of the caller's
 * groups are counted by run and by the set of the caller's groups their learner is in, so a
 * learner in two of them, or in a run the caller also holds, is not counted twice.
 *
 * One statement answers a page or a dashboard whatever the number of courses and counts: the
 * caller's courses with their assignments, and for each the waiting records by run (`courseRows`).
 */

type CountName = keyof TeachingCounts

interface CountDefinition {
  readonly name: CountName
  readonly atom: Atom
  /** The counted table with its alias, the one the shared fragment is written over. */
  readonly table: string
  readonly alias: string
  /** Course-level records (checkers) have no run: only a course-wide assignment counts them. */
  readonly courseLevel?: boolean
  /**
   * The record's enrollment column (with the join that reaches it), for group-scoped staff;
   * absent: records about no learner (group scopes do not count them).
   */
  readonly enrollment?: { readonly join?: string; readonly column: string }
  readonly waiting: (sql: SqlClient.SqlClient, me: string) => Fragment
}

/** A count of records about one learner each, whose table (`<table> <alias>`) has the enrollment's column. */
const aboutLearners = (name: CountName, atom: Atom, table: string, waiting: CountDefinition["waiting"]): CountDefinition => {
  const alias = table.split(" ")[1]!
  return { name, atom, table, alias, enrollment: { column: `${alias}.enrollment_uuid` }, waiting }
}

/** A review assignment's learner is its submission's. */
const reviewEnrollment = { join: "JOIN learning_submissions es ON es.uuid = a.submission_uuid", column: "es.enrollment_uuid" }

export const countDefinitions: ReadonlyArray<CountDefinition> = [
  // Staff reviewers claim staff assignments from the pool (learning.reviews.claim); peer ones are learners'.
  {
    name: "reviewsToClaim",
    atom: "review",
    table: "learning_review_assignments a",
    alias: "a",
    enrollment: reviewEnrollment,
    waiting: (sql) => sql`a.kind = 'staff' AND ${queueStatusCondition(sql, "pooled")}`
  },
  {
    name: "reviewsClaimed",
    atom: "review",
    table: "learning_review_assignments a",
    alias: "a",
    enrollment: reviewEnrollment,
    waiting: (sql, me) => sql`a.reviewer_profile_uuid = ${me} AND ${queueStatusCondition(sql, "claimed")}`
  },
  // First-level appeals; an escalated one is closed with grades_adjust (Appeals.ts).
  aboutLearners("appealsOpen", "appeals_resolve", "learning_appeals a", (sql) => sql`a.status = 'open'`),
  aboutLearners("threadsUnanswered", "community_staff", "learning_threads t", unansweredCondition),
  aboutLearners("extensionsPending", "dates_grant", "learning_extension_requests x", (sql) => sql`x.status = 'requested'`),
  { name: "incidentsOpen", atom: "runs_manage", table: "learning_incidents i", alias: "i", waiting: (sql) => sql`i.status = 'open'` },
  {
    name: "checkersSuspended",
    atom: "checkers_manage",
    table: "learning_checkers k",
    alias: "k",
    courseLevel: true,
    waiting: (sql) => sql`k.status = 'suspended'`
  },
  // In use and erring: the circuit breaker's streak of consecutive platform errors has started (Grading.ts).
  {
    name: "checkersFailing",
    atom: "checkers_manage",
    table: "learning_checkers k",
    alias: "k",
    courseLevel: true,
    waiting: (sql) => sql`k.status = 'ready' AND k.error_streak > 0`
  }
]

/**
 * One course of the caller, with its active assignments there and the waiting records of the
 * course by run. Both JSON columns are built by `courseRows`' own statement: only their outer
 * shape is checked.
 */
const CourseRow = Schema.Struct({
  uuid: Schema.String,
  title: Schema.String,
  status: Schema.Literal("draft", "published", "archived"),
  visibility: Schema.Literal("listed", "unlisted", "private"),
  latest_version: Schema.Number,
  position: Schema.String,
  assignments: storedArray<Assignment & { readonly uuid: string }>("TeachingAssignments"),
  /**
   * [count, run (null for course-level records), groups, n] for every count with records waiting;
   * null without an assignment. `groups` null: every record of the run; else the records of the
   * run whose learner is in exactly these of the caller's groups.
   */
  waiting: Schema.NullOr(storedArray<readonly [CountName, string | null, ReadonlyArray<string> | null, number]>("TeachingWaiting"))
})
type CourseRow = typeof CourseRow.Type
const decodeCourseRows = rowsDecoder(CourseRow)

/**
 * Every count of the course `page.uuid`, by run: one grouped index-only scan per count. For a
 * caller with group-scoped assignments (`page.group_uuids`), the records of their groups' members
 * again, by run and by which of those groups the learner is in.
 */
const waitingOf = (sql: SqlClient.SqlClient, me: string) =>
  sql.join(" UNION ALL ", false)(countDefinitions.flatMap((count) => {
    const column = (name: string) => sql.literal(`${count.alias}.${name}`)
    const from = sql`FROM ${sql.literal(count.table)} WHERE ${column("course_uuid")} = page.uuid AND ${count.waiting(sql, me)}`
    if (count.courseLevel) return [sql`SELECT ${count.name}::text AS name, NULL::uuid AS run_uuid, NULL::text[] AS groups, count(*)::int AS n ${from} HAVING count(*) > 0`]
    const byRun = sql`SELECT ${count.name}::text AS name, ${column("run_uuid")} AS run_uuid, NULL::text[] AS groups, count(*)::int AS n ${from}
      GROUP BY ${column("run_uuid")}`
    if (count.enrollment === undefined) return [byRun]
    // The members of the caller's groups with the set of those groups each is in, joined to the records by enrollment.
    return [
      byRun,
      sql`SELECT ${count.name}::text AS name, ${column("run_uuid")} AS run_uuid, g.groups, count(*)::int AS n
        FROM ${sql.literal(count.table)} ${sql.literal(count.enrollment.join ?? "")}
          JOIN (SELECT gm.enrollment_uuid, array_agg(gm.group_uuid::text ORDER BY gm.group_uuid) AS groups FROM learning_group_members gm
            WHERE gm.group_uuid = ANY(page.group_uuids) GROUP BY gm.enrollment_uuid) g ON g.enrollment_uuid = ${sql.literal(count.enrollment.column)}
        WHERE ${column("course_uuid")} = page.uuid AND ${count.waiting(sql, me)} AND page.group_uuids IS NOT NULL GROUP BY 2, 3`
    ]
  }))

/**
 * The caller's courses with their active assignments and, where it holds one, the waiting records
 * of the course by run: the page's statement and the dashboard's, one round trip either way. The
 * records are counted whatever the caller's atoms (cheap: the partial indexes of migration 29 hold
 * waiting records only); `scopesOf` keeps what the caller may act on.
 */
const courseRows = (sql: SqlClient.SqlClient, me: string, where: Fragment, limit: number) =>
  Effect.flatMap(sql`SELECT page.*, CASE WHEN jsonb_array_length(page.assignments) > 0 THEN
        (SELECT coalesce(jsonb_agg(jsonb_build_array(w.name, w.run_uuid, w.groups, w.n)), '[]'::jsonb) FROM (${waitingOf(sql, me)}) w) END AS waiting
    FROM (SELECT c.uuid, c.title, c.status, c.visibility, c.latest_version, c.created_at, c.created_at::text AS position,
        coalesce(jsonb_agg(jsonb_build_object('uuid', s.uuid, 'role', s.role, 'runUuid', s.run_uuid, 'groupUuid', s.group_uuid,
          'grants', s.grants, 'denies', s.denies) ORDER BY s.created_at, s.uuid) FILTER (WHERE s.uuid IS NOT NULL), '[]'::jsonb) AS assignments,
        array_agg(DISTINCT s.group_uuid) FILTER (WHERE s.group_uuid IS NOT NULL) AS group_uuids
      FROM learning_courses c LEFT JOIN learning_staff s ON s.course_uuid = c.uuid AND s.profile_uuid = ${me} AND s.status = 'active'
      WHERE ${where}
      GROUP BY c.uuid ORDER BY c.created_at DESC, c.uuid DESC LIMIT ${limit}) page
    ORDER BY page.created_at DESC, page.uuid DESC`, decodeCourseRows)

/** Where each count applies on one course: course-wide, the listed runs and groups' members; absent: nowhere. */
type Scopes = ReadonlyMap<CountName, ReturnType<typeof atomScope>>

const scopesOf = (assignments: ReadonlyArray<Assignment>): Scopes => {
  const scopes = new Map<CountName, ReturnType<typeof atomScope>>()
  for (const count of countDefinitions) {
    const scope = atomScope(assignments, count.atom)
    const groups = count.enrollment === undefined ? [] : scope.groups
    if (scope.course || !count.courseLevel && (scope.runs.length > 0 || groups.length > 0)) scopes.set(count.name, { ...scope, groups })
  }
  return scopes
}

/**
 * The dashboard of one course: each count the caller holds the atom for, summed over the runs of
 * its scope, and over the rows of its groups' members in the other runs.
 */
const teachingView = (row: CourseRow): TeachingCourse => {
  const scopes = scopesOf(row.assignments)
  const counts: Partial<Record<CountName, number>> = {}
  for (const name of scopes.keys()) counts[name] = 0
  for (const [name, run, groups, n] of row.waiting ?? []) {
    const scope = scopes.get(name)
    if (scope === undefined) continue
    const inRuns = scope.course || run !== null && scope.runs.includes(run)
    const counted = groups === null ? inRuns : !inRuns && groups.some((group) => scope.groups.includes(group))
    if (counted) counts[name]! += n
  }
  const held = new Set<StaffRole>(row.assignments.map((assignment) => assignment.role))
  return {
    courseUuid: row.uuid,
    courseTitle: row.title,
    courseStatus: row.status,
    roles: staffRoles.filter((role) => held.has(role)),
    assignments: row.assignments.map((assignment) => ({
      uuid: assignment.uuid,
      role: assignment.role,
      scope: {
        ...(assignment.runUuid !== null ? { runUuid: assignment.runUuid } : {}),
        ...(assignment.groupUuid !== null ? { groupUuid: assignment.groupUuid } : {})
      }
    })),
    rights: atoms.filter((atom) => row.assignments.some((assignment) => atomsOf(assignment).has(atom))),
    counts,
    todo: Object.values(counts).reduce((sum, n) => sum + n, 0)
  }
}

/** learning.teaching.list: the caller's courses with an active assignment (of the role, when given), newest course first. */
export const listTeaching = (actor: Actor, query: typeof TeachingListQuery.Type) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const me = actor.profileUuid
    const where = sql.and([
      sql`s.uuid IS NOT NULL`,
      ...(query.role !== undefined
        ? [sql`c.uuid IN (SELECT course_uuid FROM learning_staff WHERE profile_uuid = ${me} AND status = 'active' AND role = ${query.role})`]
        : []),
      ...(position._tag === "Some" ? [sql`(c.created_at, c.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)`] : [])
    ])
    const rows = yield* courseRows(sql, me, where, limit + 1)
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), teachingView)
  })

/**
 * learning.teaching.get: the caller's dashboard of one course. Who holds no active assignment there
 * gets 404 when the course is not visible to them, 403 when it is (a learner, a visitor).
 */
export const getTeaching = (actor: Actor, courseUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* courseRows(sql, actor.profileUuid, sql`c.uuid = ${courseUuid}`, 1)
    if (row === undefined) return yield* courseNotFound(courseUuid)
    if (row.assignments.length === 0) {
      const facts = { uuid: row.uuid, status: row.status, visibility: row.visibility, latestVersion: row.latest_version }
      const refusal = decide("learning.teaching.get", facts, yield* standingOn(actor, courseUuid))
      if (refusal !== undefined) return yield* refusal
    }
    return teachingView(row)
  })

export const LearningTeachingOperations = implement(LearningTeachingApi)({
  "learning.teaching.list": ({ urlParams }, actor) => listTeaching(actor, urlParams),
  "learning.teaching.get": ({ path }, actor) => getTeaching(actor, path.course)
})
