import { randomBytes } from "node:crypto"
import Pg from "pg"

/**
 * The Postgres server tests run against. CI sets `BIRZHA_TEST_POSTGRES_URL` to a database made
 * for the run; each test file creates its own database beside it and drops it afterwards.
 */
export const testPostgresUrl = process.env["BIRZHA_TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

export interface TestDatabase {
  readonly url: string
  readonly name: string
  readonly drop: () => Promise<void>
}

const admin = async <A>(run: (client: Pg.Client) => Promise<A>): Promise<A> => {
  const client = new Pg.Client({ connectionString: testPostgresUrl })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** A fresh, empty database on the test server, named after the run and the test file. */
export const createTestDatabase = async (label: string): Promise<TestDatabase> => {
  const base = new URL(testPostgresUrl).pathname.slice(1) || "postgres"
  const name = `${base}_${label}_${randomBytes(4).toString("hex")}`.toLowerCase().replace(/[^a-z0-9_]/g, "_").slice(-63)
  await admin((client) => client.query(`CREATE DATABASE "${name}"`))
  const url = new URL(testPostgresUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: () =>
      admin(async (client) => {
        // A pool's end() resolves before its connections have closed: give them a moment, so that
        // FORCE does not terminate one mid-close (an unhandled 'error' on a client nobody listens to).
        for (let wait = 0; wait < 10; wait++) {
          const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name])
          if (rows[0]?.n === 0) break
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      })
  }
}
