import { SqlClient } from "@effect/sql"
import { ConfigProvider, Duration, Effect, Layer, Queue, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { embeddedDataDir } from "../../../../testing/pglite.js"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { Database, DatabaseLive } from "./Database.js"
import { makePgliteClient } from "./PgliteClient.js"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase("database_settings")
})
afterAll(async () => {
  await database?.drop()
})

/** `SHOW jit` on a connection of the service's pool. */
const jitSetting = (pgOptions: string | undefined) => {
  const before = process.env.PGOPTIONS
  if (pgOptions === undefined) delete process.env.PGOPTIONS
  else process.env.PGOPTIONS = pgOptions
  return Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ jit: string }>`SHOW jit`).pipe(
      Effect.map((rows) => rows[0]?.jit),
      Effect.provide(DatabaseLive.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", database.url]])))))),
      Effect.scoped
    )
  ).finally(() => {
    if (before === undefined) delete process.env.PGOPTIONS
    else process.env.PGOPTIONS = before
  })
}

describe("the service's Postgres connections", () => {
  it("run without JIT (a one-row read estimated at thousands of rows would compile for tens of ms); PGOPTIONS can turn it back on", async () => {
    expect(await jitSetting(undefined)).toBe("off")
    expect(await jitSetting("-c jit=on")).toBe("on")
  })
})

/**
 * Listens on a channel through `Database.listen`, waits until the subscription is live (pings
 * until one arrives), then notifies in a rolled-back and in a committed transaction; answers the
 * first payload after the pings.
 */
const firstAfterRollback = (settings: ReadonlyArray<readonly [string, string]>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const database = yield* Database
      const sql = yield* SqlClient.SqlClient
      const received = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(Stream.runForEach(database.listen("birzha_test"), (payload) => Queue.offer(received, payload)))
      const ping = sql`SELECT pg_notify('birzha_test', 'ping')`.pipe(Effect.zipRight(Effect.sleep(Duration.millis(50))))
      yield* Effect.raceFirst(Effect.forever(ping), Queue.take(received))
      const abort = sql.withTransaction(Effect.zipRight(sql`SELECT pg_notify('birzha_test', 'rolled back')`, Effect.fail("abort" as const)))
      yield* Effect.flip(abort)
      yield* sql.withTransaction(sql`SELECT pg_notify('birzha_test', 'committed')`)
      for (;;) {
        const payload = yield* Queue.take(received)
        if (payload !== "ping") return payload
      }
    }).pipe(
      Effect.timeout(Duration.seconds(20)),
      Effect.provide(DatabaseLive.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(settings)))))),
      Effect.scoped
    )
  )

describe("the database's LISTEN facility", () => {
  it("delivers a committed NOTIFY on a server, and none of a rolled-back transaction", async () => {
    expect(await firstAfterRollback([["DATABASE_URL", database.url]])).toBe("committed")
  })
  it("delivers a committed NOTIFY in-process on the embedded database, and none of a rolled-back transaction", async () => {
    const data = await embeddedDataDir("database-listen", (dir) => Effect.runPromise(Effect.scoped(makePgliteClient(dir))))
    try {
      expect(await firstAfterRollback([["BIRZHA_DATA_DIR", data.home]])).toBe("committed")
    } finally {
      data.remove()
    }
  })
})
