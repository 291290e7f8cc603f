import { randomBytes } from "node:crypto"
import Pg from "pg"

// The test server's administration, without vitest (testing/globalSetup.ts runs outside a test).

/**
 * The Postgres server tests run against. CI sets `BIRZHA_TEST_POSTGRES_URL` to a database made
 * for the run; each test file creates its own database beside it and drops it afterwards.
 */
export const testPostgresUrl = process.env["BIRZHA_TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/**
 * A connection to the test server's own database. A server whose every slot is taken (two copies
 * of the suite on one server) refuses it with 53300 `too_many_connections`: asked again for up to
 * a minute, as the service's pool does (packages/infrastructure/src/database/PatientPool.ts).
 */
const connected = async (): Promise<Pg.Client> => {
  const until = Date.now() + 60_000
  for (let delay = 20; ; delay = Math.min(500, delay * 2)) {
    const client = new Pg.Client({ connectionString: testPostgresUrl })
    try {
      await client.connect()
      return client
    } catch (error) {
      if ((error as { readonly code?: string }).code !== "53300" || Date.now() > until) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, delay / 2 + Math.random() * delay))
  }
}

/** Runs `run` on a connection to the test server's own database, closed afterwards. */
export const admin = async <A>(run: (client: Pg.Client) => Promise<A>): Promise<A> => {
  const client = await connected()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** A token for one run of the suite, which the names of its databases end with. */
export const newRunToken = (): string => `r${randomBytes(3).toString("hex")}`

/** A database name on the test server for `label`, unique to this call, ending with `_<run token><8 hex>`. */
export const testDatabaseName = (label: string, runToken: string): string => {
  const base = new URL(testPostgresUrl).pathname.slice(1) || "postgres"
  return `${base}_${label}`.toLowerCase().replace(/[^a-z0-9_]/g, "_").slice(-(63 - runToken.length - 9)) + `_${runToken}${randomBytes(4).toString("hex")}`
}

const runLock = (runToken: string) => `birzha test run ${runToken}`

/**
 * Drops every database whose name ends with `_<run token><8 hex>` for `runToken` (connections ended
 * first), from up to 12 connections at once: a drop waits mostly on its files and the checkpoint
 * it forces, which drops at once share (24 copies of a 13 MB database: 115 ms each one after the
 * other, 64 ms each from 12 connections, on an idle 2-core machine).
 */
const dropDatabasesOf = async (client: Pg.Client, runToken: string): Promise<void> => {
  const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname ~ $1", [`_${runToken}[0-9a-f]{8}$`])
  const names = rows.map((row) => row.datname)
  const dropAll = async (connection: Pg.Client) => {
    for (let name = names.pop(); name !== undefined; name = names.pop()) await connection.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  }
  const others = Math.min(11, names.length - 1)
  await Promise.all([dropAll(client), ...Array.from({ length: others }, () => admin(dropAll))])
}

/**
 * Marks the run `runToken` as alive for as long as the returned connection is open (an advisory
 * lock on it), after dropping the databases of earlier runs that ended without dropping theirs
 * (killed, say): those whose lock nobody holds. Closing the run drops its own databases, when the
 * checkpoint each drop forces has nothing else to wait for.
 */
export const holdTestRun = async (runToken: string): Promise<{ readonly close: () => Promise<void> }> => {
  // Advisory locks belong to a database: every run takes its lock in the server's `postgres`
  // database, whatever database the run is named after, so that runs of other names see it too.
  const url = new URL(testPostgresUrl)
  url.pathname = "/postgres"
  const client = new Pg.Client({ connectionString: url.toString() })
  await client.connect()
  await client.query("SELECT pg_advisory_lock(hashtext($1))", [runLock(runToken)])
  const { rows } = await client.query<{ token: string }>(
    "SELECT DISTINCT substring(datname from '_(r[0-9a-f]{6})[0-9a-f]{8}$') AS token FROM pg_database WHERE datname ~ '_r[0-9a-f]{6}[0-9a-f]{8}$'"
  )
  for (const { token } of rows) {
    if (token === runToken) continue
    const { rows: [free] } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS locked", [runLock(token)])
    if (free?.locked !== true) continue
    await dropDatabasesOf(client, token)
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [runLock(token)])
  }
  return {
    close: async () => {
      try {
        await dropDatabasesOf(client, runToken)
      } finally {
        await client.end()
      }
    }
  }
}
