// The cost of authentication: GET /api/v1/auth/session with a session cookie (cookie parse,
// keyed hash, one indexed join on Postgres, schema encode) vs GET /api/healthz through the same
// host in the same run. Order: healthz, session, healthz; the healthz row in the ratio is the mean.
// Runs the host on a Postgres server (BENCH_POSTGRES_URL, default the local one) in a database
// made for the run, because the sign-in code is read from the development mailbox table.
import Pg from "pg"
import { benchDatabase, signInOnHost } from "./lib/database.mjs"
import { childCpuSeconds } from "./lib/processes.mjs"

export const name = "auth-session"
export const description = "GET /api/v1/auth/session (session cookie) vs GET /api/healthz, same host"

const TARGET = 0.6
const ORIGIN = "http://localhost:8080"

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx)
  log(`  database: ${database.label}`)

  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const { cookie, email } = await signInOnHost(host.url, database.url, ORIGIN)
  const check = await fetch(host.url + "/api/v1/auth/session", { headers: { cookie } })
  if (check.status !== 200) throw new Error(`session answered ${check.status}`)
  log(`  signed in as ${email}; the session answer is ${(await check.text()).length} bytes`)

  // CPU per request of the host and of this database's Postgres backends: unlike req/s it does not
  // depend on what else the machine runs, and the session's cost is partly the database's.
  const backends = await databaseBackends(database.url)
  const measured = async (args) => {
    if (ctx.options.warmupSeconds > 0) {
      await ctx.measure({ ...args, label: `${args.label} warm-up`, durationSeconds: ctx.options.warmupSeconds, warmupSeconds: 0 })
    }
    const db0 = await backends.cpuSeconds()
    const row = await ctx.measure({ ...args, warmupSeconds: 0 })
    const db1 = await backends.cpuSeconds()
    const requests = row.requestsPerSecond * row.seconds
    return {
      ...row,
      hostCpuPerRequest: row.serverCpu === undefined ? undefined : (row.serverCpu * row.seconds) / requests,
      databaseCpuPerRequest: db0 === undefined || db1 === undefined ? undefined : (db1 - db0) / requests
    }
  }
  const rowsOut = []
  try {
    rowsOut.push(await measured({ label: "healthz #1", url: host.url + "/api/healthz", server: host }))
    rowsOut.push(await measured({ label: "session", url: host.url + "/api/v1/auth/session", server: host, headers: { cookie } }))
    rowsOut.push(await measured({ label: "healthz #2", url: host.url + "/api/healthz", server: host }))
  } finally {
    await backends.end()
  }
  const [h1, s, h2] = rowsOut
  const base = ctx.meanRow("healthz (mean)", [h1, h2])
  const ratio = s.requestsPerSecond / base.requestsPerSecond
  log("")
  ctx.printTable([h1, h2, base, s])
  log("")
  const us = (x) => (x === undefined ? "n/a" : `${Math.round(x * 1e6)} µs`)
  const hostBase = h1.hostCpuPerRequest === undefined || h2.hostCpuPerRequest === undefined ? undefined : (h1.hostCpuPerRequest + h2.hostCpuPerRequest) / 2
  log(`  CPU per request: healthz host ${us(hostBase)}; session host ${us(s.hostCpuPerRequest)} + Postgres ${us(s.databaseCpuPerRequest)}`)
  if (hostBase !== undefined && s.hostCpuPerRequest !== undefined && s.databaseCpuPerRequest !== undefined) {
    log(`  CPU ratio healthz/session (host + Postgres): ${(hostBase / (s.hostCpuPerRequest + s.databaseCpuPerRequest)).toFixed(2)}`)
  }
  const busy = [h1, s, h2].filter((r) => r.serverCpu !== undefined && r.serverCpu < 0.9)
  if (busy.length > 0) {
    log(`  note: the host used under 90 % of a core in ${busy.map((r) => r.label).join(", ")}: it was short of CPU (Postgres and anything else running share the cores), so treat req/s with care and compare the CPU per request`)
  }
  log(`  ratio session/healthz req/s: ${ratio.toFixed(2)}  ${ratio >= TARGET ? "PASS" : "BELOW TARGET"} (target ≥ ${TARGET})`)
  return { ratio, target: TARGET, rows: [h1, h2, base, s] }
}

/**
 * CPU seconds used so far by the Postgres backends serving `databaseUrl` (from /proc, so only when
 * the server runs on this machine; undefined otherwise). Backends that ended in between are lost,
 * which the host's pool (idle timeout 30 s) does not do during a run.
 */
const databaseBackends = async (databaseUrl) => {
  const client = new Pg.Client({ connectionString: databaseUrl })
  await client.connect()
  return {
    cpuSeconds: async () => {
      const { rows } = await client.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
      let total = 0
      for (const { pid } of rows) {
        const seconds = childCpuSeconds(pid)
        if (seconds === undefined) return undefined
        total += seconds
      }
      return total
    },
    end: () => client.end()
  }
}
