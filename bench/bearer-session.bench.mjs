// The cost of a bearer key against a session cookie: the same authenticated read
// (GET /api/v1/commands/profiles.get_own, scope profiles:read) through the same host in the same
// run, once with the session cookie and once with `Authorization: Bearer <key>`. Both verify a
// credential by its keyed hash with one indexed join; the key also checks its checksum before the
// lookup and the operation's scope from the catalog. Three alternating rounds; each side's row in
// the ratio is the mean of its runs. Runs on a Postgres server (BENCH_POSTGRES_URL, default the local
// one) in a database made for the run, because the sign-in code is read from the mailbox table.
import { benchDatabase, signInOnHost } from "./lib/database.mjs"

export const name = "bearer-session"
export const description = "profiles.get_own with a bearer key vs the same read with a session cookie, same host"
export const pin = true

const TARGET = 0.9
const ORIGIN = "http://localhost:8080"
const READ = "/api/v1/commands/profiles.get_own"

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)

  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const post = (path, body, headers = {}) =>
    fetch(host.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
      body: JSON.stringify(body)
    })
  const { cookie, email } = await signInOnHost(host.url, database.url, ORIGIN)

  // A key with exactly the read's scope, made the way the settings page makes one.
  const created = await post(
    "/api/v1/keys",
    { requestUuid: crypto.randomUUID(), name: "bench", scopes: ["profiles:read"], httpEnabled: true, mcpEnabled: false },
    { cookie }
  )
  if (created.status !== 200) throw new Error(`keys.create answered ${created.status}: ${await created.text()}`)
  const { secret } = await created.json()
  const bearer = { authorization: `Bearer ${secret}` }

  const bySession = await fetch(host.url + READ, { headers: { cookie } })
  const byKey = await fetch(host.url + READ, { headers: bearer })
  if (bySession.status !== 200 || byKey.status !== 200) throw new Error(`the read answered ${bySession.status} (session) and ${byKey.status} (key)`)
  const [a, b] = [await bySession.text(), await byKey.text()]
  if (a !== b) throw new Error("the session and the key read different answers")
  log(`  signed in as ${email}; both credentials read the same ${a.length} bytes`)

  // Three rounds, alternating which credential goes first (S B, B S, S B), so drift of a shared
  // machine falls on both sides alike; each side's row is the mean of its three runs.
  const warmupSeconds = Math.min(ctx.options.warmupSeconds, 1)
  const durationSeconds = Math.max(2, ctx.options.durationSeconds / 2)
  const sessions = []
  const bearers = []
  const run = async (which, round) => {
    const row = await ctx.measure({
      label: `${which} #${round}`,
      url: host.url + READ,
      server: host,
      headers: which === "session" ? { cookie } : bearer,
      warmupSeconds,
      durationSeconds
    })
    ;(which === "session" ? sessions : bearers).push(row)
  }
  for (const [round, order] of [[1, ["session", "bearer"]], [2, ["bearer", "session"]], [3, ["session", "bearer"]]]) {
    for (const which of order) await run(which, round)
  }
  const base = ctx.meanRow("session (mean)", sessions)
  const keyed = ctx.meanRow("bearer (mean)", bearers)
  const ratio = keyed.requestsPerSecond / base.requestsPerSecond
  const cpuPerRequest = (row) => (row.serverCpu === undefined ? NaN : (row.serverCpu / row.requestsPerSecond) * 1e6)
  log("")
  ctx.printTable([...sessions, ...bearers, base, keyed])
  log("")
  log(`  per round bearer/session req/s: ${sessions.map((s, i) => (bearers[i].requestsPerSecond / s.requestsPerSecond).toFixed(2)).join(", ")}`)
  log(`  host CPU per request: session ${cpuPerRequest(base).toFixed(0)} µs, bearer ${cpuPerRequest(keyed).toFixed(0)} µs`)
  log(`  ratio bearer/session req/s: ${ratio.toFixed(2)}  ${ratio >= TARGET ? "PASS" : "BELOW TARGET"} (target ≥ ${TARGET})`)
  return { ratio, target: TARGET, rows: [...sessions, ...bearers, base, keyed] }
}
