import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import * as Reactivity from "@effect/experimental/Reactivity"
import { Effect, Option } from "effect"
import Pg from "pg"
const pool = new Pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres", max: 4, options: "-c jit=off" })
const sql = await Effect.runPromise(Effect.scoped(PgClient.fromPool({ acquire: Effect.succeed(pool) })).pipe(Effect.provide(Reactivity.layer)))
const N = 3000
const viaTemplate = Effect.gen(function*() {
  for (let i = 0; i < N; i++) yield* sql`SELECT ${i}::int AS n, 'x' AS s`
})
const viaConn = Effect.gen(function*() {
  const [conn] = (yield* Effect.serviceOption(SqlClient.TransactionConnection)).pipe(Option.getOrThrow)
  for (let i = 0; i < N; i++) yield* conn.execute("SELECT $1::int AS n, 'x' AS s", [i], undefined)
})
const time = async (label, eff) => {
  const c0 = process.cpuUsage(); const t0 = performance.now()
  await Effect.runPromise(sql.withTransaction(eff))
  const c = process.cpuUsage(c0); const t = performance.now() - t0
  console.log(label, "wall µs/stmt", (t * 1000 / N).toFixed(0), "cpu µs/stmt", ((c.user + c.system) / N).toFixed(0))
}
const raw = async () => {
  const client = await pool.connect(); await client.query("BEGIN")
  const c0 = process.cpuUsage(); const t0 = performance.now()
  for (let i = 0; i < N; i++) await client.query("SELECT $1::int AS n, 'x' AS s", [i])
  const c = process.cpuUsage(c0); const t = performance.now() - t0
  await client.query("COMMIT"); client.release()
  console.log("raw pg", "wall µs/stmt", (t * 1000 / N).toFixed(0), "cpu µs/stmt", ((c.user + c.system) / N).toFixed(0))
}
for (let r = 0; r < 3; r++) { await raw(); await time("template", viaTemplate); await time("conn.execute", viaConn) }
await pool.end()
