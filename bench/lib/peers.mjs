// The host's peers in the host-overhead benchmarks (event-types, auth-session, get-publication):
// bare node:http, Fastify and Hono serving the same answers (bench/lib/headline-answers.mjs through
// bench/lib/peer-server.mjs), checked byte for byte against the host's, and measured in the same
// run as the host in an order that spreads the machine's drift over all four.

import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { mib, micros } from "./load.mjs"
import { freePort, get, startProcess } from "./processes.mjs"
import { assertSameAnswer } from "./responses.mjs"

export const peerNames = ["bare", "fastify", "hono"]
const displayNames = { bare: "bare", fastify: "Fastify", hono: "Hono", host: "host" }

/**
 * The order of the measured runs: each peer twice, mirrored around the host's one run, so that a
 * drift of the machine during the benchmark (steady, in either direction) moves each peer's mean as
 * much as the host's reading.
 */
export const runOrder = ["bare", "fastify", "hono", "host", "hono", "fastify", "bare"]

const entry = join(dirname(fileURLToPath(import.meta.url)), "peer-server.mjs")

/**
 * Starts bare, Fastify and Hono with one answer configuration (see makeAnswers in
 * bench/lib/headline-answers.mjs), each a process of its own on the servers' core, stopped when
 * the benchmark ends; `env` for what the configuration does not hold (the server secret);
 * `nodeOptions` in place of the runner's (`--cpu-prof` when it profiles); `only` for some of them
 * (the others are then absent: `measurePeers`, `reportPeers` and `assertPeersAnswerAsHost` need all).
 */
export const startPeers = async (ctx, config, { env = {}, nodeOptions = ctx.profileNodeOptions, only = peerNames } = {}) => {
  const configFile = join(ctx.workDir, `peers-${config.answer}-${await freePort()}.json`)
  writeFileSync(configFile, JSON.stringify(config))
  const peers = {}
  for (const name of only) {
    const port = await freePort()
    const handle = await startProcess({
      label: `${name}-${config.answer}`,
      entry,
      args: [name, String(port), "127.0.0.1", configFile],
      env,
      nodeOptions,
      port,
      readyPath: "/__ready",
      readyTimeoutMs: 15_000,
      workDir: ctx.workDir,
      core: ctx.serverCore
    })
    ctx.defer(async () => {
      const outcome = await handle.stop()
      if (outcome.forced) ctx.log(`  warning: ${handle.label} ignored SIGTERM and was killed`)
    })
    handle.profiled = nodeOptions.includes("--cpu-prof")
    peers[name] = handle
  }
  return peers
}

/** The id the answer checks send, so that host and peers echo the same `x-request-id`. */
export const checkRequestId = "bench-answer-check"

/**
 * Throws unless every peer answers `path` with the host's status, bytes and headers (`Date`
 * aside): `hostAnswer` is the host's answer to the same request, made with `headers` plus
 * `x-request-id: checkRequestId`.
 */
export const assertPeersAnswerAsHost = async (ctx, { what, path, hostAnswer, peers, headers = {}, quiet = false }) => {
  for (const name of peerNames) {
    const answer = await get(peers[name].url + path, { headers: { ...headers, "x-request-id": checkRequestId } })
    assertSameAnswer(what, hostAnswer, answer, quiet ? () => {} : ctx.log, { name: displayNames[name] })
  }
}

/**
 * Measures the host and its peers in `runOrder`; `target(server)` gives the `measure` arguments
 * of one server (url, headers, requests, databaseCpu). Returns every run in order and, per name,
 * the host's run and each peer's mean of its two.
 */
export const measurePeers = async (ctx, { host, peers, target }) => {
  const servers = { ...peers, host }
  const seen = {}
  const runs = []
  for (const name of runOrder) {
    seen[name] = (seen[name] ?? 0) + 1
    const label = name === "host" ? "host" : `${name} #${seen[name]}`
    runs.push({ name, row: await ctx.measure({ label, server: servers[name], ...target(servers[name]) }) })
  }
  const rowsOf = (name) => runs.filter((run) => run.name === name).map((run) => run.row)
  const means = { host: rowsOf("host")[0] }
  for (const name of peerNames) means[name] = ctx.meanRow(`${name} (mean)`, rowsOf(name))
  return { runs, rowsOf, means }
}

const times = (a, b) => (a === undefined || b === undefined || b === 0 ? "n/a" : `${(a / b).toFixed(2)}×`)

/**
 * Prints the runs and the means, the host against each peer (CPU per request, req/s, peak RSS) and
 * a note for each peer whose two runs differ by more than 10 % in CPU per request. Returns the
 * ratios host/peer per peer.
 */
export const reportPeers = (ctx, { runs, rowsOf, means }, { extraRows = [] } = {}) => {
  const { log } = ctx
  log("")
  ctx.printTable([...runs.map((run) => run.row), ...peerNames.map((name) => means[name]), means.host, ...extraRows])
  log("")
  const h = means.host
  log(
    `  server CPU per request: host ${micros(h.serverCpuPerRequest)}; ` +
      peerNames.map((name) => `${displayNames[name]} ${micros(means[name].serverCpuPerRequest)}`).join(", ")
  )
  log(`  peak RSS (MiB, warm-up and measured run): host ${mib(h.peakRss)}; ${peerNames.map((name) => `${displayNames[name]} ${mib(means[name].peakRss)}`).join(", ")}`)
  const ratios = {}
  for (const name of peerNames) {
    const p = means[name]
    ratios[name] = {
      cpuPerRequest: p.serverCpuPerRequest ? h.serverCpuPerRequest / p.serverCpuPerRequest : undefined,
      requestsPerSecond: h.requestsPerSecond / p.requestsPerSecond,
      peakRss: p.peakRss ? h.peakRss / p.peakRss : undefined
    }
    log(
      `  host/${displayNames[name]}: CPU per request ${times(h.serverCpuPerRequest, p.serverCpuPerRequest)}, ` +
        `req/s ${times(h.requestsPerSecond, p.requestsPerSecond)}, peak RSS ${times(h.peakRss, p.peakRss)}`
    )
  }
  for (const name of peerNames) {
    const [a, b] = rowsOf(name)
    const drift = Math.abs(a.serverCpuPerRequest - b.serverCpuPerRequest) / means[name].serverCpuPerRequest
    if (drift > 0.1) log(`  note: the two ${displayNames[name]} runs differ by ${(drift * 100).toFixed(0)}% in CPU per request: the machine is noisy, rerun`)
  }
  const fastify = ratios.fastify.cpuPerRequest
  if (fastify !== undefined) {
    log(`  host/Fastify CPU per request: ${fastify.toFixed(2)}× ${fastify <= 1 ? "AT OR BELOW FASTIFY" : "ABOVE FASTIFY"} (target ≤ 1.00)`)
  }
  if (h.non2xx > 0 || h.errors > 0) log(`  warning: the host had ${h.non2xx} non-2xx answers and ${h.errors} errors during the run`)
  for (const name of peerNames) {
    const bad = rowsOf(name).filter((row) => row.non2xx > 0 || row.errors > 0)
    for (const row of bad) log(`  warning: ${row.label} had ${row.non2xx} non-2xx answers and ${row.errors} errors during the run`)
  }
  return ratios
}

/** The result a peers benchmark returns (written with --json): every run, the means, the ratios. */
export const peersResult = ({ runs, means }, ratios) => ({
  runs: runs.map((run) => run.row),
  peers: Object.fromEntries(peerNames.map((name) => [name, means[name]])),
  host: means.host,
  hostOver: ratios
})
