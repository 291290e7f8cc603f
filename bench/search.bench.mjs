// Search latency: listPublications with `q` (GET /api/v1/publications?q=...) through the whole host
// on Postgres, for a mix of realistic Russian queries (1 to 3 terms, some with ё, some short, one
// that matches nothing), at 10k and at 100k demo publications, to show how p95 grows. Target: p95
// under 25 ms at 100k. Prints EXPLAIN (ANALYZE, BUFFERS) of one query at each size, so the plan
// (trigram index or not) is on the record, and each query's own p50/p95 with its match count.
import { demoDatabase } from "./lib/demo-database.mjs"

export const name = "search"
export const description = "listPublications with q: p95 of a query mix at 10k and 100k publications (target < 25 ms at 100k)"

/** `BENCH_SEARCH_SIZES=2000,20000` runs a smaller check (two sizes, the second reported as "large"). */
const SIZES = (process.env.BENCH_SEARCH_SIZES ?? "10000,100000").split(",").map(Number)
if (SIZES.length !== 2 || SIZES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`BENCH_SEARCH_SIZES: two sizes, got ${process.env.BENCH_SEARCH_SIZES}`)
const TARGET_P95_MS = 25
/**
 * Clients of the mixed runs: one (the latency a person searching sees, the number the target is
 * about) and four at once (a few people searching together: on a 2-core machine they queue behind
 * each other, Postgres and the load generator).
 */
const CONNECTIONS = [1, 4]
const SEQUENTIAL_RUNS = 10
const EXPLAINED = "логотип пекарни"

export const QUERIES = [
  "лендинг",
  "телеграм бот",
  "логотип пекарни",
  "аналитик данных",
  "отчёт",
  "учет заказов",
  "ёлка",
  "Python",
  "вёрстка",
  "копирайтер",
  "Kubernetes",
  "презентация для инвесторов",
  "Казань",
  "курс",
  "интернет-магазин",
  "бот записи клиентов",
  "настройка рекламы",
  "DevOps",
  "фирменный стиль",
  "видеомонтажёр",
  "сайт кофейни",
  "дашборд продаж Power BI",
  "1С",
  "ИИ агент",
  "квантовый компьютер"
]

// The SQL listPublications sends for `q` alone (packages/domain/src/publications/PublicReads.ts),
// one LIKE per term (each a word start, migration 0016), with the default page of 20 (+1 to know whether there is a next page).
const searchSql = (terms) => `SELECT p.uuid, p.id, p.kind, o.id AS owner_id, o.uuid AS owner_uuid, p.approved, p.closed, p.demo,
  p.created_at, p.approved_at, p.approved_at::text AS approved_key
  FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid
  WHERE (p.approved IS NOT NULL AND NOT p.hidden AND p.deleted_at IS NULL AND o.deleted_at IS NULL
    ${terms.map((_, i) => `AND p.search_text LIKE '%' || btrim(birzha_search_words($${i + 1})) || '%' AND strpos(p.search_text, birzha_search_words($${i + 1})) <> 0`).join(" ")})
  ORDER BY p.approved_at DESC, p.uuid DESC LIMIT 21`

const WARM_EXECUTIONS = 6

/** EXPLAIN ANALYZE of the search as a prepared statement, after runs with the other queries of as many terms. */
const preparedPlan = (database, terms) =>
  database.session(async (client) => {
    const sql = searchSql(terms.map((_, i) => i))
    await client.query(`PREPARE search_plan(${terms.map(() => "text").join(", ")}) AS ${sql}`)
    const others = QUERIES.map((q) => termsOf(q)).filter((t) => t.length === terms.length && t.join(" ") !== terms.join(" "))
    for (let i = 0; i < WARM_EXECUTIONS; i++) {
      const values = others[i % others.length]
      await client.query(`EXECUTE search_plan(${values.map((v) => client.escapeLiteral(v)).join(", ")})`)
    }
    const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_plan(${terms.map((v) => client.escapeLiteral(v)).join(", ")})`)
    const stats = await client.query("SELECT generic_plans FROM pg_prepared_statements WHERE name = 'search_plan'")
    return { lines: plan.rows.map((row) => row["QUERY PLAN"]), genericPlans: Number(stats.rows[0]?.generic_plans ?? 0) }
  })

const termsOf = (q) => q.split(/\s+/u).filter((t) => t.length > 0)

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

const timed = async (url) => {
  const t0 = process.hrtime.bigint()
  const response = await fetch(url)
  const body = await response.text()
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${body.slice(0, 300)}`)
  return ms
}

export const run = async (ctx) => {
  const { log, options } = ctx
  const database = await demoDatabase(ctx, { publications: SIZES[0] })
  // An experiment switch: BENCH_PLAN_CACHE_MODE=force_custom_plan plans every prepared statement
  // for its own parameters (see bench/README.md, search).
  const planCacheMode = process.env.BENCH_PLAN_CACHE_MODE
  if (planCacheMode !== undefined) {
    if (!/^(auto|force_custom_plan|force_generic_plan)$/.test(planCacheMode)) throw new Error(`BENCH_PLAN_CACHE_MODE: ${planCacheMode}?`)
    await database.query(`ALTER DATABASE "${new URL(database.url).pathname.slice(1)}" SET plan_cache_mode = ${planCacheMode}`)
    log(`  plan_cache_mode = ${planCacheMode} for the benchmark's database (BENCH_PLAN_CACHE_MODE)`)
  }
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })
  const url = (q) => `${host.url}/api/v1/publications?q=${encodeURIComponent(q)}`
  const requests = [{ method: "GET", setupRequest: (req) => ({ ...req, path: `/api/v1/publications?q=${encodeURIComponent(QUERIES[Math.floor(Math.random() * QUERIES.length)])}` }) }]

  const results = []
  for (const size of SIZES) {
    if (size !== SIZES[0]) await database.fill(size)
    log(`\n  -- ${size} publications`)

    // Each query alone, one after another: which ones are slow, and how many rows they match.
    const perQuery = []
    for (const q of QUERIES) {
      for (let i = 0; i < 3; i++) await timed(url(q))
      const times = []
      for (let i = 0; i < SEQUENTIAL_RUNS; i++) times.push(await timed(url(q)))
      const terms = termsOf(q)
      const { rows } = await database.query(
        `SELECT count(*)::int AS n FROM publications p WHERE ${terms.map((_, i) => `p.search_text LIKE '%' || btrim(birzha_search_words($${i + 1})) || '%' AND strpos(p.search_text, birzha_search_words($${i + 1})) <> 0`).join(" AND ")}`,
        terms
      )
      perQuery.push({ q, matches: rows[0].n, p50: percentile(times, 50), p95: percentile(times, 95) })
    }
    log(`  each query alone (${SEQUENTIAL_RUNS} sequential requests after 3 warm-ups), slowest first:`)
    log(`    ${"query".padEnd(28)} ${"matches".padStart(8)} ${"p50 ms".padStart(8)} ${"p95 ms".padStart(8)}`)
    for (const r of [...perQuery].sort((a, b) => b.p95 - a.p95)) {
      log(`    ${r.q.padEnd(28)} ${String(r.matches).padStart(8)} ${r.p50.toFixed(2).padStart(8)} ${r.p95.toFixed(2).padStart(8)}`)
    }

    // The mix, queries picked at random.
    const mixed = []
    for (const connections of CONNECTIONS) {
      mixed.push({ connections, ...(await ctx.measure({ label: `${size / 1000}k mix, ${connections} conn.`, url: host.url, server: host, requests, connections })) })
    }

    const terms = termsOf(EXPLAINED)
    const plan = await database.query(`EXPLAIN (ANALYZE, BUFFERS) ${searchSql(terms)}`, terms)
    log(`\n  EXPLAIN (ANALYZE, BUFFERS) of q=${JSON.stringify(EXPLAINED)} at ${size}, planned for its own terms:`)
    for (const row of plan.rows) log(`    ${row["QUERY PLAN"]}`)
    // The host prepares statements per connection (PreparingClient), and after five runs Postgres may
    // keep a generic plan, made without the terms: the plan a busy host actually runs.
    const prepared = await preparedPlan(database, terms)
    log(`\n  the same as a prepared statement after ${WARM_EXECUTIONS} runs with other terms (generic plans: ${prepared.genericPlans}):`)
    for (const line of prepared.lines) log(`    ${line}`)
    results.push({ size, mixed, perQuery })
  }

  const [small, large] = results
  log("")
  log(`  mixed runs: ${QUERIES.length} queries picked at random, pipelining 1, ${options.durationSeconds} s measured after ${options.warmupSeconds} s warm-up`)
  log(`  ${"".padEnd(22)} ${"req/s".padStart(7)} ${"p50 ms".padStart(8)} ${"p95 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"server CPU".padStart(11)}`)
  for (const { size, mixed } of results) {
    for (const m of mixed) {
      log(`  ${`${size / 1000}k, ${m.connections} conn.`.padEnd(22)} ${m.requestsPerSecond.toFixed(0).padStart(7)} ${m.latencyP50.toFixed(2).padStart(8)} ${m.latencyP95.toFixed(2).padStart(8)} ${m.latencyP99.toFixed(2).padStart(8)} ${`${Math.round((m.serverCpu ?? 0) * 100)}%`.padStart(11)}`)
    }
  }
  const growth = large.mixed[0].latencyP95 / small.mixed[0].latencyP95
  const p95 = large.mixed[0].latencyP95
  log("")
  log(`  p95 growth ${small.size / 1000}k → ${large.size / 1000}k (1 connection): ${growth.toFixed(2)}× (${large.size / small.size}× the rows)`)
  log(`  p95 at ${large.size / 1000}k (1 connection): ${p95.toFixed(2)} ms  ${p95 < TARGET_P95_MS ? "PASS" : "ABOVE TARGET"} (target < ${TARGET_P95_MS} ms)`)
  return {
    target: TARGET_P95_MS,
    pass: p95 < TARGET_P95_MS,
    growth,
    results: results.map(({ mixed, perQuery, size }) => ({ size, mixed, perQuery }))
  }
}
