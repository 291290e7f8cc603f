import { inject } from "vitest"
import { admin, testDatabaseName, testPostgresUrl } from "./postgresServer.js"
import "./provided.js"

export { testPostgresUrl }

export interface TestDatabase {
  readonly url: string
  readonly name: string
  readonly drop: () => Promise<void>
}

/**
 * A fresh database on the test server, named after the run and the test file: empty, or, with
 * `migrated`, a copy of the run's migrated database (testing/globalSetup.ts; every migration
 * applied once per run, not once per file: a copy is a file copy in Postgres). Code that applies
 * migrations at start finds none pending, as on a server that has run before.
 *
 * Commits do not wait for the disk (`synchronous_commit = off`: a test database outlives no server
 * crash). `drop` ends the database's connections and leaves the database itself to the end of the
 * run (testing/globalSetup.ts drops every database of the run): on Postgres 15 each DROP DATABASE
 * forces an immediate checkpoint, which writes out every database's changes at once and stalls the
 * commits of the files running beside it (a run of 148 files spent over a minute in them).
 */
export const createTestDatabase = async (label: string, options: { readonly migrated?: boolean } = {}): Promise<TestDatabase> => {
  const name = testDatabaseName(label, inject("testRunToken"))
  const template = options.migrated === true ? inject("migratedDatabase") : undefined
  await admin(async (client) => {
    await client.query(`CREATE DATABASE "${name}"${template === undefined ? "" : ` TEMPLATE "${template}"`}`)
    await client.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`)
  })
  const url = new URL(testPostgresUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: () =>
      admin(async (client) => {
        // A pool's end() resolves before its connections have closed: give them a moment, so that
        // ending them does not cut one mid-close (an unhandled 'error' on a client nobody listens to).
        for (let wait = 0; wait < 10; wait++) {
          const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name])
          if (rows[0]?.n === 0) return
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name])
      })
  }
}
