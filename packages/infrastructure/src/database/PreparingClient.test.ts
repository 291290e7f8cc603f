import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { maxPreparedPerConnection, PreparingClient } from "./PreparingClient.js"

let database: TestDatabase
let pool: Pg.Pool | undefined
let sql: SqlClient.SqlClient

beforeAll(async () => {
  database = await createTestDatabase("preparing")
})
// A fresh pool of one connection per test: every statement and the checks of pg_prepared_statements share one session.
beforeEach(async () => {
  await pool?.end()
  pool = new Pg.Pool({ Client: PreparingClient, connectionString: database.url, max: 1 })
  sql = await Effect.runPromise(
    Effect.scoped(PgClient.fromPool({ acquire: Effect.succeed(pool) })).pipe(Effect.provide(Reactivity.layer))
  )
})
afterAll(async () => {
  await pool?.end()
  await database?.drop()
})

const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.provideService(effect, SqlClient.SqlClient, sql))

/** The statements prepared on the pool's connection (asked without a value: never prepared itself). */
const prepared = async () => {
  const { rows } = await pool!.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements ORDER BY name")
  return rows
}

describe("prepared statements on a Postgres server connection", () => {
  it("prepares a parameterised statement at its second run on a connection and answers the same", async () => {
    const query = Effect.flatMap(SqlClient.SqlClient, (q) => q<{ n: number }>`SELECT ${41}::int + 1 AS n`)
    expect(await run(query)).toEqual([{ n: 42 }])
    expect(await prepared()).toEqual([])
    expect(await run(query)).toEqual([{ n: 42 }])
    const [statement] = await prepared()
    expect(statement?.statement).toBe("SELECT $1::int + 1 AS n")
    expect(await run(query)).toEqual([{ n: 42 }])
    expect((await prepared()).map((row) => row.name)).toEqual([statement!.name])
  })

  it("leaves parameterless statements and other call shapes unprepared", async () => {
    for (let i = 0; i < 3; i++) {
      await run(Effect.flatMap(SqlClient.SqlClient, (q) => q`SELECT 1 AS one`))
      await run(Effect.flatMap(SqlClient.SqlClient, (q) => q`SELECT ${i}::int AS i`.values))
      await pool!.query({ text: "SELECT $1::int AS i", values: [i] })
    }
    expect(await prepared()).toEqual([])
  })

  it(`keeps at most ${maxPreparedPerConnection} statements prepared per connection and runs the others unnamed`, async () => {
    const client = await pool!.connect()
    try {
      for (let i = 0; i <= maxPreparedPerConnection; i++) {
        for (let time = 0; time < 2; time++) {
          const { rows } = await client.query<{ i: number }>(`SELECT $1::int AS i /* ${i} */`, [i])
          expect(rows).toEqual([{ i }])
        }
      }
    } finally {
      client.release()
    }
    const names = await prepared()
    expect(names).toHaveLength(maxPreparedPerConnection)
    expect(names.some((row) => row.statement.endsWith(`/* ${maxPreparedPerConnection} */`))).toBe(false)
  })

  it("runs a statement again unprepared when a migration changed its columns, outside a transaction", async () => {
    await pool!.query("CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)")
    await pool!.query("INSERT INTO notes VALUES (1, 'one')")
    const select = Effect.flatMap(SqlClient.SqlClient, (q) => q`SELECT * FROM notes WHERE id = ${1}`)
    await run(select)
    await run(select)
    expect(await prepared()).toHaveLength(1)

    await pool!.query("ALTER TABLE notes ADD COLUMN tag text NOT NULL DEFAULT 'new'")
    expect(await run(select)).toEqual([{ id: 1, body: "one", tag: "new" }])
    // And it is prepared again under a new name from then on.
    expect(await run(select)).toEqual([{ id: 1, body: "one", tag: "new" }])
    expect(await run(select)).toEqual([{ id: 1, body: "one", tag: "new" }])
    expect(await prepared()).toHaveLength(2)

    // Inside a transaction the failed statement has aborted it: the error stands, the next call works.
    await pool!.query("ALTER TABLE notes DROP COLUMN tag")
    const inTransaction = await Effect.runPromiseExit(
      Effect.provideService(Effect.flatMap(SqlClient.SqlClient, (q) => q.withTransaction(select)), SqlClient.SqlClient, sql)
    )
    expect(Exit.isFailure(inTransaction)).toBe(true)
    expect(await run(select)).toEqual([{ id: 1, body: "one" }])
  })
})
