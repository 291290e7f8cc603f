// The baseline of the learning-submit benchmark: a bare node:http server with a node-postgres pool
// (the host's size, 10, statements prepared per connection) running the statements of
// learning.submissions.create on a declaratively checked step, and nothing else: no router, no
// schemas, no fibers, no logging. Per request: the session lookup of the cookie, then one
// transaction: idempotency claim, the enrollment locked, run, course and pinned version read, the
// date overrides read, attempts counted, the submission inserted, the step state moved, the check
// (exact, in JS), the score layer, graded → accepted with their two events, the stored answer.
//
//   POST /api/v1/learning/enrollments/{enrollment}/steps/{node}/submit
//   GET /__ready
//
// Usage: node bench/lib/bare-learning-submit-server.mjs <port> <host> <database-url>
//   environment BENCH_SERVER_SECRET: the server secret the host runs with (BIRZHA_SECRET)

import { createHash, createHmac, randomUUID } from "node:crypto"
import http from "node:http"
import Pg from "pg"

const [port, host, databaseUrl] = process.argv.slice(2)
const secret = process.env.BENCH_SERVER_SECRET
if (!secret) throw new Error("BENCH_SERVER_SECRET is not set")
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 30_000, options: "-c jit=off" })
const cookieName = "__Host-birzha_session"
const keyedHash = (value) => createHmac("sha256", secret).update(`session\n${value}`).digest("base64url")

const statements = {
  lookup: {
    name: "bench_session_lookup",
    text: `SELECT s.uuid AS session_uuid, s.expires_at, a.uuid AS account_uuid, p.uuid AS profile_uuid
      FROM sessions s
      JOIN accounts a ON a.uuid = s.account_uuid AND a.deleted_at IS NULL
      JOIN profiles p ON p.uuid = s.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`
  },
  claim: {
    name: "bench_claim",
    text: `INSERT INTO idempotency_keys (scope, request_uuid, operation_id, request_hash) VALUES ($1, $2, $3, $4)
      ON CONFLICT (scope, request_uuid) DO NOTHING RETURNING request_uuid`
  },
  enrollment: { name: "bench_enrollment", text: "SELECT uuid, run_uuid, course_uuid, profile_uuid, status, started_at FROM learning_enrollments WHERE uuid = $1 FOR UPDATE" },
  run: { name: "bench_run", text: "SELECT uuid, version_number, starts_at, schedule, pacing FROM learning_runs WHERE uuid = $1" },
  course: { name: "bench_course", text: "SELECT uuid, status, visibility FROM learning_courses WHERE uuid = $1" },
  version: { name: "bench_version", text: "SELECT nodes FROM learning_course_versions WHERE course_uuid = $1 AND number = $2" },
  overrides: { name: "bench_overrides", text: "SELECT uuid, node_key, unlock_at, due_at, lock_at, extra_attempts FROM learning_date_overrides WHERE enrollment_uuid = $1 AND status = 'active'" },
  attempts: { name: "bench_attempts", text: "SELECT count(*)::int AS used, coalesce(max(attempt_no), 0)::int + 1 AS next FROM learning_submissions WHERE enrollment_uuid = $1 AND node_key = $2" },
  submission: {
    name: "bench_submission",
    text: `INSERT INTO learning_submissions (uuid, enrollment_uuid, course_uuid, run_uuid, profile_uuid, node_key, version_number, attempt_no, reply, status)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, 'submitted') RETURNING uuid, revision, submitted_at`
  },
  stepState: {
    name: "bench_step_state",
    text: `INSERT INTO learning_step_states (enrollment_uuid, node_key, status) VALUES ($1, $2, 'in_progress')
      ON CONFLICT (enrollment_uuid, node_key) DO UPDATE SET updated_at = now() RETURNING status`
  },
  layer: {
    name: "bench_layer",
    text: `INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, feedback, passed, late)
      VALUES ($1, $2, 'auto', $3, $4, $5, '', $6, false)`
  },
  status: { name: "bench_status", text: "UPDATE learning_submissions SET status = $2, revision = revision + 1, graded_at = clock_timestamp() WHERE uuid = $1 RETURNING revision" },
  event: {
    name: "bench_event",
    text: `INSERT INTO outbox_events (type, schema_version, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
      VALUES ($1, 1, 'learning_submission', $2, $3, $4::jsonb, $5::jsonb) RETURNING uuid`
  },
  answer: { name: "bench_answer", text: "UPDATE idempotency_keys SET response = $1::jsonb WHERE scope = $2 AND request_uuid = $3" }
}

const fail = (status, code) => Object.assign(new Error(code), { status })

const submit = async (me, enrollmentUuid, nodeKey, input) => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const hash = createHash("sha256").update(JSON.stringify(["learning.submissions.create", input])).digest("base64url")
    if ((await client.query({ ...statements.claim, values: [me, input.requestUuid, "learning.submissions.create", hash] })).rows.length === 0) throw fail(409, "request_conflict")
    const { rows: [enrollment] } = await client.query({ ...statements.enrollment, values: [enrollmentUuid] })
    if (enrollment === undefined || enrollment.profile_uuid !== me) throw fail(404, "not_found")
    const { rows: [run] } = await client.query({ ...statements.run, values: [enrollment.run_uuid] })
    await client.query({ ...statements.course, values: [enrollment.course_uuid] })
    const { rows: [version] } = await client.query({ ...statements.version, values: [enrollment.course_uuid, run.version_number] })
    const node = version.nodes.find((n) => n.nodeKey === nodeKey)
    if (node === undefined) throw fail(404, "not_found")
    await client.query({ ...statements.overrides, values: [enrollmentUuid] })
    const { rows: [attempts] } = await client.query({ ...statements.attempts, values: [enrollmentUuid, nodeKey] })
    const uuid = randomUUID()
    const { rows: [row] } = await client.query({
      ...statements.submission,
      values: [uuid, enrollmentUuid, enrollment.course_uuid, run.uuid, me, nodeKey, run.version_number, attempts.next, JSON.stringify(input.reply)]
    })
    await client.query({ ...statements.stepState, values: [enrollmentUuid, nodeKey] })
    const answers = node.grading.check.answers.map((a) => a.trim().toLowerCase())
    const passed = typeof input.reply === "string" && answers.includes(input.reply.trim().toLowerCase())
    const points = passed ? node.grading.maxPoints : 0
    await client.query({ ...statements.layer, values: [randomUUID(), uuid, points, node.grading.maxPoints, passed ? "accepted" : "wrong", passed] })
    const context = JSON.stringify({ profileUuid: me, audience: [me], courseUuid: enrollment.course_uuid, runUuid: run.uuid, enrollmentUuid, nodeKey, submissionUuid: uuid })
    let { rows: [{ revision }] } = await client.query({ ...statements.status, values: [uuid, "graded"] })
    await client.query({ ...statements.event, values: ["learning.submission.graded", uuid, revision, JSON.stringify({ objectUuid: uuid, status: "graded" }), context] })
    if (passed) {
      ;({ rows: [{ revision }] } = await client.query({ ...statements.status, values: [uuid, "accepted"] }))
      await client.query({ ...statements.event, values: ["learning.submission.accepted", uuid, revision, JSON.stringify({ objectUuid: uuid, status: "accepted" }), context] })
    }
    const answer = { uuid, revision, enrollmentUuid, nodeKey, attemptNo: attempts.next, status: passed ? "accepted" : "graded", submittedAt: row.submitted_at, score: { points } }
    await client.query({ ...statements.answer, values: [JSON.stringify(answer), me, input.requestUuid] })
    await client.query("COMMIT")
    return answer
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

const sessionToken = (header) => {
  if (header === undefined) return ""
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === cookieName) return part.slice(eq + 1).trim()
  }
  return ""
}
const send = (res, status, value) => {
  const body = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}
const readBody = (req) => new Promise((done, failed) => {
  const chunks = []
  req.on("data", (chunk) => chunks.push(chunk))
  req.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
  req.on("error", failed)
})
const route = /^\/api\/v1\/learning\/enrollments\/([0-9a-f-]{36})\/steps\/([a-z0-9_-]+)\/submit$/

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  const handle = async () => {
    if (url.pathname === "/__ready") {
      await pool.query("SELECT 1")
      return send(res, 200, { ready: true })
    }
    const token = sessionToken(req.headers.cookie)
    const { rows: sessions } = token === "" ? { rows: [] } : await pool.query({ ...statements.lookup, values: [keyedHash(token)] })
    if (sessions.length === 0) return send(res, 401, { error: { code: "unauthenticated", message: "Sign in first" } })
    const match = route.exec(url.pathname)
    if (match === null || req.method !== "POST") return send(res, 404, { error: { code: "not_found", message: "No such route" } })
    try {
      return send(res, 200, await submit(sessions[0].profile_uuid, match[1], match[2], JSON.parse(await readBody(req))))
    } catch (error) {
      if (error.status === undefined) throw error
      return send(res, error.status, { error: { code: error.message, message: error.message } })
    }
  }
  handle().catch((error) => send(res, 500, { error: { code: "internal_error", message: String(error.message) } }))
})
server.keepAliveTimeout = 65_000
server.listen(Number(port), host)
