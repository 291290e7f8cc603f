import { randomBytes } from "node:crypto"
import Pg from "pg"

// The test server's administration, without vitest (testing/globalSetup.ts runs outside a test).

/**
 * The Postgres server tests run against. CI sets `BIRZHA_TEST_POSTGRES_URL` to a database made
 * for the run; each test file creates its own database beside it and drops it afterwards.
 */
export const testPostgresUrl = process.env["BIRZHA_TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** Runs `run` on a connection to the test server's own database, closed afterwards. */
export const admin = async <A>(run: (client: Pg.Client) => Promise<A>): Promise<A> => {
  const client = new Pg.Client({ connectionString: testPostgresUrl })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** A database name on the test server for `label`, unique to this call. */
export const testDatabaseName = (label: string): string => {
  const base = new URL(testPostgresUrl).pathname.slice(1) || "postgres"
  return `${base}_${label}_${randomBytes(4).toString("hex")}`.toLowerCase().replace(/[^a-z0-9_]/g, "_").slice(-63)
}

