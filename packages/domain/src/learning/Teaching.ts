import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { Actor } from "../api/Authentication.js"
import { LearningTeachingApi } from "../api/LearningTeachingApi.js"
import { implement } from "../operations/Implementation.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { unansweredCondition } from "./Community.js"
import { type Assignment, type Atom, atomScope, courseNotFound, decide, type StaffRole, staffRoles, standingOn } from "./Permissions.js"
import { queueStatusCondition } from "./Reviews.js"
import type { TeachingCounts, TeachingCourse, TeachingListQuery } from "./TeachingModel.js"

/**
 * Teaching dashboards (LEARNING §4 "L4" teaching, issue 19 point 7): per course where the caller
 * holds an active staff assignment, the to-do counts of the work its assignments let it act on.
 *
 * Each count is a row of `countDefinitions`: the atom the work needs and the condition that makes
 * a record waiting — the same SQL fragments as the list operations that show those records (the
 * review queue's `pooled`, the inbox's `unanswered`, …). Where a count applies is `atomScope` of
 * the caller's assignments: course-wide, or only the runs of run-scoped assignments; a count the
 * caller holds no atom for is absent. Group-scoped assignments count nowhere until groups exist
 * (as in `atomScope`); once they do, a group scope becomes one more disjunct of `scopeCondition`.
 *
 * Reading a page costs two statements whatever the number of courses and counts: the caller's
 * courses with their assignments, then every count of every course of the page in one UNION ALL.
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
  readonly waiting: (sql: SqlClient.SqlClient, me: string) => Fragment
}

export const countDefinitions: ReadonlyArray<CountDefinition> = [
  // Staff reviewers claim staff assignments from the pool (learning.reviews.claim); peer ones are learners'.
  {
    name: "reviewsToClaim",
    atom: "review",
    table: "learning_review_assignments a",
    alias: "a",
    waiting: (sql) => sql`a.kind = 'staff' AND ${queueStatusCondition(sql, "pooled")}`
  },
  {
    name: "reviewsClaimed",
    atom: "review",
    table: "learning_review_assignments a",
    alias: "a",
    waiting: (sql, me) => sql`a.reviewer_profile_uuid = ${me} AND ${queueStatusCondition(sql, "claimed")}`
  },
  // First-level appeals; an escalated one is closed with grades_adjust (Appeals.ts).
  { name: "appealsOpen", atom: "appeals_resolve", table: "learning_appeals a", alias: "a", waiting: (sql) => sql`a.status = 'open'` },
  { name: "threadsUnanswered", atom: "community_staff", table: "learning_threads t", alias: "t", waiting: unansweredCondition },
  { name: "extensionsPending", atom: "dates_grant", table: "learning_extension_requests x", alias: "x", waiting: (sql) => sql`x.status = 'requested'` },
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

/** One course of the caller, with its active assignments there. */
interface CourseRow {
  readonly uuid: string
  readonly title: string
  readonly status: "draft" | "published" | "archived"
  readonly visibility: "listed" | "unlisted" | "private"
  readonly latest_version: number
  readonly position: string
  readonly assignments: ReadonlyArray<Assignment & { readonly uuid: string }>
}

/** The caller's courses with their active assignments: the page's statement and the dashboard's (a course without any yields none). */
const courseRows = (sql: SqlClient.SqlClient, me: string, where: Fragment, limit: number) =>
  sql<CourseRow>`SELECT c.uuid, c.title, c.status, c.visibility, c.latest_version, c.created_at::text AS position,
      coalesce(jsonb_agg(jsonb_build_object('uuid', s.uuid, 'role', s.role, 'runUuid', s.run_uuid, 'groupUuid', s.group_uuid,
        'grants', s.grants, 'denies', s.denies) ORDER BY s.created_at, s.uuid) FILTER (WHERE s.uuid IS NOT NULL), '[]'::jsonb) AS assignments
    FROM learning_courses c LEFT JOIN learning_staff s ON s.course_uuid = c.uuid AND s.profile_uuid = ${me} AND s.status = 'active'
    WHERE ${where}
    GROUP BY c.uuid ORDER BY c.created_at DESC, c.uuid DESC LIMIT ${limit}`

/** Where each count applies on one course: course-wide, the listed runs, or nowhere (undefined). */
type Scopes = ReadonlyMap<CountName, { readonly course: boolean; readonly runs: ReadonlyArray<string> }>

const scopesOf = (assignments: ReadonlyArray<Assignment>): Scopes => {
  const scopes = new Map<CountName, { course: boolean; runs: ReadonlyArray<string> }>()
  for (const count of countDefinitions) {
    const scope = atomScope(assignments, count.atom)
    if (scope.course || !count.courseLevel && scope.runs.length > 0) scopes.set(count.name, scope)
  }
  return scopes
}

/** The records of one count that are in the caller's scope on the given courses. */
const scopeCondition = (sql: SqlClient.SqlClient, count: CountDefinition, courses: ReadonlyArray<readonly [string, Scopes]>) =>
  sql.or(courses.flatMap(([uuid, scopes]) => {
    const scope = scopes.get(count.name)
    if (scope === undefined) return []
    const column = (name: string) => sql.literal(`${count.alias}.${name}`)
    return [scope.course ? sql`${column("course_uuid")} = ${uuid}` : sql`(${column("course_uuid")} = ${uuid} AND ${column("run_uuid")} IN ${sql.in([...scope.runs])})`]
  }))

/** Every count of every course, in one statement: rows (name, course, n) for the counts with records waiting. */
const countAll = (sql: SqlClient.SqlClient, me: string, courses: ReadonlyArray<readonly [string, Scopes]>) => {
  const parts = countDefinitions
    .filter((count) => courses.some(([, scopes]) => scopes.has(count.name)))
    .map((count) =>
      sql`SELECT ${count.name}::text AS name, ${sql.literal(count.alias)}.course_uuid, count(*)::int AS n FROM ${sql.literal(count.table)}
        WHERE (${scopeCondition(sql, count, courses)}) AND ${count.waiting(sql, me)} GROUP BY ${sql.literal(count.alias)}.course_uuid`
    )
  if (parts.length === 0) return Effect.succeed([])
  return sql<{ name: CountName; course_uuid: string; n: number }>`${sql.join(" UNION ALL ", false)(parts)}`
}

const teachingView = (row: CourseRow, scopes: Scopes, found: ReadonlyMap<string, number>): TeachingCourse => {
  const counts: Partial<Record<CountName, number>> = {}
  for (const count of countDefinitions) {
    if (scopes.has(count.name)) counts[count.name] = found.get(count.name) ?? 0
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
    counts,
    todo: Object.values(counts).reduce((sum, n) => sum + n, 0)
  }
}

/** The dashboards of the given courses: their counts in one statement. */
const dashboards = (sql: SqlClient.SqlClient, me: string, rows: ReadonlyArray<CourseRow>) =>
  Effect.gen(function*() {
    const courses = rows.map((row) => [row.uuid, scopesOf(row.assignments)] as const)
    const found = new Map<string, Map<string, number>>()
    for (const count of yield* countAll(sql, me, courses)) {
      const ofCourse = found.get(count.course_uuid) ?? new Map<string, number>()
      ofCourse.set(count.name, count.n)
      found.set(count.course_uuid, ofCourse)
    }
    return new Map(rows.map((row, at) => [row.uuid, teachingView(row, courses[at]![1], found.get(row.uuid) ?? new Map())]))
  })

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
    const views = yield* dashboards(sql, me, rows.slice(0, limit))
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => views.get(row.uuid)!)
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
    return (yield* dashboards(sql, actor.profileUuid, [row])).get(row.uuid)!
  })

export const LearningTeachingOperations = implement(LearningTeachingApi)({
  "learning.teaching.list": ({ urlParams }, actor) => listTeaching(actor, urlParams),
  "learning.teaching.get": ({ path }, actor) => getTeaching(actor, path.course)
})
