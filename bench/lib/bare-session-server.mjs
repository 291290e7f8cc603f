// The baseline of auth-session: a bare node:http server with a node-postgres pool (the host's size,
// 10, statements prepared per connection as the host's PreparingClient does) answering
// GET /api/v1/auth/session as the host does, and nothing else: no router, no schemas, no fibers,
// no logging. Per request: read the session cookie, its keyed hash under the server secret
// (packages/domain/src/auth/ServerSecret.ts keyedHash, purpose "session"), the session/account/
// profile lookup of packages/domain/src/auth/Sessions.ts (the same SQL), the AuthSession JSON
// (authSessionOf) with the host's response headers.
//
// Usage: node bench/lib/bare-session-server.mjs <port> <host> <database-url> <cookie-name> <headers-file>
//   environment BENCH_SERVER_SECRET: the server secret the host runs with (BIRZHA_SECRET)
//   <headers-file>: JSON array of raw header name/value pairs of the host's 200 answer, replayed
//   GET /api/v1/auth/session   200 AuthSession, or 401 when no usable session
//   GET /__ready               200 once the database answers

import { createHmac } from "node:crypto"
import { readFileSync } from "node:fs"
import http from "node:http"
import Pg from "pg"

const [port, host, databaseUrl, cookieName, headersFile] = process.argv.slice(2)
const secret = process.env.BENCH_SERVER_SECRET
if (!secret) throw new Error("BENCH_SERVER_SECRET is not set")
// The session settings of the host (packages/infrastructure Database.ts): no JIT.
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 30_000, options: "-c jit=off" })

// The host's headers, less content-length (set per answer).
const pairs = JSON.parse(readFileSync(headersFile, "utf8"))
const headers = []
for (let i = 0; i < pairs.length; i += 2) {
  if (pairs[i].toLowerCase() !== "content-length") headers.push(pairs[i], pairs[i + 1])
}

// Sessions.ts: keyedHash(secret, "session", token) and lookupToken's statement, copied.
const keyedHash = (value) => createHmac("sha256", secret).update(`session\n${value}`).digest("base64url")
const lookup = {
  name: "bench_session_lookup",
  text: `SELECT s.uuid AS session_uuid, s.expires_at, a.uuid AS account_uuid, a.email, p.uuid AS profile_uuid, p.name, p.type
    FROM sessions s
    JOIN accounts a ON a.uuid = s.account_uuid AND a.deleted_at IS NULL
    JOIN profiles p ON p.uuid = s.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`
}

/** The value of the session cookie in a Cookie header, or "" (decoded as the platform's cookie parser does). */
const sessionToken = (header) => {
  if (header === undefined) return ""
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === cookieName) {
      const raw = part.slice(eq + 1).trim()
      return raw.includes("%") ? decodeURIComponent(raw) : raw
    }
  }
  return ""
}

const send = (res, status, body, extra) => {
  res.writeHead(status, [...extra, "content-length", String(Buffer.byteLength(body))])
  res.end(body)
}
const unauthenticated = JSON.stringify({ error: { code: "unauthenticated", message: "Sign in first" } })

const server = http.createServer((req, res) => {
  const url = req.url ?? "/"
  const handle = async () => {
    if (url === "/api/v1/auth/session") {
      const token = sessionToken(req.headers.cookie)
      if (token.length === 0 || token.length > 200) return send(res, 401, unauthenticated, ["content-type", "application/json"])
      const { rows } = await pool.query({ ...lookup, values: [keyedHash(token)] })
      if (rows.length === 0) return send(res, 401, unauthenticated, ["content-type", "application/json"])
      const row = rows[0]
      // authSessionOf, in the schema's field order; expiresAt a Date, encoded as its ISO string.
      const body = JSON.stringify({
        user: { uuid: row.account_uuid, email: row.email },
        profile: { uuid: row.profile_uuid, name: row.name, type: row.type },
        expiresAt: row.expires_at
      })
      return send(res, 200, body, headers)
    }
    if (url === "/__ready") {
      await pool.query("SELECT 1")
      return send(res, 200, "{}", ["content-type", "application/json"])
    }
    return send(res, 404, JSON.stringify({ error: { code: "not_found", message: "No such route" } }), ["content-type", "application/json"])
  }
  handle().catch((error) => send(res, 500, JSON.stringify({ error: { code: "internal_error", message: String(error.message) } }), ["content-type", "application/json"]))
})

server.listen(Number(port), host)
process.on("SIGTERM", () => {
  server.close(() => pool.end().then(() => process.exit(0)))
  server.closeAllConnections()
})
