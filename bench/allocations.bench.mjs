// What a session-authenticated read allocates: GET /api/v1/auth/session (as bench/auth-session.bench.mjs)
// through the host and through Fastify doing the same work, each process under V8's sampling heap
// profiler (bench/lib/allocation-sampler.cjs, counting objects already collected too) for the
// measured run only. Prints bytes allocated per request for both, their ratio, and where the host's
// go (by package and by function, through the bundles' source maps). Allocation drives the young
// generation's collections and so the host's CPU and its memory under load (bench/README.md,
// "allocations").
import { existsSync, readFileSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { join, resolve } from "node:path"
import autocannon from "autocannon"
import { benchDatabase, signInOnHost } from "./lib/database.mjs"
import { allocationsByFrame } from "./lib/allocation-summary.mjs"
import { checkRequestId, startPeers } from "./lib/peers.mjs"
import { get, repoRoot } from "./lib/processes.mjs"
import { assertSameAnswer, replayableHeaders } from "./lib/responses.mjs"

export const name = "allocations"
export const description = "bytes allocated per GET /api/v1/auth/session request: host against Fastify (sampling heap profiler), and where the host's go"
export const pin = true

const ORIGIN = "http://localhost:8080"
const PATH = "/api/v1/auth/session"
const sampler = resolve(repoRoot, "bench/lib/allocation-sampler.cjs")

const sleep = (ms) => new Promise((done) => setTimeout(done, ms))

/** The sampler's marker `<file><suffix>` (bench/lib/allocation-sampler.cjs), once it is there; throws unless it says `expected`. */
const marker = async (label, file, suffix, expected) => {
  for (let waited = 0; !existsSync(`${file}${suffix}`); waited += 20) {
    if (waited > 30_000) throw new Error(`${label}: no ${file}${suffix} after 30 s`)
    await sleep(20)
  }
  const text = readFileSync(`${file}${suffix}`, "utf8")
  if (text !== expected) throw new Error(`${label}: the sampler failed: ${text}`)
}

/** Warm-up, then the measured run between the sampler's two signals; the profile and the requests answered. */
const sampled = async (ctx, label, handle, file, headers) => {
  const { options, log } = ctx
  const load = (duration) => autocannon({ url: handle.url + PATH, connections: options.connections, pipelining: options.pipelining, duration, headers })
  log(`  ${label}: warm-up ${options.warmupSeconds} s`)
  await load(options.warmupSeconds)
  process.kill(handle.pid, "SIGUSR2")
  await marker(label, file, ".started", "started")
  log(`  ${label}: measuring ${options.durationSeconds} s`)
  const result = await load(options.durationSeconds)
  process.kill(handle.pid, "SIGUSR2")
  await marker(label, file, ".done", "written")
  if (result["2xx"] === 0 || result.non2xx > 0) throw new Error(`${label}: ${result["2xx"]} × 2xx, ${result.non2xx} other answers`)
  return { profile: JSON.parse(readFileSync(file, "utf8")), requests: result["2xx"] }
}

const kb = (bytes) => (bytes / 1024).toFixed(1)

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx)
  const secret = randomBytes(32).toString("base64url")
  const hostFile = join(ctx.workDir, "host.heapprofile")
  const host = await ctx.startHost({
    env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN, BIRZHA_SECRET: secret, BENCH_ALLOCATION_PROFILE: hostFile },
    nodeOptions: ["-r", sampler]
  })
  const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)
  const headers = { cookie }
  const sample = await get(host.url + PATH, { headers: { ...headers, "x-request-id": checkRequestId } })
  if (sample.status !== 200) throw new Error(`session answered ${sample.status}`)
  const fastifyFile = join(ctx.workDir, "fastify.heapprofile")
  const peers = await startPeers(
    ctx,
    { answer: "session", path: PATH, databaseUrl: database.url, cookieName: cookie.slice(0, cookie.indexOf("=")), headers: replayableHeaders(sample) },
    { env: { BENCH_SERVER_SECRET: secret, BENCH_ALLOCATION_PROFILE: fastifyFile }, nodeOptions: ["-r", sampler], only: ["fastify"] }
  )
  // The same work: Fastify answers the host's cookie with the host's bytes and headers.
  assertSameAnswer("session", sample, await get(peers.fastify.url + PATH, { headers: { ...headers, "x-request-id": checkRequestId } }), log, { name: "Fastify" })

  const hostRun = await sampled(ctx, "host", host, hostFile, headers)
  const fastifyRun = await sampled(ctx, "Fastify", peers.fastify, fastifyFile, headers)
  const hostBytes = allocationsByFrame(hostRun.profile, repoRoot)
  const fastifyBytes = allocationsByFrame(fastifyRun.profile, repoRoot)
  const hostPerRequest = hostBytes.total / hostRun.requests
  const fastifyPerRequest = fastifyBytes.total / fastifyRun.requests

  log("")
  log(`  allocated per request: host ${kb(hostPerRequest)} KiB (${hostRun.requests} requests), Fastify ${kb(fastifyPerRequest)} KiB (${fastifyRun.requests})`)
  log(`  host/Fastify bytes allocated per request: ${(hostPerRequest / fastifyPerRequest).toFixed(2)}×`)
  log("")
  log("  the host's by package (bytes per request, share):")
  for (const [what, bytes] of hostBytes.byPackage.slice(0, 12)) log(`    ${String(Math.round(bytes / hostRun.requests)).padStart(7)}  ${(100 * bytes / hostBytes.total).toFixed(1).padStart(5)} %  ${what}`)
  log("  the host's by function:")
  for (const [what, bytes] of hostBytes.byFunction.slice(0, 25)) log(`    ${String(Math.round(bytes / hostRun.requests)).padStart(7)}  ${(100 * bytes / hostBytes.total).toFixed(1).padStart(5)} %  ${what}`)
  return {
    host: { bytesPerRequest: hostPerRequest, requests: hostRun.requests },
    fastify: { bytesPerRequest: fastifyPerRequest, requests: fastifyRun.requests },
    hostOverFastify: hostPerRequest / fastifyPerRequest
  }
}
