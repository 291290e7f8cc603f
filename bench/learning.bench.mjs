// Learning: publishing a 500-node course and reading it with learning.courses.get
// (target p95 < 20 ms at one connection), and the public catalog learning.courses.list with `q`
// among 10k published courses (target p95 < 25 ms at one connection), each against
// bench/lib/bare-learning-server.mjs, a bare node:http + pg server running the same statements,
// in the same run (order: baseline, host, baseline). The 10k courses (with their owners, linked
// approved training publications, versions and owner assignments) are generated in SQL; the
// 500-node course is created, filled and published through the host by a signed-in session.
import { join } from "node:path"
import { benchDatabase, signInOnHost, withClient } from "./lib/database.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { freePort, get, repoRoot, startProcess } from "./lib/processes.mjs"

export const name = "learning"
export const description = "learning.courses.get of a 500-node course, learning.courses.list with q among 10k courses, vs bare node:http + pg"
export const pin = true

const COURSES = 10_000
const OWNERS = 1_000
const NODES = 500
const PUBLISHES = 5
const ORIGIN = "http://localhost:8080"
const TARGETS = { get: 20, list: 25 }

const topics = ["Python", "SQL", "Excel", "Маркетинг", "Дизайн интерфейсов", "Аналитика данных", "Продажи", "Английский язык", "Бухгалтерия", "Фотография"]
const levels = ["для начинающих", "продвинутый уровень", "практикум", "интенсив"]
const sqlArray = (values) => `ARRAY[${values.map((v) => `'${v}'`).join(", ")}]`

const generate = async (client, log) => {
  const step = async (label, sql) => {
    const t0 = Date.now()
    const result = await client.query(sql)
    log(`  seed: ${label}: ${result.rowCount ?? ""} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  }
  const owner = (g) => `md5('lp' || (${g} % ${OWNERS}))::uuid`
  const title = (c) => `'Курс: ' || (${sqlArray(topics)})[${c} % ${topics.length} + 1] || ' ' || (${sqlArray(levels)})[(${c} / ${topics.length}) % ${levels.length} + 1] || ' №' || ${c}`
  await step("accounts", `INSERT INTO accounts (uuid, email, current_profile_uuid)
    SELECT md5('la' || g)::uuid, 'learn' || g || '@bench.invalid', ${owner("g")} FROM generate_series(0, ${OWNERS - 1}) g`)
  await step("profiles", `INSERT INTO profiles (uuid, id, account_uuid, name, type, is_public)
    SELECT ${owner("g")}, 'learn' || g, md5('la' || g)::uuid, 'Школа ' || g, 'Компания', true FROM generate_series(0, ${OWNERS - 1}) g`)
  const nodes = `'[{"nodeKey":"m1","kind":"module","title":"Введение"},{"nodeKey":"s1","parentKey":"m1","kind":"step","stepType":"text","title":"О курсе","body":"Текст"}]'::jsonb`
  await step("publications", `INSERT INTO publications (uuid, id, kind, owner_profile_uuid, status, draft, approved, approved_at, revision)
    SELECT md5('lpub' || c)::uuid, 'lpub-' || c, 'training', ${owner("c")}, 'approved', jsonb_build_object('title', ${title("c")}),
      jsonb_build_object('title', ${title("c")}), now() - make_interval(secs => c * 60), 3
    FROM generate_series(0, ${COURSES - 1}) c`)
  await step("courses", `INSERT INTO learning_courses (uuid, owner_profile_uuid, title, summary, kind, visibility, status, publication_uuid, nodes,
      metadata, latest_version, published_at, revision)
    SELECT md5('lc' || c)::uuid, ${owner("c")}, ${title("c")}, 'Практический курс с заданиями и проверкой', 'single', 'listed', 'published',
      md5('lpub' || c)::uuid, ${nodes}, jsonb_build_object('level', (ARRAY['beginner', 'intermediate', 'advanced'])[c % 3 + 1]), 1,
      now() - make_interval(secs => c * 60), 3
    FROM generate_series(0, ${COURSES - 1}) c`)
  const outline = `'[{"nodeKey":"m1","kind":"module","title":"Введение"},{"nodeKey":"s1","parentKey":"m1","kind":"step","stepType":"text","title":"О курсе"}]'::jsonb`
  await step("versions", `INSERT INTO learning_course_versions (course_uuid, number, content_hash, title, summary, nodes, outline, published_by, published_at)
    SELECT uuid, 1, md5(uuid::text), title, summary, nodes, ${outline}, owner_profile_uuid, published_at FROM learning_courses`)
  await step("owners", `INSERT INTO learning_staff (uuid, course_uuid, profile_uuid, role, status)
    SELECT md5('ls' || uuid::text)::uuid, uuid, owner_profile_uuid, 'owner', 'active' FROM learning_courses`)
  await step("analyze", "VACUUM ANALYZE learning_courses, learning_course_versions, publications, profiles, accounts")
}

/** 50 modules of 9 steps and 50 modules: 500 nodes, graded steps among them. */
const bigTree = () => {
  const nodes = []
  for (let m = 1; nodes.length < NODES; m++) {
    nodes.push({ nodeKey: `m${m}`, kind: "module", title: `Модуль ${m}` })
    for (let s = 1; s <= 9 && nodes.length < NODES; s++) {
      nodes.push(s % 3 === 0
        ? { nodeKey: `m${m}-s${s}`, parentKey: `m${m}`, kind: "step", stepType: "quiz", title: `Тест ${m}.${s}`, grading: { maxPoints: 10, passThreshold: 6, attempts: 3 }, dueOffsetDays: m }
        : { nodeKey: `m${m}-s${s}`, parentKey: `m${m}`, kind: "step", stepType: "text", title: `Урок ${m}.${s}`, body: `Материал урока ${m}.${s}. `.repeat(20), unlockOffsetDays: m - 1 })
    }
  }
  return nodes
}

const call = hostCall(ORIGIN)

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx, "learning")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  await withClient(database.url, (client) => generate(client, log))

  // The 500-node course, through the host: create, fill, publish (timed), so versions 1..PUBLISHES exist.
  const { cookie } = await signInOnHost(host.url, database.url, ORIGIN)
  let course = await call(host.url, cookie, "POST", "/api/v1/learning/courses", { requestUuid: crypto.randomUUID(), title: "Большой курс", kind: "single" })
  course = await call(host.url, cookie, "PATCH", `/api/v1/learning/courses/${course.uuid}`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, nodes: bigTree() })
  const publishMs = []
  for (let i = 0; i < PUBLISHES; i++) {
    const t0 = process.hrtime.bigint()
    await call(host.url, cookie, "POST", `/api/v1/learning/courses/${course.uuid}/publish`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, changelog: `v${i + 1}` })
    publishMs.push(Number(process.hrtime.bigint() - t0) / 1e6)
    course = await call(host.url, cookie, "GET", `/api/v1/learning/author/courses/${course.uuid}`)
  }
  publishMs.sort((a, b) => a - b)
  log(`  publish of a ${NODES}-node course (${PUBLISHES} times): median ${publishMs[Math.floor(PUBLISHES / 2)].toFixed(1)} ms, max ${publishMs[PUBLISHES - 1].toFixed(1)} ms`)

  const port = await freePort()
  const baseline = await startProcess({
    label: "bare-learning",
    entry: join(repoRoot, "bench", "lib", "bare-learning-server.mjs"),
    args: [String(port), "127.0.0.1", database.url],
    port,
    readyPath: "/__ready",
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => baseline.stop())

  const reads = [
    { key: "get", label: "learning.courses.get (500 nodes)", path: `/api/v1/learning/courses/${course.uuid}`, count: (body) => body.outline.length },
    { key: "list", label: "learning.courses.list q=python", path: `/api/v1/learning/courses?q=${encodeURIComponent("python начинающих")}`, count: (body) => body.items.length }
  ]
  const results = {}
  for (const read of reads) {
    const [a, b] = await Promise.all([get(host.url + read.path), get(baseline.url + read.path)])
    const counted = (answer) => read.count(JSON.parse(answer.body))
    if (a.status !== 200 || b.status !== 200 || counted(a) !== counted(b) || counted(a) === 0) {
      throw new Error(`${read.label}: host ${a.status}, baseline ${b.status}: ${a.body.toString().slice(0, 300)} ${b.body.toString().slice(0, 300)}`)
    }
    log(`\n  ${read.label}: host ${a.body.length} bytes, baseline ${b.body.length} bytes, ${counted(a)} items`)
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
    const target = TARGETS[read.key]
    log(`  ${read.label}: host p95 at 1 connection ${p95.toFixed(2)} ms (target < ${target} ms: ${p95 < target ? "met" : "NOT met"}); ` +
      `baseline p95 ${single[0].latencyP95.toFixed(2)} ms; throughput host/baseline ${ratio.toFixed(2)}`)
    results[read.key] = { p95Ms: p95, baselineP95Ms: single[0].latencyP95, ratio, host: many[1], baseline: base }
  }
  return { courses: COURSES, nodes: NODES, publishMs, reads: results }
}
