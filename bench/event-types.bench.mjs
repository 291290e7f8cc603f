// GET /api/v1/event-types through the whole host vs its peers, bare node:http, Fastify and Hono
// (bench/lib/peers.mjs), each answering the host's bytes with the host's headers (replayed from
// the host's answer; node adds Date and Connection on every side; `x-request-id` made per request
// as the host makes it). Same connections, same pipelining, loopback. Order: bare, Fastify, Hono,
// host, Hono, Fastify, bare; each peer's row is the mean of its two. Headline: server CPU per
// request, bare/host, and host/Fastify (bench/README.md, "Host overhead" and "Peers").
// The host runs on a Postgres database made for the run (as in production; the read does not touch
// it), so that no embedded database opens in the background of the measurement.

import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { benchDatabase } from "./lib/database.mjs"
import { assertPeersAnswerAsHost, checkRequestId, measurePeers, peersResult, reportPeers, startPeers } from "./lib/peers.mjs"
import { replayableHeaders } from "./lib/responses.mjs"

export const name = "event-types"
export const description = "GET /api/v1/event-types: whole host vs bare node:http, Fastify and Hono with the same bytes and headers"
export const pin = true

const PATH = "/api/v1/event-types"
const TARGET = 0.5

export const run = async (ctx) => {
  const { options, log } = ctx
  log(`  connections ${options.connections}, pipelining ${options.pipelining}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)

  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })

  // The exact bytes and headers the host answers with, fetched once.
  const sample = await ctx.get(host.url + PATH, { headers: { "x-request-id": checkRequestId } })
  if (sample.status !== 200) {
    throw new Error(`host answered ${sample.status} to GET ${PATH}: ${sample.body.toString("utf8").slice(0, 500)}`)
  }
  const contentType = sample.headers["content-type"]
  const parsed = JSON.parse(sample.body.toString("utf8"))
  const typeCount = Array.isArray(parsed.types) ? parsed.types.length : "?"
  log(`  host answers ${sample.body.length} bytes, content-type ${contentType}, ${typeCount} types`)

  const bodyFile = join(ctx.workDir, "event-types-body")
  writeFileSync(bodyFile, sample.body)
  const peers = await startPeers(ctx, { answer: "constant", path: PATH, bodyFile, headers: replayableHeaders(sample) })
  await assertPeersAnswerAsHost(ctx, { what: `GET ${PATH}`, path: PATH, hostAnswer: sample, peers })

  const measured = await measurePeers(ctx, { host, peers, target: (server) => ({ url: server.url + PATH }) })
  const ratios = reportPeers(ctx, measured)
  const { bare, host: h } = measured.means
  if (bare.loadgenCpu !== undefined && bare.loadgenCpu > 0.9) {
    log(
      `  note: the load generator used ${Math.round(bare.loadgenCpu * 100)}% of a core during the bare runs, so the` +
        ` bare server is client-bound and its req/s understates it; compare CPU per request.`
    )
  }
  const cpuRatio = ctx.cpuVerdict({ host: h, baseline: bare, target: TARGET, baselineLabel: "bare" })

  return {
    path: PATH,
    responseBytes: sample.body.length,
    contentType,
    ...peersResult(measured, ratios),
    baseline: bare,
    ratio: cpuRatio,
    requestsPerSecondRatio: h.requestsPerSecond / bare.requestsPerSecond,
    p99Ratio: h.latencyP99 / bare.latencyP99,
    target: TARGET,
    pass: cpuRatio !== undefined && cpuRatio >= TARGET
  }
}
