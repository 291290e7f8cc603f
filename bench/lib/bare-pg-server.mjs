// The baseline of the catalog benchmark: a bare node:http server with a node-postgres pool (the
// host's size, 10) answering getCatalog with the same SQL and the same JSON, and nothing else: no
// router, no schemas, no fibers, no logging. (getPublication's peers are bench/lib/peer-server.mjs.)
//
// Usage: node bench/lib/bare-pg-server.mjs <port> <host> <database-url>
//   GET /api/v1/catalog              getCatalog
//   GET /__ready                     200 once the database answers
//   GET /__memory                    this process's memory: { rss, heapUsed, peakRss, peakHeapUsed }
//
// The SQL is packages/domain/src/publications/PublicReads.ts and Visibility.ts, copied.

import http from "node:http"
import Pg from "pg"
import { publicationOf } from "./headline-answers.mjs"

const [port, host, databaseUrl] = process.argv.slice(2)
// The session settings of the host (packages/infrastructure Database.ts): no JIT.
const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, options: "-c jit=off" })

const publicColumns = `p.uuid, p.id, p.kind, o.id AS owner_id, o.uuid AS owner_uuid, p.approved, p.closed, p.demo,
  p.created_at, p.approved_at, p.approved_at::text AS approved_key`
const publicationsJoin = `publications p
  JOIN profiles o ON o.uuid = p.owner_profile_uuid
  LEFT JOIN accounts oa ON oa.uuid = o.account_uuid`
const publiclyVisible = `p.approved IS NOT NULL AND NOT p.hidden AND p.deleted_at IS NULL
  AND o.deleted_at IS NULL AND oa.deleted_at IS NULL`
const profileColumns = `p.uuid, p.id, p.name, p.type, p.is_public, p.show_contacts, p.avatar_url, p.about, p.categories,
  p.contacts, p.networks, p.skills, p.structured_contacts, p.revision, p.created_at, p.updated_at`

const catalogProfiles = `SELECT ${profileColumns} FROM profiles p LEFT JOIN accounts a ON a.uuid = p.account_uuid
  WHERE p.is_public AND p.deleted_at IS NULL AND a.deleted_at IS NULL ORDER BY p.created_at DESC, p.uuid DESC`
const catalogPublications = `SELECT ${publicColumns} FROM ${publicationsJoin} WHERE ${publiclyVisible} ORDER BY p.approved_at DESC, p.uuid DESC`


const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

const catalogPublication = (row) => {
  const { draft: _draft, ...rest } = publicationOf(row)
  const content = row.approved.content
  const portfolio = row.approved.portfolio
  const canonical = isObject(content) && Array.isArray(content.assets) && Array.isArray(content.blocks)
  const approved = canonical && isObject(portfolio) ? { ...row.approved, portfolio: { ...portfolio, assets: [], blocks: [] } } : row.approved
  return { ...rest, approved, ...(row.demo ? { demo: true } : {}) }
}

const profile = (row) => ({
  uuid: row.uuid,
  id: row.id,
  name: row.name,
  type: row.type,
  showContacts: row.show_contacts,
  ...(row.avatar_url === null ? {} : { avatarUrl: row.avatar_url }),
  about: row.about,
  categories: row.categories,
  contacts: row.show_contacts ? row.contacts : "",
  networks: row.networks,
  skills: row.skills,
  structuredContacts: row.show_contacts ? row.structured_contacts : []
})

const send = (res, status, value) => {
  const body = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

let peakRss = 0
let peakHeapUsed = 0
const sample = () => {
  const m = process.memoryUsage()
  peakRss = Math.max(peakRss, m.rss)
  peakHeapUsed = Math.max(peakHeapUsed, m.heapUsed)
  return m
}
setInterval(sample, 10).unref()

const server = http.createServer((req, res) => {
  const url = req.url ?? "/"
  const handle = async () => {
    if (url === "/api/v1/catalog") {
      const profiles = await pool.query(catalogProfiles)
      const publications = await pool.query(catalogPublications)
      const catalog = { schemaVersion: 1, profiles: profiles.rows.map(profile), publications: publications.rows.map(catalogPublication) }
      sample()
      return send(res, 200, catalog)
    }
    if (url === "/__ready") {
      await pool.query("SELECT 1")
      return send(res, 200, {})
    }
    if (url === "/__memory") {
      const m = sample()
      return send(res, 200, { rss: m.rss, heapUsed: m.heapUsed, peakRss, peakHeapUsed })
    }
    return send(res, 404, { error: { code: "not_found", message: "No such route" } })
  }
  handle().catch((error) => send(res, 500, { error: { code: "internal_error", message: String(error.message) } }))
})

server.listen(Number(port), host)
process.on("SIGTERM", () => {
  server.close(() => pool.end().then(() => process.exit(0)))
  server.closeAllConnections()
})
