// The baseline of the reviews benchmark: a bare node:http server with a node-postgres pool (the
// host's size, 10, statements prepared per connection) running the host's statements for the two
// public reads, and nothing else: no router, no schemas, no fibers, no logging.
//   GET /api/v1/commands/reviews.list_public?profileUuid=  publicStatsOf and publishedPage
//                                                          (ReviewRepository.ts), as JSON rows
//   GET /api/v1/commands/customers.get?customerAlias=      profileOfAlias (CustomerAliasRepository.ts),
//                                                          statsOf, completedDealsOf, publishedPage
//   GET /__ready                                           200 once the database answers
//
// Usage: node bench/lib/bare-reviews-server.mjs <port> <host> <database-url>

import http from "node:http"
import Pg from "pg"

const [port, host, databaseUrl] = process.argv.slice(2)
// The session settings of the host (packages/infrastructure Database.ts): no JIT.
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 30_000, options: "-c jit=off" })

// ReviewRepository.ts and CustomerAliasRepository.ts, copied.
const columns = `v.uuid, v.relation_uuid, v.author_profile_uuid, v.subject_profile_uuid, v.subject_role, v.rating, v.body, v.status,
  v.window_ends_at, v.reply_body, v.reply_created_at, v.reply_updated_at, v.moderation_reason, v.revision, v.created_at, v.updated_at, v.published_at`
const publicStats = {
  name: "bench_public_stats",
  text: `SELECT s.review_count, s.rating_sum, s.ratings FROM profiles p LEFT JOIN accounts a ON a.uuid = p.account_uuid
    LEFT JOIN review_stats s ON s.profile_uuid = p.uuid AND s.subject_role = $2
    WHERE p.uuid = $1 AND p.deleted_at IS NULL AND a.deleted_at IS NULL
    AND (p.is_public OR EXISTS (SELECT 1 FROM publications x WHERE x.owner_profile_uuid = p.uuid AND x.approved IS NOT NULL AND NOT x.hidden AND x.deleted_at IS NULL))`
}
const stats = {
  name: "bench_stats",
  text: "SELECT review_count, rating_sum, ratings FROM review_stats WHERE profile_uuid = $1 AND subject_role = $2"
}
const page = {
  name: "bench_published_page",
  text: `SELECT ${columns}, v.published_at::text AS position,
      a.name AS author_name, a.type AS author_type, (a.is_public AND a.deleted_at IS NULL) AS author_public, a.avatar_url AS author_avatar_url,
      CASE WHEN v.subject_role = 'specialist' THEN ca.alias END AS author_alias
    FROM reviews v JOIN profiles a ON a.uuid = v.author_profile_uuid
    LEFT JOIN customer_aliases ca ON ca.profile_uuid = v.author_profile_uuid
    WHERE v.subject_profile_uuid = $1 AND v.subject_role = $2 AND v.status = 'published'
    ORDER BY v.published_at DESC, v.uuid DESC LIMIT $3`
}
const alias = {
  name: "bench_alias",
  text: `SELECT a.profile_uuid, a.created_at FROM customer_aliases a
    JOIN profiles p ON p.uuid = a.profile_uuid WHERE a.alias = $1 AND p.deleted_at IS NULL`
}
const deals = {
  name: "bench_completed_deals",
  text: "SELECT completed_deals AS n FROM customer_stats WHERE profile_uuid = $1"
}

const send = (res, status, value) => {
  const body = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const summary = (row) => row === undefined ? { reviewCount: 0, ratingAverage: null } : {
  reviewCount: row.review_count,
  ratingAverage: row.review_count === 0 ? null : Math.round((row.rating_sum / row.review_count) * 100) / 100,
  ratings: row.ratings
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  const handle = async () => {
    if (url.pathname === "/__ready") {
      await pool.query("SELECT 1")
      return send(res, 200, { ready: true })
    }
    if (url.pathname === "/api/v1/commands/reviews.list_public") {
      const profile = url.searchParams.get("profileUuid")
      const [{ rows: found }, { rows }] = await Promise.all([
        pool.query({ ...publicStats, values: [profile, "specialist"] }),
        pool.query({ ...page, values: [profile, "specialist", 21] })
      ])
      if (found.length === 0) return send(res, 404, { error: { code: "not_found", message: "No such profile" } })
      const row = found[0].review_count === null ? undefined : found[0]
      return send(res, 200, { summary: summary(row), items: rows.slice(0, 20) })
    }
    if (url.pathname === "/api/v1/commands/customers.get") {
      const { rows: [customer] } = await pool.query({ ...alias, values: [url.searchParams.get("customerAlias")] })
      if (customer === undefined) return send(res, 404, { error: { code: "not_found", message: "No such customer" } })
      const [{ rows: [row] }, { rows: [count] }, { rows }] = await Promise.all([
        pool.query({ ...stats, values: [customer.profile_uuid, "customer"] }),
        pool.query({ ...deals, values: [customer.profile_uuid] }),
        pool.query({ ...page, values: [customer.profile_uuid, "customer", 21] })
      ])
      return send(res, 200, { customer: { ...summary(row), completedDeals: count?.n ?? 0, since: customer.created_at }, items: rows.slice(0, 20) })
    }
    return send(res, 404, { error: { code: "not_found", message: "No such route" } })
  }
  handle().catch((error) => send(res, 500, { error: { code: "internal_error", message: String(error.message) } }))
})
server.keepAliveTimeout = 65_000
server.listen(Number(port), host)
