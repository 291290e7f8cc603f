// The baseline of the learning benchmark: a bare node:http server with a node-postgres pool (the
// host's size, 10, statements prepared per connection) running the host's statements for the two
// public learning reads, and nothing else: no router, no schemas, no fibers, no logging.
//   GET /api/v1/learning/courses?q=      the catalog page (Courses.ts listCatalog), as JSON rows
//   GET /api/v1/learning/courses/<uuid>   loadPublicCourse (course and version outline), the open runs (Courses.ts getCourse)
//   GET /__ready                          200 once the database answers
//
// Usage: node bench/lib/bare-learning-server.mjs <port> <host> <database-url>

import Pg from "pg"
import { send, serveJson } from "./bare-json-server.mjs"

const [port, host, databaseUrl] = process.argv.slice(2)
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 30_000 })

// CourseRepository.ts, RunRepository.ts and Courses.ts, copied.
const course = {
  name: "bench_course",
  text: `SELECT c.uuid, c.kind, c.status, c.visibility, c.latest_version, c.metadata, c.publication_uuid,
      v.number, v.title, v.summary, v.outline, v.published_at
    FROM learning_courses c LEFT JOIN learning_course_versions v ON v.course_uuid = c.uuid AND v.number = c.latest_version
    WHERE c.uuid = $1`
}
const runs = {
  name: "bench_runs",
  text: `SELECT r.uuid, r.course_uuid, r.version_number, r.title, r.pacing, r.starts_at, r.ends_at, r.admission, r.capacity,
    r.waitlist, r.enrollment_opens_at, r.enrollment_closes_at, r.pause_policy, r.schedule, r.status, r.finished_at, r.cancelled_at,
    r.revision, r.created_at, r.updated_at, (SELECT c.freeze_after_days FROM learning_courses c WHERE c.uuid = r.course_uuid) AS freeze_after_days,
    r.created_at::text AS position FROM learning_runs r
    WHERE r.course_uuid = $1 AND r.status IN ('scheduled', 'running') ORDER BY r.created_at DESC, r.uuid DESC LIMIT 100`
}
const catalog = (terms) => ({
  text: `SELECT c.uuid, v.title, v.summary, c.kind, c.latest_version, c.metadata, c.publication_uuid, c.published_at, c.published_at::text AS position
    FROM learning_courses c
    JOIN publications p ON p.uuid = c.publication_uuid
    JOIN learning_course_versions v ON v.course_uuid = c.uuid AND v.number = c.latest_version
    WHERE c.status = 'published' AND c.visibility = 'listed' AND c.publication_uuid IS NOT NULL
      AND p.approved IS NOT NULL AND NOT p.hidden AND p.deleted_at IS NULL
      ${terms.map((_, i) => `AND c.search_text LIKE '%' || birzha_search_normalize($${i + 1}) || '%'`).join(" ")}
    ORDER BY c.published_at DESC, c.uuid DESC LIMIT 21`,
  values: terms
})


serveJson({
  port,
  host,
  pool,
  handle: async (url, res) => {
    if (url.pathname === "/api/v1/learning/courses") {
      const terms = (url.searchParams.get("q") ?? "").split(/\s+/u).filter((t) => t.length > 0).map((t) => t.replace(/[\\%_]/g, "\\$&"))
      const { rows } = await pool.query(catalog(terms))
      const items = rows.slice(0, 20).map((r) => ({ uuid: r.uuid, title: r.title, summary: r.summary, kind: r.kind, versionNumber: r.latest_version, metadata: r.metadata, publicationUuid: r.publication_uuid, publishedAt: r.published_at }))
      return send(res, 200, rows.length > 20 ? { items, nextCursor: Buffer.from(JSON.stringify([rows[19].position, rows[19].uuid])).toString("base64url") } : { items })
    }
    const match = /^\/api\/v1\/learning\/courses\/([0-9a-f-]{36})$/.exec(url.pathname)
    if (match) {
      const { rows: [c] } = await pool.query({ ...course, values: [match[1]] })
      if (!c || c.number === null || c.visibility === "private") return send(res, 404, { error: { code: "not_found", message: "No course" } })
      const { rows: open } = await pool.query({ ...runs, values: [c.uuid] })
      return send(res, 200, {
        uuid: c.uuid, title: c.title, summary: c.summary, kind: c.kind, status: c.status, visibility: c.visibility, versionNumber: c.number,
        outline: c.outline, metadata: c.metadata, publicationUuid: c.publication_uuid ?? undefined, publishedAt: c.published_at,
        runs: open.map((r) => ({ uuid: r.uuid, courseUuid: r.course_uuid, versionNumber: r.version_number, title: r.title, status: r.status, startsAt: r.starts_at }))
      })
    }
    return send(res, 404, { error: { code: "not_found", message: "No route" } })
  }
})
