import { inject } from "vitest"
import { admin, testDatabaseName, testPostgresUrl } from "./postgresServer.js"

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
 */
export const createTestDatabase = async (label: string, options: { readonly migrated?: boolean } = {}): Promise<TestDatabase> => {
  const name = testDatabaseName(label)
  const template = options.migrated === true ? inject("migratedDatabase") : undefined
  await admin((client) => client.query(`CREATE DATABASE "${name}"${template === undefined ? "" : ` TEMPLATE "${template}"`}`))
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
