// The web application's budgets (packages/web): the JavaScript a public page loads first, gzipped
// (its entry and the page's own chunks, as the HTML names them), and the host CPU one server render
// of the catalog takes at 10,000 publications, against the host CPU of the API read it is made of
// (`GET /api/v1/publications?limit=20`), in the same run on the same host.
import { gzipSync } from "node:zlib"
import { demoDatabase } from "./lib/demo-database.mjs"
import { get } from "./lib/processes.mjs"

export const name = "web-pages"
export const description = "web application: first-load JS of the public pages (gzip) and catalog SSR CPU per render at 10k publications"

const PUBLICATIONS = 10_000
const WARMUP = 10
const RENDERS = 60
/** Budgets the application is held to (packages/web/README.md). */
const JS_BUDGET_KB = 150
const SSR_BUDGET_MS = 50

const kb = (bytes) => bytes / 1024

/** The scripts a page's HTML makes the browser load before it is interactive: the entry and the preloaded chunks. */
const firstLoad = async (origin, path) => {
  const page = await get(origin + path, { timeoutMs: 30_000 })
  if (page.status !== 200) throw new Error(`GET ${path} answered ${page.status}`)
  const html = page.body.toString("utf8")
  const files = [
    ...[...html.matchAll(/<script type="module" src="([^"]+)"/g)].map((m) => m[1]),
    ...[...html.matchAll(/<link rel="modulepreload" href="([^"]+)"/g)].map((m) => m[1])
  ]
  const css = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1])
  const sizes = async (list) => {
    let raw = 0
    let gzip = 0
    for (const file of list) {
      const answer = await get(origin + file)
      if (answer.status !== 200) throw new Error(`GET ${file} answered ${answer.status}`)
      raw += answer.body.length
      gzip += gzipSync(answer.body, { level: 9 }).length
    }
    return { raw, gzip }
  }
  return { path, files: files.length, js: await sizes(files), css: await sizes(css), html: page.body.length, htmlGzip: gzipSync(page.body).length }
}

/** Host CPU per answer of `path`, answered one at a time: `RENDERS` answers after `WARMUP`. */
const cpuPerAnswer = async (host, path) => {
  for (let i = 0; i < WARMUP; i++) await get(host.url + path, { timeoutMs: 60_000 })
  const times = []
  const cpu0 = host.cpuSeconds()
  for (let i = 0; i < RENDERS; i++) {
    const t0 = process.hrtime.bigint()
    const answer = await get(host.url + path, { timeoutMs: 60_000 })
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}`)
  }
  const cpuMs = ((host.cpuSeconds() - cpu0) / RENDERS) * 1000
  times.sort((a, b) => a - b)
  return { path, cpuMs, p50: times[Math.floor(times.length / 2)], max: times[times.length - 1] }
}

export const run = async (ctx) => {
  const { log } = ctx
  const database = await demoDatabase(ctx, { publications: PUBLICATIONS })
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })
  const { rows } = await database.query(
    `SELECT uuid, owner_profile_uuid AS owner FROM publications
     WHERE approved IS NOT NULL AND NOT hidden AND deleted_at IS NULL AND kind = 'service' ORDER BY approved_at DESC LIMIT 1`
  )
  const [one] = rows
  const { rows: [{ n }] } = await database.query("SELECT count(*)::int AS n FROM publications WHERE approved IS NOT NULL")

  const pages = [
    await firstLoad(host.url, "/?lang=ru"),
    await firstLoad(host.url, "/catalog?lang=ru"),
    await firstLoad(host.url, `/p/${one.uuid}?lang=ru`),
    await firstLoad(host.url, `/u/${one.owner}?lang=ru`)
  ]
  log("")
  log(`  first load of a public page (gzip -9; budget ${JS_BUDGET_KB} KB of JS):`)
  log(`  ${"page".padEnd(48)} ${"JS files".padStart(8)} ${"JS KB".padStart(8)} ${"JS gzip KB".padStart(11)} ${"CSS gzip KB".padStart(12)} ${"HTML gzip KB".padStart(13)}`)
  for (const p of pages) {
    log(`  ${p.path.slice(0, 48).padEnd(48)} ${String(p.files).padStart(8)} ${kb(p.js.raw).toFixed(1).padStart(8)} ${kb(p.js.gzip).toFixed(1).padStart(11)} ${kb(p.css.gzip).toFixed(1).padStart(12)} ${kb(p.htmlGzip).toFixed(1).padStart(13)}`)
  }
  const worstJs = Math.max(...pages.map((p) => p.js.gzip))

  const api = await cpuPerAnswer(host, "/api/v1/publications?limit=20")
  const catalog = await cpuPerAnswer(host, "/catalog?lang=ru")
  const search = await cpuPerAnswer(host, `/catalog?lang=ru&q=${encodeURIComponent("сайт")}`)
  log("")
  log(`  server render at ${n} approved publications, one request at a time (${RENDERS} after ${WARMUP} warm-ups):`)
  log(`  ${"request".padEnd(40)} ${"host CPU ms".padStart(12)} ${"p50 ms".padStart(8)} ${"max ms".padStart(8)}`)
  for (const r of [api, catalog, search]) {
    log(`  ${r.path.slice(0, 40).padEnd(40)} ${r.cpuMs.toFixed(2).padStart(12)} ${r.p50.toFixed(1).padStart(8)} ${r.max.toFixed(1).padStart(8)}`)
  }
  log("")
  log(`  first-load JS, worst public page: ${kb(worstJs).toFixed(1)} KB gzip (budget ${JS_BUDGET_KB} KB)`)
  log(`  catalog render: ${catalog.cpuMs.toFixed(2)} ms host CPU (budget ${SSR_BUDGET_MS} ms), ${(catalog.cpuMs / api.cpuMs).toFixed(1)}× the API read it shows`)
  return { publications: n, pages, worstJsGzip: worstJs, api, catalog, search }
}
