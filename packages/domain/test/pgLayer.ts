import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { PatientPool } from "../../infrastructure/src/database/PatientPool.js"

/**
 * A test's own `@effect/sql-pg` client of the test server, on the service's pool class: a
 * connection the server refuses because every slot is taken (two copies of the suite, each with
 * its workers and hosts, on one server) is asked for again for up to `slotWaitMillis`, as the
 * service's own pool does (`PatientPool.ts`), instead of failing the test. Without a
 * `connectionTimeoutMillis`, a statement waits for one of the pool's busy connections as long as
 * it takes, as with `PgClient.layer`.
 */
export const testPgLayer = (url: string, maxConnections = 10) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() => new PatientPool({ connectionString: url, max: maxConnections, slotWaitMillis: 60_000 })),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1_000))
    )
  })
