import * as Store from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Deferred, Effect, Layer } from "effect"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runToEnd } from "../../../testing/childProcess.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { Database, DatabaseLive, MigrationsAtStart } from "./database/Database.js"
import { StartupMemory, type StartupMemoryReport } from "./StartupMemory.js"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase("startup_memory")
})
afterAll(async () => {
  await database?.drop()
})

// In a process of its own, with the built package (the README's test command builds every package
// first; `vitest run` alone tests the last build): V8's flags and heap are the process's. The test
// runner's worker keeps its heap from file to file, and in one clean-clone run its young
// generation stayed at 1 MiB through this test's survivors, so the collection had nothing to give back.
const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const inOwnProcess = async <A>(nodeFlags: ReadonlyArray<string>, script: string): Promise<A> => {
  const child = await runToEnd(process.execPath, [...nodeFlags, "--input-type=module", "-e", script], { cwd: packageDir })
  expect(child.status, child.stderr).toBe(0)
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as A
}

describe("the start-up collection", () => {
  it("gives back the young generation that survivors grew and the old generation's garbage, and says how much", async () => {
    // Survivors of many scavenges, as loading the code and starting leave: they grow the young
    // generation and fill the old one; then they are dropped, as start-up's are.
    const report = await inOwnProcess<StartupMemoryReport & { kept: number }>([], `
import { Effect } from "effect"
import { collectStartupGarbage } from "./dist/index.js"
let kept = []
for (let i = 0; i < 400000; i++) kept.push([i, i + 1, i + 2, i + 3])
const count = kept.length
kept = undefined
const report = await Effect.runPromise(collectStartupGarbage)
console.log(JSON.stringify({ ...report, kept: count }))
`)
    expect(report.kept).toBe(400_000)
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
  })
})

// Started as `birzha` starts (64 MiB semi-spaces at most, 16 at least).
const youngAfterSurvivors = async (layer: "StartupMemoryLive" | "StartupMemoryRequestsLive") => {
  const report = await inOwnProcess<{ afterCollection: number; young: number; kept: number }>(["--max-semi-space-size=64", "--min-semi-space-size=16"], `
import { Effect } from "effect"
import { getHeapSpaceStatistics } from "node:v8"
import { StartupMemory, ${layer} } from "./dist/index.js"
await Effect.runPromise(Effect.provide(Effect.flatMap(StartupMemory, (memory) => memory.release), ${layer}))
const afterCollection = getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_size
// Survivors of many scavenges, which make V8 grow a young generation that may grow.
const kept = []
for (let i = 0; i < 600000; i++) kept.push([i, i + 1, i + 2, i + 3])
const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_size
console.log(JSON.stringify({ afterCollection, young, kept: kept.length }))
`)
  expect(report.kept).toBe(600_000)
  // The collection shrank the young generation to its floor (two semi-spaces of 16 MiB at most).
  expect(report.afterCollection).toBeLessThanOrEqual(32 * 1024 * 1024)
  return report.young
}

describe("the young generation after start-up", () => {
  const MiB = 1024 * 1024
  it("stays at its floor in a process that only answers requests, and grows in one that also runs the workers", async () => {
    // Two semi-spaces of the 16 MiB floor: the requests' host never grows past them.
    expect(await youngAfterSurvivors("StartupMemoryRequestsLive")).toBeLessThanOrEqual(40 * MiB)
    expect(await youngAfterSurvivors("StartupMemoryLive")).toBeGreaterThanOrEqual(48 * MiB)
  })
})
