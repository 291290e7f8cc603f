import * as Store from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Deferred, Effect, Layer } from "effect"
import { getHeapSpaceStatistics } from "node:v8"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { Database, DatabaseLive, MigrationsAtStart } from "./database/Database.js"
import { collectStartupGarbage, StartupMemory } from "./StartupMemory.js"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase("startup_memory")
})
afterAll(async () => {
  await database?.drop()
})

const youngGeneration = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0

describe("the start-up collection", () => {
  it("gives back the young generation that survivors grew and the old generation's garbage, and says how much", async () => {
    // Survivors of many scavenges, as loading the code and starting leave: they grow the young
    // generation and fill the old one; then they are dropped, as start-up's are.
    let kept: Array<Array<number>> | undefined = []
    for (let i = 0; i < 400_000; i++) kept.push([i, i + 1, i + 2, i + 3])
    expect(youngGeneration()).toBeGreaterThan(0)
    expect(kept.length).toBe(400_000)
    kept = undefined

    const report = await Effect.runPromise(collectStartupGarbage)

    expect(report.youngAfter).toBeLessThan(report.youngBefore)
    expect(report.heapAfter).toBeLessThan(report.heapBefore)
    expect(report.pauseMs).toBeGreaterThanOrEqual(0)
  })

  it("runs after the migrations and before readiness says ready", async () => {
    const program = Effect.gen(function*() {
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const memory = Layer.succeed(StartupMemory, { release: Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(gate)) })
      const service = yield* Layer.build(
        MigrationsAtStart.pipe(
          Layer.provideMerge(DatabaseLive),
          Layer.provide(memory),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", database.url]]))))
        )
      )
      const { readiness } = yield* Effect.provide(Database, service)
      const sql = yield* Effect.provide(SqlClient.SqlClient, service)

      yield* Deferred.await(entered)
      // The step runs only once the migrations are applied, and readiness waits for it.
      expect(yield* Store.migrationReadiness(sql)).toEqual({ database: true, migrations: true })
      expect(yield* readiness).toEqual({ database: true, migrations: false })

      yield* Deferred.succeed(gate, undefined)
      let report = yield* readiness
      for (let tries = 0; !report.migrations && tries < 500; tries++) {
        yield* Effect.sleep("10 millis")
        report = yield* readiness
      }
      expect(report).toEqual({ database: true, migrations: true })
    })
    await Effect.runPromise(Effect.scoped(program))
  }, 60_000)
})
