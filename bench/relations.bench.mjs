// Relations at scale: 1M relations and 5M messages over 100k profiles, generated in SQL.
// deals.list and threads.messages for a busy profile (10k relations, 2k of them deals): p95 at one
// connection, and throughput at the runner's connections against bench/lib/bare-relations-server.mjs,
// a bare node:http + pg server running the same statements (session lookup included), in the same
// run (order: baseline, host, baseline). Then messages.send sustained through the host by 100
// senders, with a worker process sequencing the events, and the time until every message's
// event has its position; beside it the bare server running one transaction per message (the
// statements of a send alone), what the design before the host's group commit allowed.
//
// BENCH_RELATIONS_SCALE (default 1) scales the generated data (0.1: 100k relations, 500k messages).
import { spawn } from "node:child_process"
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import { join, resolve } from "node:path"
import { benchDatabase, withClient } from "./lib/database.mjs"
import { micros } from "./lib/load.mjs"
import { commandFlags, freePort, get, repoRoot, startProcess } from "./lib/processes.mjs"

export const name = "relations"
export const description = "deals.list, threads.messages (busy profile, 1M relations, 5M messages) vs bare node:http + pg; messages.send sustained"
export const pin = true

const SECRET = "relations bench: a server secret of 32+ characters"
const SCALE = Number(process.env.BENCH_RELATIONS_SCALE ?? "1")
const PROFILES = Math.round(100_000 * SCALE)
const RELATIONS = Math.round(1_000_000 * SCALE)
const THREADS = Math.round(500_000 * SCALE)
const MESSAGES_PER_THREAD = 10
const SENDERS = 100
// A change made with the session cookie must come from the service's own pages (README.md, the `Origin` rule).
const ORIGIN = "http://birzha.bench.test"

const profileUuid = (i) => `md5('p' || ${i})::uuid`
const sessionFor = async (client, index) => {
  const token = randomBytes(32).toString("base64url")
  const hash = createHmac("sha256", SECRET).update(`session\n${token}`).digest("base64url")
  await client.query(
    `INSERT INTO sessions (token_hash, account_uuid, profile_uuid, expires_at)
     VALUES ($1, md5('a' || $2)::uuid, md5('p' || $2)::uuid, now() + interval '1 day')`, [hash, index])
  return `__Host-birzha_session=${token}`
}

/** The data, in SQL: profile 0 is the busy one (1 % of the relations, a fifth of those deals). */
const generate = async (client, log) => {
  const step = async (label, sql) => {
    const t0 = Date.now()
    const result = await client.query(sql)
    log(`  seed: ${label}: ${result.rowCount ?? ""} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  }
  await step("accounts", `INSERT INTO accounts (uuid, email, current_profile_uuid)
    SELECT md5('a' || g)::uuid, 'bench' || g || '@bench.invalid', ${profileUuid("g")} FROM generate_series(0, ${PROFILES - 1}) g`)
  await step("profiles", `INSERT INTO profiles (uuid, id, account_uuid, name, type, is_public)
    SELECT ${profileUuid("g")}, 'bench' || g, md5('a' || g)::uuid, 'Профиль ' || g, 'Физлицо', true FROM generate_series(0, ${PROFILES - 1}) g`)
  // Relation g's parties come from p (a deal, g % 10 in 4 and 6, from its origin g - 1, an accepted
  // offer); every hundredth group of ten is the busy profile's.
  await step("relations", `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role,
      origin_relation_uuid, body, budget, created_at, updated_at)
    SELECT md5('r' || g)::uuid, kind, status,
      CASE WHEN busy AND (g / 1000) % 2 = 0 THEN ${profileUuid(0)} ELSE ${profileUuid("1 + (p * 7919) % " + (PROFILES - 1))} END,
      CASE WHEN busy AND (g / 1000) % 2 = 1 THEN ${profileUuid(0)} ELSE ${profileUuid("1 + (1 + (p * 7919) % " + (PROFILES - 1) + " + 1 + (p * 104729) % " + (PROFILES - 3) + ") % " + (PROFILES - 1))} END,
      role, CASE WHEN kind = 'deal' THEN md5('r' || (g - 1))::uuid END,
      'Условия сделки номер ' || g, (1000 + g % 50000) || ' ₽', t, t
    FROM (
      SELECT g, p, (g / 10) % 100 = 7 AS busy, now() - make_interval(secs => g) AS t,
        CASE g % 10 WHEN 0 THEN 'response' WHEN 1 THEN 'response' WHEN 2 THEN 'response' WHEN 3 THEN 'offer' WHEN 4 THEN 'deal'
          WHEN 5 THEN 'offer' WHEN 6 THEN 'deal' WHEN 7 THEN 'job_response' WHEN 8 THEN 'job_invitation' ELSE 'offer' END AS kind,
        CASE g % 10 WHEN 0 THEN 'pending' WHEN 1 THEN 'shortlisted' WHEN 2 THEN 'declined' WHEN 3 THEN 'accepted' WHEN 5 THEN 'accepted'
          WHEN 7 THEN 'applied' WHEN 8 THEN 'invited' WHEN 9 THEN 'pending'
          ELSE (ARRAY['active', 'results_submitted', 'completed', 'terminated'])[1 + (g / 10) % 4] END AS status,
        CASE g % 10 WHEN 0 THEN 'contractor' WHEN 1 THEN 'contractor' WHEN 2 THEN 'contractor' WHEN 7 THEN 'candidate'
          WHEN 8 THEN 'employer' ELSE 'customer' END AS role
      FROM (SELECT g, CASE WHEN g % 10 IN (4, 6) THEN g - 1 ELSE g END AS p FROM generate_series(1::bigint, ${RELATIONS}) g) s
    ) x`)
  await step("relation history", `INSERT INTO relation_history (relation_uuid, status, by_role, at)
    SELECT uuid, status, initiator_role, updated_at FROM relations`)
  // A thread for every other relation (odd g: never a deal), ten messages each.
  await step("threads", `INSERT INTO threads (uuid, relation_uuid, low_profile_uuid, high_profile_uuid, created_by_profile_uuid, last_message_at, revision, created_at)
    SELECT md5('t' || r.uuid)::uuid, r.uuid, least(r.initiator_profile_uuid, r.recipient_profile_uuid),
      greatest(r.initiator_profile_uuid, r.recipient_profile_uuid), r.initiator_profile_uuid, r.updated_at, ${MESSAGES_PER_THREAD + 1}, r.created_at
    FROM relations r WHERE r.uuid IN (SELECT md5('r' || (2 * t - 1))::uuid FROM generate_series(1, ${THREADS}) t)`)
  await step("thread participants", `INSERT INTO thread_participants (thread_uuid, profile_uuid, last_message_at)
    SELECT uuid, low_profile_uuid, last_message_at FROM threads UNION ALL SELECT uuid, high_profile_uuid, last_message_at FROM threads`)
  await step("messages", `INSERT INTO messages (thread_uuid, author_profile_uuid, body, created_at)
    SELECT t.uuid, CASE WHEN m % 2 = 0 THEN t.low_profile_uuid ELSE t.high_profile_uuid END, 'Сообщение ' || m || ' в переписке',
      t.created_at + make_interval(mins => m)
    FROM threads t CROSS JOIN generate_series(1, ${MESSAGES_PER_THREAD}) m`)
  // The busy profile's first thread gets a long history: 2000 messages more.
  await step("the busy thread", `INSERT INTO messages (thread_uuid, author_profile_uuid, body, created_at)
    SELECT t.uuid, CASE WHEN m % 2 = 0 THEN t.low_profile_uuid ELSE t.high_profile_uuid END, 'Длинная переписка, сообщение ' || m,
      t.created_at + make_interval(mins => ${MESSAGES_PER_THREAD} + m)
    FROM (SELECT t.* FROM threads t JOIN thread_participants p ON p.thread_uuid = t.uuid
      WHERE p.profile_uuid = ${profileUuid(0)} AND t.relation_uuid IS NOT NULL ORDER BY t.uuid LIMIT 1) t CROSS JOIN generate_series(1, 2000) m`)
  // The senders' threads (sender i with the busy profile), for messages.send.
  await step("senders' threads", `INSERT INTO threads (uuid, low_profile_uuid, high_profile_uuid, created_by_profile_uuid, created_at)
    SELECT md5('s' || i)::uuid, least(${profileUuid("i")}, ${profileUuid(0)}), greatest(${profileUuid("i")}, ${profileUuid(0)}), ${profileUuid("i")}, now()
    FROM generate_series(1, ${SENDERS}) i`)
  await step("senders' participants", `INSERT INTO thread_participants (thread_uuid, profile_uuid)
    SELECT md5('s' || i)::uuid, ${profileUuid("i")} FROM generate_series(1, ${SENDERS}) i
    UNION ALL SELECT md5('s' || i)::uuid, ${profileUuid(0)} FROM generate_series(1, ${SENDERS}) i`)
  await step("analyze", "ANALYZE")
}

export const run = async (ctx) => {
  const { log, options } = ctx
  log(`  scale ${SCALE}: ${PROFILES} profiles, ${RELATIONS} relations, ${THREADS} threads, ${THREADS * MESSAGES_PER_THREAD} messages`)
  const database = await benchDatabase(ctx, "relations")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_SECRET: SECRET, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const t0 = Date.now()
  const seeded = await withClient(database.url, async (client) => {
    await generate(client, log)
    const busy = await sessionFor(client, 0)
    const senders = []
    for (let i = 1; i <= SENDERS; i++) senders.push({ cookie: await sessionFor(client, i), thread: (await client.query("SELECT md5('s' || $1)::uuid AS u", [i])).rows[0].u })
    const { rows: [counts] } = await client.query(`SELECT
      (SELECT count(*)::int FROM relations WHERE ${profileUuid(0)} IN (initiator_profile_uuid, recipient_profile_uuid)) AS busy,
      (SELECT count(*)::int FROM relations WHERE kind = 'deal' AND ${profileUuid(0)} IN (initiator_profile_uuid, recipient_profile_uuid)) AS deals,
      (SELECT t.uuid FROM threads t JOIN thread_participants p ON p.thread_uuid = t.uuid WHERE p.profile_uuid = ${profileUuid(0)}
        AND t.relation_uuid IS NOT NULL ORDER BY t.uuid LIMIT 1) AS thread`)
    // The generated rows' dirty pages written out now, not by a checkpoint in the middle of a
    // measured run (it made every commit's WAL flush wait on the disk: the write runs, the
    // baseline's as much as the host's, were then bound by I/O).
    await client.query("CHECKPOINT")
    return { busy, senders, counts }
  })
  const seedSeconds = (Date.now() - t0) / 1000
  log(`  seeded in ${seedSeconds.toFixed(0)} s; the busy profile has ${seeded.counts.busy} relations, ${seeded.counts.deals} deals`)

  const port = await freePort()
  const baseline = await startProcess({
    label: "bare-relations",
    entry: join(repoRoot, "bench", "lib", "bare-relations-server.mjs"),
    args: [String(port), "127.0.0.1", database.url],
    env: { BENCH_SERVER_SECRET: SECRET },
    port,
    readyPath: "/__ready",
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => baseline.stop())

  const headers = { cookie: seeded.busy }
  const reads = [
    { label: "deals.list", path: "/api/v1/commands/deals.list" },
    { label: "threads.messages", path: `/api/v1/commands/threads.messages?threadUuid=${seeded.counts.thread}` }
  ]
  const results = {}
  for (const read of reads) {
    const [a, b] = await Promise.all([get(host.url + read.path, { headers }), get(baseline.url + read.path, { headers })])
    const items = (answer) => JSON.parse(answer.body).items?.length
    if (a.status !== 200 || b.status !== 200 || items(a) !== items(b) || items(a) === 0) {
      throw new Error(`${read.label}: host ${a.status} (${items(a)} items), baseline ${b.status} (${items(b)} items): ${a.body.toString().slice(0, 300)} ${b.body.toString().slice(0, 300)}`)
    }
    log(`\n  ${read.label}: host ${a.body.length} bytes, baseline ${b.body.length} bytes per page of 20`)
    const one = { connections: 1 }
    const single = []
    single.push(await ctx.measure({ ...one, label: `${read.label} baseline, 1 conn`, url: baseline.url + read.path, server: baseline, headers }))
    single.push(await ctx.measure({ ...one, label: `${read.label} host, 1 conn`, url: host.url + read.path, server: host, headers }))
    const many = []
    many.push(await ctx.measure({ label: `${read.label} baseline #1`, url: baseline.url + read.path, server: baseline, headers }))
    many.push(await ctx.measure({ label: `${read.label} host`, url: host.url + read.path, server: host, headers }))
    many.push(await ctx.measure({ label: `${read.label} baseline #2`, url: baseline.url + read.path, server: baseline, headers }))
    const base = ctx.meanRow(`${read.label} baseline (mean)`, [many[0], many[2]])
    ctx.printTable([...single, ...many, base])
    const ratio = many[1].requestsPerSecond / base.requestsPerSecond
    const p95 = single[1].latencyP95
    log(`  ${read.label}: host p95 at 1 connection ${p95.toFixed(2)} ms (target < 15 ms: ${p95 < 15 ? "met" : "NOT met"}); ` +
      `throughput host/baseline at ${options.connections} connections ${ratio.toFixed(2)} (target ≥ 0.5: ${ratio >= 0.5 ? "met" : "NOT met"})`)
    results[read.label] = { p95Ms: p95, baselineP95Ms: single[0].latencyP95, ratio, host: many[1], baseline: base }
  }

  // messages.send: 100 senders, a new requestUuid each, with a worker sequencing the events.
  const worker = spawn(process.execPath, [...commandFlags(), resolve(repoRoot, "packages/cli/dist/bin.js"), "worker"], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: database.url, BIRZHA_SECRET: SECRET },
    stdio: "ignore"
  })
  ctx.defer(() => new Promise((done) => { worker.once("exit", done); worker.kill("SIGTERM") }))
  const requests = [{
    method: "POST",
    path: "/api/v1/commands/messages.send",
    setupRequest: (req) => {
      const sender = seeded.senders[Math.floor(Math.random() * seeded.senders.length)]
      return {
        ...req,
        headers: { ...req.headers, cookie: sender.cookie, origin: ORIGIN, "content-type": "application/json" },
        body: JSON.stringify({ requestUuid: randomUUID(), threadUuid: sender.thread, body: "Добрый день! Отправляю обновлённый файл." })
      }
    }
  }]
  // One first, so that a refusal is reported as such rather than as a failed measurement.
  const probe = await fetch(`${host.url}/api/v1/commands/messages.send`, {
    method: "POST",
    headers: { cookie: seeded.senders[0].cookie, origin: ORIGIN, "content-type": "application/json" },
    body: JSON.stringify({ requestUuid: randomUUID(), threadUuid: seeded.senders[0].thread, body: "Проверка" })
  })
  if (probe.status !== 200) throw new Error(`messages.send answered ${probe.status}: ${(await probe.text()).slice(0, 300)}`)
  // The same load on the bare server running a send alone, one transaction per message (the host
  // commits concurrent sends together): what that design allows here.
  const bare = await ctx.measure({ label: "messages.send baseline", url: baseline.url, server: baseline, requests })
  const sent = await ctx.measure({ label: "messages.send host", url: host.url, server: host, requests })
  ctx.printTable([bare, sent])
  if (bare.non2xx > 0) throw new Error(`the baseline's messages.send failed ${bare.non2xx} times`)
  const drainStart = Date.now()
  const pending = async () => withClient(database.url, async (client) => (await client.query(
    "SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.received' AND position IS NULL")).rows[0].n)
  while ((await pending()) > 0 && Date.now() - drainStart < 60_000) await new Promise((r) => setTimeout(r, 100))
  const lagSeconds = (Date.now() - drainStart) / 1000
  const { sequenced, stored } = await withClient(database.url, async (client) => (await client.query(`SELECT
    (SELECT count(*)::int FROM outbox_events WHERE type = 'message.received' AND position IS NOT NULL) AS sequenced,
    (SELECT count(*)::int FROM messages m JOIN threads t ON t.uuid = m.thread_uuid WHERE t.relation_uuid IS NULL AND t.publication_uuid IS NULL
      AND m.created_at > now() - interval '1 hour') AS stored`)).rows[0])
  log(`  messages.send: ${sent.requestsPerSecond.toFixed(0)} /s sustained (target ≥ 1000: ${sent.requestsPerSecond >= 1000 ? "met" : "NOT met"}), ` +
    `p99 ${sent.latencyP99.toFixed(1)} ms, ${sent.non2xx} non-2xx; ${stored} messages stored, ${sequenced} events sequenced, ` +
    `the last one ${lagSeconds.toFixed(1)} s after the load ended; server CPU/req ${micros(sent.serverCpuPerRequest)}`)
  log(`  messages.send baseline (bare node:http + pg, one transaction per message): ${bare.requestsPerSecond.toFixed(0)} /s, server CPU/req ` +
    `${micros(bare.serverCpuPerRequest)}; host/baseline ${(sent.requestsPerSecond / bare.requestsPerSecond).toFixed(2)}`)
  return { scale: SCALE, seedSeconds, busy: seeded.counts, reads: results, send: { ...sent, stored, sequenced, lagSeconds, baseline: bare } }
}
