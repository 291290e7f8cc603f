// A session-authenticated read: GET /api/v1/auth/session with a session cookie through the whole
// host against its peers, bare node:http, Fastify and Hono (bench/lib/peers.mjs), each doing the
// same work with node-postgres (the cookie's keyed hash under the same server secret, the same
// session/account/profile lookup prepared per connection, the same JSON bytes and headers:
// bench/lib/headline-answers.mjs). All on one Postgres database made for the run (on
// BENCH_POSTGRES_URL, default the local server), signed in for real: start, the code from the
// development mailbox table, verify. Order: bare, Fastify, Hono, host, Hono, Fastify, bare; each
// peer's row is the mean of its two. Headline: server CPU per request, bare/host, and host/Fastify
// (bench/README.md, "Host overhead" and "Peers"). GET /api/healthz through the host is measured
// last, for information only (the old comparison).
import { randomBytes } from "node:crypto"
import { benchDatabase, databaseBackends, signInOnHost } from "./lib/database.mjs"
import { micros } from "./lib/load.mjs"
import { assertPeersAnswerAsHost, checkRequestId, measurePeers, peerNames, peersResult, reportPeers, startPeers } from "./lib/peers.mjs"
import { get } from "./lib/processes.mjs"
import { replayableHeaders } from "./lib/responses.mjs"

export const name = "auth-session"
export const description = "GET /api/v1/auth/session (session cookie): host vs bare node:http, Fastify and Hono (+ pg) doing the same keyed-hash lookup"
export const pin = true

const TARGET = 0.6
const ORIGIN = "http://localhost:8080"
const PATH = "/api/v1/auth/session"

export const run = async (ctx) => {
  const { log, options } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)

  // One server secret for all, so that all compute the same keyed hash of the cookie.
  const secret = randomBytes(32).toString("base64url")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN, BIRZHA_SECRET: secret } })
  const { cookie, email } = await signInOnHost(host.url, database.url, ORIGIN)
  const cookieName = cookie.slice(0, cookie.indexOf("="))
  const headers = { cookie }
  const sample = await get(host.url + PATH, { headers: { ...headers, "x-request-id": checkRequestId } })
  if (sample.status !== 200) throw new Error(`session answered ${sample.status}: ${sample.body.toString("utf8").slice(0, 300)}`)
  log(`  signed in as ${email} (cookie ${cookieName})`)

  const peers = await startPeers(
    ctx,
    { answer: "session", path: PATH, databaseUrl: database.url, cookieName, headers: replayableHeaders(sample) },
    { env: { BENCH_SERVER_SECRET: secret } }
  )
  for (const peer of peerNames) {
    const check = await get(peers[peer].url + PATH, { headers })
    if (check.status !== 200) {
      throw new Error(
        `${peer} answered ${check.status} to the host's session cookie: does the host still take its server secret from BIRZHA_SECRET? ${check.body.toString("utf8").slice(0, 300)}`
      )
    }
  }
  await assertPeersAnswerAsHost(ctx, { what: `GET ${PATH}`, path: PATH, hostAnswer: sample, peers, headers })

  // Postgres CPU per request, for information: the lookup costs the database the same for all.
  const backends = await databaseBackends(database.url)
  let measured
  let healthz
  try {
    const databaseCpu = backends.cpuSeconds
    measured = await measurePeers(ctx, { host, peers, target: (server) => ({ url: server.url + PATH, headers, databaseCpu }) })
    healthz = await ctx.measure({ label: "host healthz", url: host.url + "/api/healthz", server: host, databaseCpu })
  } finally {
    await backends.end()
  }
  const ratios = reportPeers(ctx, measured, { extraRows: [healthz] })
  const { bare, host: h } = measured.means
  log(
    `  Postgres CPU per request (informational): host ${micros(h.databaseCpuPerRequest)}, ` +
      peerNames.map((peer) => `${peer} ${micros(measured.means[peer].databaseCpuPerRequest)}`).join(", ")
  )
  log(`  host healthz (informational, not in the ratio): ${micros(healthz.serverCpuPerRequest)} per request`)
  const cpuRatio = ctx.cpuVerdict({ host: h, baseline: bare, target: TARGET, baselineLabel: "bare" })
  return {
    path: PATH,
    responseBytes: sample.body.length,
    ...peersResult(measured, ratios),
    baseline: bare,
    healthz,
    ratio: cpuRatio,
    requestsPerSecondRatio: h.requestsPerSecond / bare.requestsPerSecond,
    target: TARGET,
    pass: cpuRatio !== undefined && cpuRatio >= TARGET
  }
}
