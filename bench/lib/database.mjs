// A Postgres database made for one benchmark (on BENCH_POSTGRES_URL, default the local server) and
// dropped when the benchmark ends, and a real sign-in on a host running on it.
import Pg from "pg"
import { childCpuSeconds } from "./processes.mjs"

export const adminUrl = () => process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

export const withClient = async (url, use) => {
  const client = new Pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/** A fresh database `birzha_bench_<label>…` for this run; returns its URL (logged as host/name). */
export const benchDatabase = async (ctx, label = "") => {
  const admin = adminUrl()
  const name = `birzha_bench_${label === "" ? "" : `${label}_`}${process.pid}_${Date.now()}`
  await withClient(admin, (client) => client.query(`CREATE DATABASE "${name}"`))
  // BENCH_KEEP_DATABASE=1 keeps it for a look afterwards (its name is logged).
  if (process.env.BENCH_KEEP_DATABASE !== "1") {
    ctx.defer(() => withClient(admin, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)))
  }
  const url = new URL(admin)
  url.pathname = `/${name}`
  return { url: url.toString(), label: `${url.host}${url.pathname}` }
}

/**
 * Signs in for real on `hostUrl` (start, the code from the development mailbox in `databaseUrl`,
 * verify) and returns the session cookie (`name=value`) and the address used.
 */
export const signInOnHost = async (hostUrl, databaseUrl, origin) => {
  const email = `bench.${Date.now()}@example.com`
  const post = (path, body) =>
    fetch(hostUrl + path, { method: "POST", headers: { "content-type": "application/json", origin }, body: JSON.stringify(body) })
  const started = await post("/api/v1/auth/email/start", { email })
  if (started.status !== 200) throw new Error(`start answered ${started.status}: ${await started.text()}`)
  const { challengeUuid } = await started.json()
  const { rows } = await withClient(databaseUrl, (client) =>
    client.query("SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1", [email]))
  const code = rows[0]?.text_body.match(/\b(\d{6})\b/)?.[1]
  if (!code) throw new Error("no sign-in code in the development mailbox")
  const verified = await post("/api/v1/auth/email/verify", { challengeUuid, code })
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}: ${await verified.text()}`)
  return { cookie: (verified.headers.get("set-cookie") ?? "").split(";")[0], email }
}

/**
 * CPU seconds used by the Postgres backends serving `databaseUrl`, for Postgres CPU per request
 * (from /proc, so only when the server runs on this machine; undefined otherwise). `cpuSeconds()`
 * is a running total that counts each backend from when it was first seen (or from zero when it
 * appeared later), so a backend that ends between two readings (an idle pool connection closing)
 * does not make the difference negative; what it used after the last reading is lost. `except`:
 * backend pids left out (a benchmark's own polling connection); it may be filled later.
 */
export const databaseBackends = async (databaseUrl, except = new Set()) => {
  const client = new Pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const last = new Map()
  let total = 0
  let first = true
  return {
    cpuSeconds: async () => {
      const { rows } = await client.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
      for (const { pid } of rows) {
        if (except.has(pid)) continue
        const seconds = childCpuSeconds(pid)
        if (seconds === undefined) return undefined
        // A backend seen for the first time on the first reading is a starting point; later, all of its CPU is new.
        const before = last.get(pid) ?? (first ? seconds : 0)
        total += seconds - before
        last.set(pid, seconds)
      }
      first = false
      return total
    },
    end: () => client.end()
  }
}
