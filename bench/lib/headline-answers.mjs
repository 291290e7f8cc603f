// What the bare, Fastify and Hono peers of the three host-overhead benchmarks answer, written once
// (bench/lib/peer-server.mjs mounts these routes in each framework; only that glue differs). Each
// route's `answer` takes what it reads of the request ({ params, cookie, requestId }) and returns
// { status, headers, body } (headers a plain object with content-length, body a string or Buffer)
// or a promise of it. The work per request is the host's work for the same answer and nothing else:
//
// - every answer carries `x-request-id`, the well-formed one the request came with or a new uuid
//   (packages/http-host/src/RequestId.ts), so the answer check can send a fixed id and compare
//   bytes and headers exactly while the load, which sends none, has each server make a uuid;
// - `constant`: the host's answer to GET /api/v1/event-types, its bytes and headers replayed;
// - `session`: GET /api/v1/auth/session, the session cookie's keyed hash under the server secret
//   (packages/domain/src/auth/ServerSecret.ts keyedHash, purpose "session") and the lookup of
//   packages/domain/src/auth/SessionRepository.ts (byTokenHash, the same SQL), the AuthSession JSON;
// - `publication`: GET /api/v1/publications/{uuid}, the statement of
//   packages/domain/src/publications/PublicationRepository.ts (publicByUuid, the same SQL) and the
//   Publication of packages/domain/src/publications/PublicReads.ts.
//
// Statements run named, so node-postgres prepares each once per connection as the host's
// PreparingClient does (packages/infrastructure/src/database/PreparingClient.ts): an unnamed one
// has Postgres parse and plan it on every request, which the host does not pay.
//
// The configuration (a JSON file, see peerConfig) holds no secret: the server secret comes from
// the environment (BENCH_SERVER_SECRET), as the host's from BIRZHA_SECRET.

import { createHmac, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import Pg from "pg"

/** The answers a peer can serve, by the name its configuration gives. */
export const answerKinds = ["constant", "session", "publication"]

const wellFormedRequestId = /^[A-Za-z0-9\-._~:@+=/]{1,128}$/

/** The request's id as the host keeps or makes it (packages/http-host/src/RequestId.ts). */
export const requestIdOf = (given) => (typeof given === "string" && wellFormedRequestId.test(given) ? given : randomUUID())

/** Headers a peer sets per answer (or node sets itself), not replayed from the host's sample. */
const perAnswer = new Set(["content-length", "x-request-id", "date", "connection", "keep-alive", "transfer-encoding"])

/** A host answer's replayable raw header pairs as an object, less those set per answer. */
const replayed = (pairs) => {
  const headers = {}
  for (let i = 0; i < pairs.length; i += 2) {
    if (!perAnswer.has(pairs[i].toLowerCase())) headers[pairs[i].toLowerCase()] = pairs[i + 1]
  }
  return headers
}

const answer = (status, requestId, headers, body, length = String(Buffer.byteLength(body))) => ({
  status,
  headers: { "x-request-id": requestId, ...headers, "content-length": length },
  body
})

const jsonHeaders = { "content-type": "application/json" }

const ready = (pool) => ({
  path: "/__ready",
  answer: async ({ requestId }) => {
    if (pool !== undefined) await pool.query("SELECT 1")
    return answer(200, requestId, jsonHeaders, "{}")
  }
})

// The pool of the host's size and session settings (packages/infrastructure Database.ts): 10, no
// JIT. Connections never idle out (the host's close after 30 s idle): a peer idles for minutes
// between its two runs, and reconnecting would charge new backends and their statements' preparing
// to its second run, which the host, measured once, does not pay.
const hostPool = (databaseUrl) => new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 0, options: "-c jit=off" })

/** The host's answer to GET /api/v1/event-types, replayed: its bytes, its headers. */
const constant = ({ path, bodyFile, headers }) => {
  const body = readFileSync(bodyFile)
  const fixed = replayed(headers)
  const length = String(body.length)
  return { routes: [{ path, answer: ({ requestId }) => answer(200, requestId, fixed, body, length) }, ready(undefined)], close: async () => {} }
}

export const sessionLookup = {
  name: "bench_session_lookup",
  text: `SELECT s.uuid AS session_uuid, s.expires_at, a.uuid AS account_uuid, a.email, p.uuid AS profile_uuid, p.name, p.type
    FROM sessions s
    JOIN accounts a ON a.uuid = s.account_uuid AND a.deleted_at IS NULL
    JOIN profiles p ON p.uuid = s.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`
}

const unauthenticated = JSON.stringify({ error: { code: "unauthenticated", message: "Sign in first" } })

/** GET /api/v1/auth/session: the cookie's keyed hash, the lookup, the AuthSession JSON. */
const session = ({ path, databaseUrl, cookieName, headers }) => {
  const secret = process.env.BENCH_SERVER_SECRET
  if (!secret) throw new Error("BENCH_SERVER_SECRET is not set")
  const pool = hostPool(databaseUrl)
  const fixed = replayed(headers)
  const keyedHash = (token) => createHmac("sha256", secret).update(`session\n${token}`).digest("base64url")
  /** The value of the session cookie in a Cookie header, or "" (decoded as the platform's cookie parser does). */
  const sessionToken = (header) => {
    if (typeof header !== "string") return ""
    for (const part of header.split(";")) {
      const eq = part.indexOf("=")
      if (eq > 0 && part.slice(0, eq).trim() === cookieName) {
        const raw = part.slice(eq + 1).trim()
        try {
          return raw.includes("%") ? decodeURIComponent(raw) : raw
        } catch {
          return ""
        }
      }
    }
    return ""
  }
  const route = {
    path,
    answer: async ({ cookie, requestId }) => {
      const token = sessionToken(cookie)
      if (token.length === 0 || token.length > 200) return answer(401, requestId, jsonHeaders, unauthenticated)
      const { rows } = await pool.query({ ...sessionLookup, values: [keyedHash(token)] })
      if (rows.length === 0) return answer(401, requestId, jsonHeaders, unauthenticated)
      const row = rows[0]
      // authSessionOf, in the schema's field order; expiresAt a Date, encoded as its ISO string.
      const body = JSON.stringify({
        user: { uuid: row.account_uuid, email: row.email },
        profile: { uuid: row.profile_uuid, name: row.name, type: row.type },
        expiresAt: row.expires_at
      })
      return answer(200, requestId, fixed, body)
    }
  }
  return { routes: [route, ready(pool)], close: () => pool.end() }
}

const publicationByUuid = {
  name: "bench_publication_by_uuid",
  text: `SELECT p.uuid, p.id, p.kind, o.id AS owner_id, o.uuid AS owner_uuid, p.approved, p.closed, p.demo, p.created_at, p.approved_at, p.approved_at::text AS approved_key FROM publications p
  JOIN profiles o ON o.uuid = p.owner_profile_uuid WHERE p.uuid = $1 AND p.approved IS NOT NULL AND NOT p.hidden AND p.deleted_at IS NULL AND o.deleted_at IS NULL`
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const noSuchPublication = JSON.stringify({ error: { code: "not_found", message: "No such publication" } })

/** GET /api/v1/publications/{uuid}: the public read, the spec's Publication (draft = approved). */
/** A publication row as the host's `GET /api/v1/publications/{uuid}` answers it (publications/PublicReads.ts). */
export const publicationOf = (row) => ({
  uuid: row.uuid,
  id: row.id,
  ownerId: row.owner_id,
  ownerUuid: row.owner_uuid,
  kind: row.kind,
  approved: row.approved,
  draft: row.approved,
  status: "approved",
  hidden: false,
  history: [],
  reason: "",
  closed: row.closed,
  createdAt: row.created_at,
  updatedAt: row.approved_at
})

const publication = ({ path, databaseUrl, headers }) => {
  const pool = hostPool(databaseUrl)
  const fixed = replayed(headers)
  const route = {
    path,
    answer: async ({ params, requestId }) => {
      // A path that is no uuid never reaches Postgres (the host's path schema refuses it too).
      if (!uuidPattern.test(params.uuid)) return answer(404, requestId, jsonHeaders, noSuchPublication)
      const { rows } = await pool.query({ ...publicationByUuid, values: [params.uuid] })
      if (rows.length === 0) return answer(404, requestId, jsonHeaders, noSuchPublication)
      const row = rows[0]
      const body = JSON.stringify(publicationOf(row))
      return answer(200, requestId, fixed, body)
    }
  }
  return { routes: [route, ready(pool)], close: () => pool.end() }
}

const makers = { constant, session, publication }

/**
 * The routes of one peer from its configuration: `{ answer: "constant" | "session" | "publication",
 * path, headers (the host's raw header pairs), bodyFile?, databaseUrl?, cookieName? }`; `path` in
 * the `:param` form the frameworks route by. Returns `{ routes: [{ path, answer }], close }`.
 */
export const makeAnswers = (config) => {
  const make = makers[config.answer]
  if (make === undefined) throw new Error(`unknown answer "${config.answer}"; known: ${answerKinds.join(", ")}`)
  return make(config)
}

/** A peer's configuration file, read. */
export const peerConfig = (file) => JSON.parse(readFileSync(file, "utf8"))
