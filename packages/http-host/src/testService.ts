import Pg from "pg"
import { freePort } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import type { ConnectionLimits } from "./ConnectionLimits.js"
import { type RunningHost, startService, untilReady } from "./testing.js"

// Test-only (not exported by the package, unlike testing.ts): it needs pg and the repository's test database helpers.
export interface TestService {
  readonly database: TestDatabase
  readonly host: RunningHost
  /** A connection to the service's database, for looking behind the API. */
  readonly db: Pg.Client
  /** `http://localhost:<port>`: the service's public origin (Origin header, links in mails and pages). */
  readonly origin: string
  readonly close: () => Promise<void>
}

/**
 * A test file's service: its own database, the service on a free port whose public origin is
 * `http://localhost:<port>` unless given (so a browser on that origin satisfies the Origin rule),
 * ready, and a database connection.
 */
export const startTestService = async (
  name: string,
  options: {
    readonly env?: Record<string, string>
    readonly trustProxy?: boolean
    readonly publicOrigin?: string
    readonly connections?: ConnectionLimits
  } = {}
): Promise<TestService> => {
  const database = await createTestDatabase(name)
  const port = await freePort()
  const origin = options.publicOrigin ?? `http://localhost:${port}`
  const host = await startService({
    env: { DATABASE_URL: database.url, ...options.env },
    port,
    publicOrigin: origin,
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(options.connections === undefined ? {} : { connections: options.connections })
  })
  await untilReady(host)
  const db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  return {
    database,
    host,
    db,
    origin,
    close: async () => {
      await db.end()
      await host.close()
      await database.drop()
    }
  }
}
