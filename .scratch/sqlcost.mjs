import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, FiberRef } from "effect"
import Pg from "pg"
const pool = new Pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres", max: 1 })
const sql = await Effect.runPromise(Effect.scoped(PgClient.fromPool({ acquire: Effect.succeed(pool) })).pipe(Effect.provide(Reactivity.layer)))
const N = 3000
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) }
const time = async (label, eff) => {
  await Effect.runPromise(eff)
  const c0 = cpu()
  await Effect.runPromise(Effect.locally(FiberRef.currentTracerEnabled, false)(eff))
  console.log(label.padEnd(40), ((cpu() - c0) / N).toFixed(1), "µs CPU/statement (incl. pg driver)")
}
const loop = (f) => Effect.forEach(Array.from({ length: N }, (_, i) => i), f, { discard: true })
const text = "SELECT $1::int AS n, now() AS t"
for (let r = 0; r < 2; r++) {
  await time("pool.query direct (Effect.async)", loop((i) => Effect.async((resume) => { pool.query(text, [i], (e, res) => resume(Effect.succeed(res.rows))) })))
  await time("sql template, no transaction", loop((i) => sql`SELECT ${i}::int AS n, now() AS t`))
  await time("sql.unsafe, no transaction", loop((i) => sql.unsafe(text, [i])))
  await time("sql template, in transaction", sql.withTransaction(loop((i) => sql`SELECT ${i}::int AS n, now() AS t`)))
  await time("conn.execute, in transaction", sql.withTransaction(Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (o) => loop((i) => o.value[0].execute(text, [i], undefined)))))
}
await pool.end()
