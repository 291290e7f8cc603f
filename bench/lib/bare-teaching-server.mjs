// The baseline of the learning-teaching benchmark: a bare node:http server with a node-postgres
// pool (the host's size, 10, statements prepared per connection) running the host's statement for
// learning.teaching.get (Teaching.ts `courseRows`): the caller's active assignments on the course
// and the course's waiting records by run in one UNION ALL, summed for a course-wide owner (every
// count, every run: the benchmark's caller). No router, no schemas, no fibers, no session check:
// the caller's profile is given on the command line.
//   GET /api/v1/learning/teaching/courses/<uuid>   the dashboard as JSON
//   GET /__ready                                   200 once the database answers
//
// Usage: node bench/lib/bare-teaching-server.mjs <port> <host> <database-url> <profile-uuid>

import Pg from "pg"
import { send, serveJson } from "./bare-json-server.mjs"

const [port, host, databaseUrl, me] = process.argv.slice(2)
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 30_000 })

/** The counts in Teaching.ts's order, each over the same table alias and waiting condition. */
const counts = [
  ["reviewsToClaim", "learning_review_assignments a", "a", "a.kind = 'staff' AND a.status = 'pooled'"],
  ["reviewsClaimed", "learning_review_assignments a", "a", "a.reviewer_profile_uuid = $1 AND a.status = 'claimed'"],
  ["appealsOpen", "learning_appeals a", "a", "a.status = 'open'"],
  ["threadsUnanswered", "learning_threads t", "t", "t.status = 'open' AND t.last_author_role = 'learner'"],
  ["extensionsPending", "learning_extension_requests x", "x", "x.status = 'requested'"],
  ["incidentsOpen", "learning_incidents i", "i", "i.status = 'open'"],
  ["checkersSuspended", "learning_checkers k", "k", "k.status = 'suspended'", true],
  ["checkersFailing", "learning_checkers k", "k", "k.status = 'ready' AND k.error_streak > 0", true]
]

const waiting = counts.map(([name, table, alias, condition, courseLevel]) => courseLevel
  ? `SELECT '${name}'::text AS name, NULL::uuid AS run_uuid, count(*)::int AS n FROM ${table}
      WHERE ${alias}.course_uuid = page.uuid AND ${condition} HAVING count(*) > 0`
  : `SELECT '${name}'::text AS name, ${alias}.run_uuid AS run_uuid, count(*)::int AS n FROM ${table}
      WHERE ${alias}.course_uuid = page.uuid AND ${condition} GROUP BY ${alias}.run_uuid`).join(" UNION ALL ")

const statements = {
  course: `SELECT page.*, CASE WHEN jsonb_array_length(page.assignments) > 0 THEN
        (SELECT coalesce(jsonb_agg(jsonb_build_array(w.name, w.run_uuid, w.n)), '[]'::jsonb) FROM (${waiting}) w) END AS waiting
    FROM (SELECT c.uuid, c.title, c.status, c.visibility, c.latest_version, c.created_at, c.created_at::text AS position,
        coalesce(jsonb_agg(jsonb_build_object('uuid', s.uuid, 'role', s.role, 'runUuid', s.run_uuid, 'groupUuid', s.group_uuid,
          'grants', s.grants, 'denies', s.denies) ORDER BY s.created_at, s.uuid) FILTER (WHERE s.uuid IS NOT NULL), '[]'::jsonb) AS assignments
      FROM learning_courses c LEFT JOIN learning_staff s ON s.course_uuid = c.uuid AND s.profile_uuid = $1 AND s.status = 'active'
      WHERE c.uuid = $2
      GROUP BY c.uuid ORDER BY c.created_at DESC, c.uuid DESC LIMIT 1) page
    ORDER BY page.created_at DESC, page.uuid DESC`
}
const query = (name, values) => pool.query({ name: `bench_${name}`, text: statements[name], values })

const roleOrder = ["owner", "instructor", "reviewer", "assistant", "analyst"]


serveJson({
  port,
  host,
  pool,
  handle: async (url, res) => {
    const match = /^\/api\/v1\/learning\/teaching\/courses\/([0-9a-f-]{36})$/.exec(url.pathname)
    if (!match) return send(res, 404, { error: { code: "not_found", message: "No route" } })
    const { rows: [course] } = await query("course", [me, match[1]])
    if (!course || !course.assignments.some((a) => a.role === "owner")) return send(res, 404, { error: { code: "not_found", message: "No course" } })
    // A course-wide owner: every count, every run.
    const values = Object.fromEntries(counts.map(([name]) => [name, 0]))
    for (const [name, , n] of course.waiting) values[name] += n
    const held = new Set(course.assignments.map((a) => a.role))
    return send(res, 200, {
      courseUuid: course.uuid,
      courseTitle: course.title,
      courseStatus: course.status,
      roles: roleOrder.filter((role) => held.has(role)),
      assignments: course.assignments.map((a) => ({ uuid: a.uuid, role: a.role, scope: { ...(a.runUuid ? { runUuid: a.runUuid } : {}), ...(a.groupUuid ? { groupUuid: a.groupUuid } : {}) } })),
      counts: values,
      todo: Object.values(values).reduce((sum, n) => sum + n, 0)
    })
  }
})
