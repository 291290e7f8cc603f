import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { DatabaseLive } from "./Database.js"

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
