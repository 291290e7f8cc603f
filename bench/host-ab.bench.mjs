// Two variants of the host on one path, alternated in one run: another build (BENCH_AB_ENTRY_B, a
// copy of packages/cli/dist elsewhere in the repository) or other node flags (BENCH_AB_FLAGS_B). On
// a noisy machine the same server's CPU per request differs by up to half between two runs a minute
// apart, so a change measured by two separate runs of `auth-session` reads as the machine's drift.
// Here both hosts run at once on one Postgres database (one server secret, one session), idle while
// the other is measured, in the order A B B A A B B A …: a steady drift moves both alike, and each
// round's B/A is read from two runs seconds apart. Headline: the median of the rounds' B/A of server
// CPU per request. With nothing set, A and B are the same host: the machine's own spread.
//
// Environment:
//   BENCH_AB_PATH      the path measured (default /api/v1/auth/session; sent with the session cookie)
//   BENCH_AB_ROUNDS    rounds of two runs (default 4)
//   BENCH_AB_ENTRY_A, BENCH_AB_ENTRY_B   host entry scripts (default packages/cli/dist/bin.js)
//   BENCH_AB_FLAGS_A, BENCH_AB_FLAGS_B   node flags added after the entry's own (default none)
import { randomBytes } from "node:crypto"
import { benchDatabase, signInOnHost } from "./lib/database.mjs"
import { micros } from "./lib/load.mjs"
import { get } from "./lib/processes.mjs"

export const name = "host-ab"
export const description = "two builds or node flags of the host on one path, alternated A B B A: the median round's B/A of CPU per request"
export const pin = true

const ORIGIN = "http://localhost:8080"

const flagsOf = (text) => (text ?? "").split(/\s+/).filter((flag) => flag !== "")

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export const run = async (ctx) => {
  const { log, options } = ctx
  const path = process.env.BENCH_AB_PATH ?? "/api/v1/auth/session"
  const rounds = Number(process.env.BENCH_AB_ROUNDS ?? 4)
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_AB_ROUNDS must be a whole number of at least 1, not ${process.env.BENCH_AB_ROUNDS}`)
  const variants = ["A", "B"].map((label) => ({
    label,
    entry: process.env[`BENCH_AB_ENTRY_${label}`],
    flags: flagsOf(process.env[`BENCH_AB_FLAGS_${label}`])
  }))
  log(`  ${path}, ${rounds} rounds; connections ${options.connections}, warm-up ${options.warmupSeconds} s, measured ${options.durationSeconds} s per run`)
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)
  const secret = randomBytes(32).toString("base64url")
  const env = { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN, BIRZHA_SECRET: secret }
  // One after the other: the second host finds the migrations applied.
  const hosts = []
  for (const variant of variants) {
    log(`  ${variant.label}: ${variant.entry ?? "packages/cli/dist/bin.js"}${variant.flags.length > 0 ? ` with ${variant.flags.join(" ")}` : ""}`)
    hosts.push(await ctx.startHost({ env, nodeOptions: variant.flags, ...(variant.entry === undefined ? {} : { entry: variant.entry }) }))
  }
  const { cookie } = await signInOnHost(hosts[0].url, database.url, ORIGIN)
  const headers = { cookie }
  // Both answer the same: the same status and body (what differs is how the host gets there).
  const answers = await Promise.all(hosts.map((host) => get(host.url + path, { headers })))
  for (const [i, answer] of answers.entries()) {
    if (answer.status !== 200) throw new Error(`${variants[i].label} answered ${answer.status} to GET ${path}: ${answer.body.toString("utf8").slice(0, 300)}`)
  }
  if (!answers[0].body.equals(answers[1].body)) throw new Error(`A and B answer GET ${path} with different bodies`)

  const rows = []
  const ratios = []
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? [0, 1] : [1, 0]
    const cpu = []
    for (const i of order) {
      const row = await ctx.measure({ label: `${variants[i].label} #${round}`, server: hosts[i], url: hosts[i].url + path, headers })
      rows.push(row)
      cpu[i] = row.serverCpuPerRequest
    }
    ratios.push(cpu[1] / cpu[0])
  }
  log("")
  ctx.printTable(rows)
  const perVariant = variants.map((variant) => median(rows.filter((row) => row.label.startsWith(`${variant.label} #`)).map((row) => row.serverCpuPerRequest)))
  const headline = median(ratios)
  log("")
  log(`  server CPU per request, medians: A ${micros(perVariant[0])}, B ${micros(perVariant[1])}`)
  log(`  B/A by round: ${ratios.map((ratio) => `${ratio.toFixed(2)}×`).join(", ")}; median ${headline.toFixed(2)}× (informational: no target)`)
  return {
    path,
    rounds,
    variants: variants.map((variant, i) => ({ ...variant, medianCpuPerRequest: perVariant[i] })),
    rows,
    ratios,
    ratio: headline
  }
}
