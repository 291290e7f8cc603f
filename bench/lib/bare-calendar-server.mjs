// The baseline of the learning-calendar benchmark: a bare node:http server with a node-postgres
// pool (the host's size, 10, statements prepared per connection) running the host's statements
// for learning.calendar.get (EnrollmentRepository.ts, RunRepository.ts, CourseRepository.ts,
// EnrollmentAccess.ts, Dates.ts, StepStates.ts) and computing the same layers (schedule/offset →
// overrides → pauses) in plain JavaScript: no router, no schemas, no fibers, no session check.
//   GET /api/v1/learning/enrollments/<uuid>/calendar   the calendar as JSON
//   GET /__ready                                       200 once the database answers
//
// Usage: node bench/lib/bare-calendar-server.mjs <port> <host> <database-url>

import Pg from "pg"
import { send, serveJson } from "./bare-json-server.mjs"

const [port, host, databaseUrl] = process.argv.slice(2)
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 30_000 })

const statements = {
  enrollment: `SELECT e.uuid, e.run_uuid, e.course_uuid, e.profile_uuid, e.status, e.started_at, e.revision, e.paused_at, e.pauses
    FROM learning_enrollments e WHERE e.uuid = $1`,
  run: `SELECT r.uuid, r.course_uuid, r.version_number, r.title, r.pacing, r.starts_at, r.schedule, r.status,
    (SELECT c.freeze_after_days FROM learning_courses c WHERE c.uuid = r.course_uuid) AS freeze_after_days FROM learning_runs r WHERE r.uuid = $1`,
  course: "SELECT uuid, title, completion_policy FROM learning_courses WHERE uuid = $1",
  version: "SELECT nodes FROM learning_course_versions WHERE course_uuid = $1 AND number = $2",
  policies: "SELECT seat_offer_hours, withdraw_grace_hours, restore_days, reminder_hours FROM learning_runs WHERE uuid = $1",
  overrides: `SELECT uuid, node_key, group_uuid, unlock_at, due_at, lock_at, extra_attempts, origin, reason, created_at FROM learning_date_overrides
    WHERE enrollment_uuid = $1 AND status = 'active' ORDER BY created_at, uuid`,
  states: "SELECT node_key, status FROM learning_step_states WHERE enrollment_uuid = $1"
}
const query = (name, values) => pool.query({ name: `bench_${name}`, text: statements[name], values })

const day = 86_400_000
const fields = [["unlockAt", "unlock_at"], ["dueAt", "due_at"], ["lockAt", "lock_at"]]

const calendar = (enrollment, run, nodes, overrides, states) => {
  const anchor = run.pacing === "cohort" ? run.starts_at : enrollment.started_at
  const now = Date.now()
  const items = []
  for (const node of nodes) {
    if (node.kind !== "step") continue
    const explicit = run.schedule[node.nodeKey] ?? {}
    const dates = {}
    const provenance = []
    const put = (field, at, source, detail) => {
      dates[field] = at
      provenance.push({ field, source, at: new Date(at).toISOString(), ...(detail ? { detail } : {}) })
    }
    if (explicit.unlockAt) put("unlockAt", Date.parse(explicit.unlockAt), "schedule")
    else if (anchor) put("unlockAt", anchor.getTime() + (node.unlockOffsetDays ?? 0) * day, "offset", "days after the run's start")
    if (explicit.dueAt) put("dueAt", Date.parse(explicit.dueAt), "schedule")
    else if (anchor && node.dueOffsetDays !== undefined) put("dueAt", anchor.getTime() + node.dueOffsetDays * day, "offset", "days after the run's start")
    if (explicit.lockAt) put("lockAt", Date.parse(explicit.lockAt), "schedule")
    let extra = 0
    for (const row of overrides) {
      if (row.node_key !== null && row.node_key !== node.nodeKey) continue
      for (const [field, column] of fields) if (row[column] !== null) put(field, row[column].getTime(), row.origin === "manual" ? "override" : row.origin, row.reason)
      extra += row.extra_attempts
    }
    for (const pause of enrollment.pauses) {
      const from = Date.parse(pause.from)
      for (const [field] of fields) if (dates[field] !== undefined && dates[field] >= from) put(field, dates[field] + pause.days * day, "pause")
    }
    const state = states.get(node.nodeKey)
    items.push({
      nodeKey: node.nodeKey,
      title: node.title,
      ...(node.parentKey ? { moduleKey: node.parentKey } : {}),
      status: state && state !== "locked" && state !== "available" ? state : dates.unlockAt !== undefined && dates.unlockAt <= now ? "available" : "locked",
      ...Object.fromEntries(fields.filter(([field]) => dates[field] !== undefined).map(([field]) => [field, new Date(dates[field]).toISOString()])),
      extraAttempts: extra,
      provenance
    })
  }
  return items
}


serveJson({
  port,
  host,
  pool,
  handle: async (url, res) => {
    const match = /^\/api\/v1\/learning\/enrollments\/([0-9a-f-]{36})\/calendar$/.exec(url.pathname)
    if (!match) return send(res, 404, { error: { code: "not_found", message: "No route" } })
    const { rows: [enrollment] } = await query("enrollment", [match[1]])
    if (!enrollment) return send(res, 404, { error: { code: "not_found", message: "No enrollment" } })
    const { rows: [run] } = await query("run", [enrollment.run_uuid])
    const { rows: [course] } = await query("course", [enrollment.course_uuid])
    const { rows: [version] } = await query("version", [run.course_uuid, run.version_number])
    await query("policies", [run.uuid])
    const { rows: overrides } = await query("overrides", [enrollment.uuid])
    const { rows: states } = await query("states", [enrollment.uuid])
    const items = calendar(enrollment, run, version.nodes, overrides, new Map(states.map((s) => [s.node_key, s.status])))
    return send(res, 200, { enrollmentUuid: enrollment.uuid, runUuid: run.uuid, courseUuid: course.uuid, format: "json", generatedAt: new Date().toISOString(), items })
  }
})
