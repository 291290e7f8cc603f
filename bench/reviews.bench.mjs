// Reviews at scale: 1M published reviews of 500k completed deals over 100k profiles,
// generated in SQL. reviews.list_public for a specialist with 10k reviews and customers.get for a
// customer with 10k: p95 at one connection (target < 15 ms), and throughput at the runner's
// connections against bench/lib/bare-reviews-server.mjs, a bare node:http + pg server running
// the same statements, in the same run (order: baseline, host, baseline; target ratio ≥ 0.5).
//
// BENCH_REVIEWS_SCALE (default 1) scales the generated data (0.1: 100k reviews); the busy
// profiles keep a fiftieth of the deals each.
import { join } from "node:path"
import { benchDatabase, withClient } from "./lib/database.mjs"
import { freePort, get, repoRoot, startProcess } from "./lib/processes.mjs"

export const name = "reviews"
export const description = "reviews.list_public, customers.get (10k reviews among 1M) vs bare node:http + pg"
export const pin = true

const SCALE = Number(process.env.BENCH_REVIEWS_SCALE ?? "1")
const PROFILES = Math.round(100_000 * SCALE)
const DEALS = Math.round(500_000 * SCALE)
const ALIAS = "c-busycustom"

const profileUuid = (i) => `md5('p' || ${i})::uuid`
/** SQL: the 10 base32 characters of an integer expression (a distinct alias per profile). */
const base32 = (g) => Array.from({ length: 10 }, (_, i) => `substr('abcdefghijklmnopqrstuvwxyz234567', ((${g} >> ${5 * (9 - i)}) & 31)::int + 1, 1)`).join(" || ")

/**
 * The data, in SQL. Deal d (with its accepted offer as origin): the customer hires the contractor;
 * d % 50 = 0 has profile 0 as the contractor, d % 50 = 1 profile 1 as the customer. Both parties
 * reviewed each deal, both reviews published.
 */
const generate = async (client, log) => {
  const step = async (label, sql) => {
    const t0 = Date.now()
    const result = await client.query(sql)
    log(`  seed: ${label}: ${result.rowCount ?? ""} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  }
  await step("accounts", `INSERT INTO accounts (uuid, email, current_profile_uuid)
    SELECT md5('a' || g)::uuid, 'bench' || g || '@bench.invalid', ${profileUuid("g")} FROM generate_series(0, ${PROFILES - 1}) g`)
  await step("profiles", `INSERT INTO profiles (uuid, id, account_uuid, name, type, is_public)
    SELECT ${profileUuid("g")}, 'bench' || g, md5('a' || g)::uuid, 'Профиль ' || g, 'Физлицо', g % 3 <> 0 OR g < 2 FROM generate_series(0, ${PROFILES - 1}) g`)
  const parties = `SELECT d,
      CASE WHEN d % 50 = 1 THEN 1 ELSE 2 + (d * 7919) % ${PROFILES - 2} END AS customer,
      CASE WHEN d % 50 = 0 THEN 0 ELSE 2 + (1 + (d * 7919) % ${PROFILES - 2} + 1 + (d * 104729) % ${PROFILES - 4}) % ${PROFILES - 2} END AS contractor,
      now() - make_interval(secs => d * 10) AS t
    FROM generate_series(1::bigint, ${DEALS}) d`
  await step("offers", `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body, created_at, updated_at)
    SELECT md5('o' || d)::uuid, 'offer', 'accepted', ${profileUuid("customer")}, ${profileUuid("contractor")}, 'customer', 'Условия ' || d, t, t
    FROM (${parties}) x WHERE customer <> contractor`)
  await step("deals", `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, origin_relation_uuid,
      body, completed_at, created_at, updated_at)
    SELECT md5('d' || d)::uuid, 'deal', 'completed', ${profileUuid("customer")}, ${profileUuid("contractor")}, 'customer', md5('o' || d)::uuid,
      'Условия ' || d, t, t, t
    FROM (${parties}) x WHERE customer <> contractor`)
  await step("reviews", `INSERT INTO reviews (relation_uuid, author_profile_uuid, subject_profile_uuid, subject_role, rating, body, status,
      window_ends_at, created_at, updated_at, published_at)
    SELECT md5('d' || d)::uuid, ${profileUuid("customer")}, ${profileUuid("contractor")}, 'specialist', 1 + (d * 31) % 5,
      'Работа выполнена в срок, рекомендую ' || d, 'published', t + interval '14 days', t, t, t + interval '1 day'
    FROM (${parties}) x WHERE customer <> contractor
    UNION ALL
    SELECT md5('d' || d)::uuid, ${profileUuid("contractor")}, ${profileUuid("customer")}, 'customer', 1 + (d * 17) % 5,
      'Понятное задание, быстрая оплата ' || d, 'published', t + interval '14 days', t, t, t + interval '1 day'
    FROM (${parties}) x WHERE customer <> contractor`)
  await step("aliases", `INSERT INTO customer_aliases (profile_uuid, alias)
    SELECT ${profileUuid("g")}, CASE WHEN g = 1 THEN '${ALIAS}' ELSE 'c-' || ${base32("g")} END
    FROM generate_series(1::bigint, ${PROFILES - 1}) g`)
  await step("review stats", `INSERT INTO review_stats (profile_uuid, subject_role, review_count, rating_sum, ratings)
    SELECT subject_profile_uuid, subject_role, count(*), sum(rating),
      ARRAY[count(*) FILTER (WHERE rating = 1), count(*) FILTER (WHERE rating = 2), count(*) FILTER (WHERE rating = 3),
        count(*) FILTER (WHERE rating = 4), count(*) FILTER (WHERE rating = 5)]::int[]
    FROM reviews WHERE status = 'published' GROUP BY subject_profile_uuid, subject_role`)
  await step("customer stats", `INSERT INTO customer_stats (profile_uuid, completed_deals)
    SELECT initiator_profile_uuid, count(*) FROM relations WHERE kind = 'deal' AND status = 'completed' GROUP BY initiator_profile_uuid`)
  await step("analyze", "ANALYZE")
}

export const run = async (ctx) => {
  const { log, options } = ctx
  log(`  scale ${SCALE}: ${PROFILES} profiles, ${DEALS} deals, ${2 * DEALS} reviews`)
  const database = await benchDatabase(ctx, "reviews")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })
  const t0 = Date.now()
  const counts = await withClient(database.url, async (client) => {
    await generate(client, log)
    const { rows: [row] } = await client.query(`SELECT
      (SELECT count(*)::int FROM reviews) AS reviews,
      (SELECT count(*)::int FROM reviews WHERE subject_profile_uuid = ${profileUuid(0)} AND subject_role = 'specialist') AS specialist,
      (SELECT count(*)::int FROM reviews WHERE subject_profile_uuid = ${profileUuid(1)} AND subject_role = 'customer') AS customer,
      ${profileUuid(0)} AS busy`)
    return row
  })
  log(`  seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${counts.reviews} reviews; the busy specialist has ${counts.specialist}, the busy customer ${counts.customer}`)

  const port = await freePort()
  const baseline = await startProcess({
    label: "bare-reviews",
    entry: join(repoRoot, "bench", "lib", "bare-reviews-server.mjs"),
    args: [String(port), "127.0.0.1", database.url],
    port,
    readyPath: "/__ready",
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => baseline.stop())

  const reads = [
    { label: "reviews.list_public", path: `/api/v1/commands/reviews.list_public?profileUuid=${counts.busy}` },
    { label: "customers.get", path: `/api/v1/commands/customers.get?customerAlias=${ALIAS}` }
  ]
  const results = {}
  for (const read of reads) {
    const [a, b] = await Promise.all([get(host.url + read.path), get(baseline.url + read.path)])
    const items = (answer) => JSON.parse(answer.body).items?.length
    if (a.status !== 200 || b.status !== 200 || items(a) !== items(b) || items(a) === 0) {
      throw new Error(`${read.label}: host ${a.status} (${items(a)} items), baseline ${b.status} (${items(b)} items): ${a.body.toString().slice(0, 300)} ${b.body.toString().slice(0, 300)}`)
    }
    log(`\n  ${read.label}: host ${a.body.length} bytes, baseline ${b.body.length} bytes per page of 20`)
    const one = { connections: 1 }
    const single = []
    single.push(await ctx.measure({ ...one, label: `${read.label} baseline, 1 conn`, url: baseline.url + read.path, server: baseline }))
    single.push(await ctx.measure({ ...one, label: `${read.label} host, 1 conn`, url: host.url + read.path, server: host }))
    const many = []
    many.push(await ctx.measure({ label: `${read.label} baseline #1`, url: baseline.url + read.path, server: baseline }))
    many.push(await ctx.measure({ label: `${read.label} host`, url: host.url + read.path, server: host }))
    many.push(await ctx.measure({ label: `${read.label} baseline #2`, url: baseline.url + read.path, server: baseline }))
    const base = ctx.meanRow(`${read.label} baseline (mean)`, [many[0], many[2]])
    ctx.printTable([...single, ...many, base])
    const ratio = many[1].requestsPerSecond / base.requestsPerSecond
    const p95 = single[1].latencyP95
    log(`  ${read.label}: host p95 at 1 connection ${p95.toFixed(2)} ms (target < 15 ms: ${p95 < 15 ? "met" : "NOT met"}); ` +
      `throughput host/baseline at ${options.connections} connections ${ratio.toFixed(2)} (target ≥ 0.5: ${ratio >= 0.5 ? "met" : "NOT met"})`)
    results[read.label] = { p95Ms: p95, baselineP95Ms: single[0].latencyP95, ratio, host: many[1], baseline: base }
  }
  return { scale: SCALE, counts, reads: results }
}
