// The baseline of the relations benchmark: a bare node:http server with a node-postgres pool (the
// host's size, 10, statements prepared per connection) running the host's statements for
// deals.list and threads.messages, and nothing else: no router, no schemas, no fibers, no logging.
// Per request: the session lookup of the cookie (as the session answer of headline-answers.mjs), then
//   GET /api/v1/commands/deals.list        the page of relationPageRows (RelationRepository.ts) and
//                                          its history (historyRows), as JSON rows
//   GET /api/v1/commands/threads.messages  isParticipant, messagePageRows and markRead (ThreadRepository.ts)
//   POST /api/v1/commands/messages.send    the host's send transaction, statement for statement:
//                                          idempotency claim, thread lock, the sender's advisory
//                                          lock and rate-limit count, the message (one statement with
//                                          the thread and participants), the event, the stored answer
//   GET /__ready                           200 once the database answers
//
// Usage: node bench/lib/bare-relations-server.mjs <port> <host> <database-url>
//   environment BENCH_SERVER_SECRET: the server secret the host runs with (BIRZHA_SECRET)

import { createHash, createHmac } from "node:crypto"
import http from "node:http"
import Pg from "pg"
import { sessionLookup } from "./headline-answers.mjs"

const [port, host, databaseUrl] = process.argv.slice(2)
const secret = process.env.BENCH_SERVER_SECRET
if (!secret) throw new Error("BENCH_SERVER_SECRET is not set")
// The session settings of the host (packages/infrastructure Database.ts): no JIT.
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 30_000, options: "-c jit=off" })
const cookieName = "__Host-birzha_session"

const keyedHash = (value) => createHmac("sha256", secret).update(`session\n${value}`).digest("base64url")

// RelationRepository.ts relationPageRows (kinds = deal, no filters, first page) and historyRows, copied.
const relationColumns = `r.uuid, r.kind, r.status, r.initiator_profile_uuid, r.recipient_profile_uuid, r.initiator_role, r.publication_uuid,
  r.origin_relation_uuid, r.thread_uuid, r.body, r.budget, r.deadline, r.refs, r.reason, r.auto_complete_at, r.completed_at, r.revision,
  r.created_at, r.updated_at`
const dealsPage = {
  name: "bench_deals_page",
  text: `WITH page AS (
      SELECT uuid, updated_at FROM (
        (SELECT uuid, updated_at FROM relations WHERE initiator_profile_uuid = $1::uuid AND kind IN ('deal') ORDER BY updated_at DESC, uuid DESC LIMIT $2)
        UNION ALL
        (SELECT uuid, updated_at FROM relations WHERE recipient_profile_uuid = $1::uuid AND kind IN ('deal') ORDER BY updated_at DESC, uuid DESC LIMIT $2)
      ) both_sides ORDER BY updated_at DESC, uuid DESC LIMIT $2
    )
    SELECT ${relationColumns}, r.updated_at::text AS position,
      cp.uuid AS counterpart_uuid, cp.name AS counterpart_name, cp.type AS counterpart_type, cp.avatar_url AS counterpart_avatar_url,
      CASE WHEN r.initiator_role IN ('customer', 'contractor') AND (r.initiator_profile_uuid = $1::uuid) = (r.initiator_role = 'contractor')
        THEN ca.alias END AS counterpart_alias,
      pub.kind AS publication_kind, coalesce(pub.approved ->> 'title', pub.draft ->> 'title') AS publication_title,
      d.uuid AS deal_uuid, coalesce(r.thread_uuid, rt.uuid) AS relation_thread_uuid,
      res.version AS results_version, res.body AS results_body, res.refs AS results_refs, res.submitted_at AS results_submitted_at
    FROM relations r
    JOIN profiles cp ON cp.uuid = CASE WHEN r.initiator_profile_uuid = $1::uuid THEN r.recipient_profile_uuid ELSE r.initiator_profile_uuid END
    LEFT JOIN customer_aliases ca ON ca.profile_uuid = cp.uuid
    LEFT JOIN publications pub ON pub.uuid = r.publication_uuid
    LEFT JOIN relations d ON d.origin_relation_uuid = r.uuid
    LEFT JOIN threads rt ON rt.relation_uuid = coalesce(r.origin_relation_uuid, r.uuid)
    LEFT JOIN LATERAL (
      SELECT x.version, x.body, x.refs, x.submitted_at FROM relation_results x
      WHERE x.relation_uuid = r.uuid ORDER BY x.version DESC LIMIT 1
    ) res ON true
    JOIN page ON page.uuid = r.uuid
    ORDER BY r.updated_at DESC, r.uuid DESC`
}
const history = {
  name: "bench_history",
  text: `SELECT relation_uuid, status, by_role, at FROM relation_history WHERE relation_uuid = ANY($1::uuid[]) ORDER BY relation_uuid, seq`
}
// ThreadRepository.ts isParticipant, messagePageRows (first page) and markRead, copied.
const participant = {
  name: "bench_participant",
  text: `SELECT 1 FROM thread_participants WHERE thread_uuid = $1 AND profile_uuid = $2`
}
const messages = {
  name: "bench_messages",
  text: `SELECT m.uuid, m.seq::text AS seq, m.thread_uuid, m.author_profile_uuid, m.body, m.refs, m.hidden, m.created_at FROM messages m
    WHERE m.thread_uuid = $1 AND m.seq > $2::bigint ORDER BY m.seq LIMIT $3`
}
const markRead = {
  name: "bench_mark_read",
  text: `UPDATE thread_participants SET last_read_seq = $3::bigint WHERE thread_uuid = $1 AND profile_uuid = $2 AND last_read_seq < $3::bigint`
}

// The send transaction (Idempotency.ts, ThreadRepository.ts, RateLimit.ts, Outbox.ts), copied.
const sendStatements = {
  claim: {
    name: "bench_idempotency_claim",
    text: `INSERT INTO idempotency_keys (scope, request_uuid, operation_id, request_hash) VALUES ($1, $2, $3, $4)
      ON CONFLICT (scope, request_uuid) DO NOTHING RETURNING request_uuid`
  },
  lockThread: {
    name: "bench_lock_thread",
    text: `SELECT t.uuid, t.relation_uuid, t.publication_uuid, t.low_profile_uuid, t.high_profile_uuid, t.created_by_profile_uuid, t.last_message_at,
      t.revision, t.created_at FROM threads t WHERE t.uuid = $1 AND $2::uuid IN (t.low_profile_uuid, t.high_profile_uuid) FOR UPDATE`
  },
  lockSubject: { name: "bench_lock_subject", text: "SELECT pg_advisory_xact_lock(hashtext($1))" },
  count: {
    name: "bench_count_window",
    text: `WITH recent AS (
        SELECT at FROM rate_limit_hits WHERE bucket = $1 AND subject = $2 AND at > clock_timestamp() - make_interval(secs => $3)
        ORDER BY at DESC LIMIT $4
      ), counted AS (
        SELECT count(*)::int AS hits, ceil(extract(epoch FROM (min(at) + make_interval(secs => $3) - clock_timestamp())))::int AS oldest_wait FROM recent
      ), hit AS (
        INSERT INTO rate_limit_hits (bucket, subject, at) SELECT $1, $2, clock_timestamp() FROM counted WHERE hits < $4
      )
      SELECT hits, oldest_wait FROM counted`
  },
  message: {
    name: "bench_insert_message",
    text: `WITH m AS (
        INSERT INTO messages (thread_uuid, author_profile_uuid, body, refs) VALUES ($1, $2, $3, $4::jsonb) RETURNING *
      ), thread AS (
        UPDATE threads SET revision = revision + 1, last_message_at = (SELECT created_at FROM m) WHERE uuid = $1
      ), participants AS (
        UPDATE thread_participants SET last_message_at = (SELECT created_at FROM m),
          last_read_seq = CASE WHEN profile_uuid = $2 THEN (SELECT seq FROM m) ELSE last_read_seq END
        WHERE thread_uuid = $1
      )
      SELECT uuid, seq::text AS seq, thread_uuid, author_profile_uuid, body, refs, hidden, created_at FROM m`
  },
  event: {
    name: "bench_append_event",
    text: `INSERT INTO outbox_events (type, schema_version, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
      VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb) RETURNING uuid`
  },
  answer: { name: "bench_idempotency_answer", text: "UPDATE idempotency_keys SET response = $1::jsonb WHERE scope = $2 AND request_uuid = $3" }
}

const readBody = (req) => new Promise((done, fail) => {
  const chunks = []
  req.on("data", (chunk) => chunks.push(chunk))
  req.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
  req.on("error", fail)
})

/** messages.send as one transaction of the host's statements; the answer is the message row as JSON. */
const sendMessage = async (me, input) => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const hash = createHash("sha256").update(JSON.stringify(["messages.send", input])).digest("base64url")
    const claimed = await client.query({ ...sendStatements.claim, values: [me, input.requestUuid, "messages.send", hash] })
    if (claimed.rows.length === 0) throw Object.assign(new Error("request_conflict"), { status: 409 })
    const { rows: [thread] } = await client.query({ ...sendStatements.lockThread, values: [input.threadUuid, me] })
    if (thread === undefined) throw Object.assign(new Error("not_found"), { status: 404 })
    await client.query({ ...sendStatements.lockSubject, values: [`messages:${me}`] })
    const { rows: [counted] } = await client.query({ ...sendStatements.count, values: ["messages", me, 3600, 600] })
    if (counted.hits >= 600) throw Object.assign(new Error("rate_limited"), { status: 429 })
    const { rows: [message] } = await client.query({ ...sendStatements.message, values: [thread.uuid, me, input.body, "[]"] })
    const other = thread.low_profile_uuid === me ? thread.high_profile_uuid : thread.low_profile_uuid
    await client.query({
      ...sendStatements.event,
      values: ["message.received", 1, "message", message.uuid, 1, JSON.stringify({ objectUuid: message.uuid, status: "sent", threadUuid: thread.uuid }),
        JSON.stringify({ profileUuid: me, audience: [other], threadUuid: thread.uuid })]
    })
    await client.query({ ...sendStatements.answer, values: [JSON.stringify(message), me, input.requestUuid] })
    await client.query("COMMIT")
    return message
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

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  const handle = async () => {
    if (url.pathname === "/__ready") {
      await pool.query("SELECT 1")
      return send(res, 200, { ready: true })
    }
    const token = sessionToken(req.headers.cookie)
    const { rows: sessions } = token === "" ? { rows: [] } : await pool.query({ ...sessionLookup, values: [keyedHash(token)] })
    if (sessions.length === 0) return send(res, 401, { error: { code: "unauthenticated", message: "Sign in first" } })
    const me = sessions[0].profile_uuid
    if (url.pathname === "/api/v1/commands/messages.send" && req.method === "POST") {
      try {
        return send(res, 200, await sendMessage(me, JSON.parse(await readBody(req))))
      } catch (error) {
        if (error.status === undefined) throw error
        return send(res, error.status, { error: { code: error.message, message: error.message } })
      }
    }
    if (url.pathname === "/api/v1/commands/deals.list") {
      const { rows } = await pool.query({ ...dealsPage, values: [me, 21] })
      const page = rows.slice(0, 20)
      const { rows: steps } = await pool.query({ ...history, values: [page.map((row) => row.uuid)] })
      return send(res, 200, { items: page.map((row) => ({ ...row, history: steps.filter((s) => s.relation_uuid === row.uuid) })) })
    }
    if (url.pathname === "/api/v1/commands/threads.messages") {
      const thread = url.searchParams.get("threadUuid")
      const { rows: member } = await pool.query({ ...participant, values: [thread, me] })
      if (member.length === 0) return send(res, 404, { error: { code: "not_found", message: "No such thread" } })
      const { rows } = await pool.query({ ...messages, values: [thread, "0", 21] })
      const page = rows.slice(0, 20)
      if (page.length > 0) await pool.query({ ...markRead, values: [thread, me, page[page.length - 1].seq] })
      return send(res, 200, { items: page })
    }
    return send(res, 404, { error: { code: "not_found", message: "No such route" } })
  }
  handle().catch((error) => send(res, 500, { error: { code: "internal_error", message: String(error.message) } }))
})
server.keepAliveTimeout = 65_000
server.listen(Number(port), host)
