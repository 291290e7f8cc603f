import { makePooledRead, PooledReads, pooledReadsOf } from "@birzha/domain/internal"
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { PreparingClient } from "./PreparingClient.js"

let database: TestDatabase
let pool: Pg.Pool
let sql: SqlClient.SqlClient

beforeAll(async () => {
  database = await createTestDatabase("pooled_reads")
  pool = new Pg.Pool({ Client: PreparingClient, connectionString: database.url, max: 2 })
  sql = await Effect.runPromise(
    Effect.scoped(PgClient.fromPool({ acquire: Effect.succeed(pool) })).pipe(Effect.provide(Reactivity.layer))
  )
  await pool.query("CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)")
  await pool.query("INSERT INTO notes VALUES (1, 'committed')")
})
afterAll(async () => {
  await pool?.end()
  await database?.drop()
})

const withPooled = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromiseExit(effect.pipe(Effect.provideService(PooledReads, pooledReadsOf(pool)), Effect.provideService(SqlClient.SqlClient, sql)))

describe("pooled reads on a Postgres server", () => {
  it("answers the rows the driver returns, on a statement run many times (prepared from its second run)", async () => {
    const read = pooledReadsOf(pool).query
    for (let i = 0; i < 3; i++) {
      expect(await Effect.runPromise(read("SELECT id, body FROM notes WHERE id = $1", [1]))).toEqual([{ id: 1, body: "committed" }])
    }
    expect(await Effect.runPromise(read("SELECT id FROM notes WHERE id = $1", [2]))).toEqual([])
  })

  it("fails with a SqlError (not a defect) when the database refuses the statement", async () => {
    const exit = await Effect.runPromiseExit(pooledReadsOf(pool).query("SELECT id FROM notes WHERE id = $1", ["not a number"]))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error instanceof SqlError).toBe(true)
  })

  it("runs on the caller's transaction inside one, so a read sees what its transaction wrote", async () => {
    const exit = await withPooled(Effect.gen(function*() {
      const read = yield* makePooledRead
      const client = yield* SqlClient.SqlClient
      return yield* client.withTransaction(Effect.gen(function*() {
        yield* client`INSERT INTO notes VALUES (2, 'uncommitted')`
        const inside = yield* read("SELECT body FROM notes WHERE id = $1", [2])
        // Read outside the transaction through the pool directly: the row is not committed yet.
        const outside = yield* Effect.promise(() => pool.query("SELECT body FROM notes WHERE id = $1", [2]))
        return yield* Effect.fail({ inside, outside: outside.rows })
      }))
    }))
    // The failure rolled the insert back; the transaction's read saw it, the pool did not.
    expect(exit).toEqual(Exit.fail({ inside: [{ body: "uncommitted" }], outside: [] }))
    expect((await pool.query("SELECT count(*)::int AS n FROM notes WHERE id = 2")).rows).toEqual([{ n: 0 }])
  })

  it("without PooledReads in the context, runs through the SqlClient", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.flatMap(makePooledRead, (read) => read("SELECT body FROM notes WHERE id = $1", [1])).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    )
    expect(exit).toEqual(Exit.succeed([{ body: "committed" }]))
  })
})
