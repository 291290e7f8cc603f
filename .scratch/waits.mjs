import Pg from "pg"
const c = new Pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres" }); await c.connect()
const counts = new Map(); let samples = 0
const end = Date.now() + Number(process.argv[2] ?? 60) * 1000
while (Date.now() < end) {
  const { rows } = await c.query(`SELECT state, coalesce(wait_event_type,'-') || ':' || coalesce(wait_event,'-') AS w, left(query, 60) AS q FROM pg_stat_activity
    WHERE datname LIKE 'birzha_bench_relations%' AND application_name = 'birzha' AND state <> 'idle'`)
  if (rows.length > 0) samples++
  for (const r of rows) { const k = `${r.state} ${r.w} ${r.q.replace(/\s+/g, " ")}`; counts.set(k, (counts.get(k) ?? 0) + 1) }
  await new Promise((r) => setTimeout(r, 20))
}
console.log("samples with activity", samples)
for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(String(v).padStart(6), k)
await c.end()
