import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
// The service's pool class, from the infrastructure package's sources (it imports only `pg`,
// which resolves from that package's folder): this package's tests run on what the service runs on.
import { PatientPool } from "../../infrastructure/src/database/PatientPool.js"

/**
 * A test's own `@effect/sql-pg` client of the test server, on the service's pool class: a
 * connection the server refuses because every slot is taken (two copies of the suite, each with
 * its workers and hosts, on one server) is asked for again for up to a minute, as the service's
 * own pool does for its connection timeout (`PatientPool.ts`), instead of failing the test.
 * Without a `connectionTimeoutMillis`, a statement waits for one of the pool's busy connections
 * as long as it takes, as with `PgClient.layer`.
 */
export const testPgLayer = (url: string, maxConnections = 10) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new PatientPool({ connectionString: url, max: maxConnections, slotWaitMillis: 60_000 })
        // An idle connection ended by the server (a database dropped at the end of a file) must not crash the worker.
        pool.on("error", () => {})
        return pool
      }),
      // A release is uninterruptible: without `interruptible` the timeout could not cut a pool whose client is never given back.
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1_000))
    )
  })
