// getPublication throughput: GET /api/v1/publications/{uuid} through the whole host (Postgres, 10k
// demo publications, a random uuid of the set per request) against its peers, bare node:http,
// Fastify and Hono with node-postgres (bench/lib/peers.mjs), doing the same primary-key read: the
// same SQL prepared per connection as the host prepares it, the same bytes and headers
// (bench/lib/headline-answers.mjs). Order: bare, Fastify, Hono, host, Hono, Fastify, bare; each
// peer's row is the mean of its two. Headline: server CPU per request, bare/host, and host/Fastify
// (bench/README.md, "Host overhead" and "Peers").
import { databaseBackends } from "./lib/database.mjs"
import { demoDatabase } from "./lib/demo-database.mjs"
import { micros } from "./lib/load.mjs"
import { assertPeersAnswerAsHost, checkRequestId, measurePeers, peerNames, peersResult, reportPeers, startPeers } from "./lib/peers.mjs"
import { get } from "./lib/processes.mjs"
import { headerNames, replayableHeaders } from "./lib/responses.mjs"

export const name = "get-publication"
export const description = "GET /api/v1/publications/{uuid} at 10k publications: host vs bare node:http, Fastify and Hono (+ pg), same prepared SQL"
export const pin = true

const PUBLICATIONS = 10_000
const TARGET = 0.7
const CHECKED = 20

/** An autocannon request list whose every request reads a random uuid of `uuids`. */
const randomPublications = (uuids) => [
  { method: "GET", setupRequest: (req) => ({ ...req, path: `/api/v1/publications/${uuids[Math.floor(Math.random() * uuids.length)]}` }) }
]

export const run = async (ctx) => {
  const { log, options } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)
  const database = await demoDatabase(ctx, { publications: PUBLICATIONS })
  const { rows } = await database.query("SELECT uuid::text AS uuid FROM publications WHERE demo")
  const uuids = rows.map((row) => row.uuid)

  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })
  const answerOf = (uuid) => get(`${host.url}/api/v1/publications/${uuid}`, { headers: { "x-request-id": checkRequestId } })
  const first = await answerOf(uuids[0])
  if (first.status !== 200) throw new Error(`host answered ${first.status} to GET ${uuids[0]}: ${first.body.toString("utf8").slice(0, 300)}`)
  const peers = await startPeers(ctx, { answer: "publication", path: "/api/v1/publications/:uuid", databaseUrl: database.url, headers: replayableHeaders(first) })

  // The same bytes and headers from all, for a few uuids.
  let bytes = 0
  for (const uuid of uuids.slice(0, CHECKED)) {
    const path = `/api/v1/publications/${uuid}`
    const hostAnswer = await answerOf(uuid)
    if (hostAnswer.status !== 200) throw new Error(`host answered ${hostAnswer.status} to GET ${path}: ${hostAnswer.body.toString("utf8").slice(0, 300)}`)
    await assertPeersAnswerAsHost(ctx, { what: `GET ${path}`, path, hostAnswer, peers, quiet: true })
    bytes += hostAnswer.body.length
  }
  log(`  ${uuids.length} uuids; host, bare, Fastify and Hono answer the same bytes and headers for ${CHECKED} of them (mean ${Math.round(bytes / CHECKED)} bytes; ${headerNames(first)})`)

  const requests = randomPublications(uuids)
  const backends = await databaseBackends(database.url)
  let measured
  try {
    const databaseCpu = backends.cpuSeconds
    measured = await measurePeers(ctx, { host, peers, target: (server) => ({ url: server.url, requests, databaseCpu }) })
  } finally {
    await backends.end()
  }
  const ratios = reportPeers(ctx, measured)
  const { bare, host: h } = measured.means
  log(
    `  Postgres CPU per request (informational): host ${micros(h.databaseCpuPerRequest)}, ` +
      peerNames.map((peer) => `${peer} ${micros(measured.means[peer].databaseCpuPerRequest)}`).join(", ")
  )
  const cpuRatio = ctx.cpuVerdict({ host: h, baseline: bare, target: TARGET, baselineLabel: "bare" })
  return {
    publications: uuids.length,
    seedSeconds: database.seedSeconds,
    ...peersResult(measured, ratios),
    baseline: bare,
    ratio: cpuRatio,
    requestsPerSecondRatio: h.requestsPerSecond / bare.requestsPerSecond,
    target: TARGET,
    pass: cpuRatio !== undefined && cpuRatio >= TARGET
  }
}
