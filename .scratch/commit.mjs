import Pg from "pg"
const c = new Pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres" }); await c.connect()
await c.query("CREATE TEMP TABLE IF NOT EXISTS t (x int)")
await c.query("CREATE TABLE IF NOT EXISTS commit_probe (x int)")
for (const mode of ["on", "off"]) {
  await c.query(`SET synchronous_commit = ${mode}`)
  const t0 = performance.now()
  for (let i = 0; i < 200; i++) { await c.query("BEGIN"); await c.query("INSERT INTO commit_probe VALUES (1)"); await c.query("COMMIT") }
  console.log(mode, ((performance.now() - t0) / 200).toFixed(2), "ms per txn")
}
await c.query("DROP TABLE commit_probe"); await c.end()
