// The publication page's Largest Contentful Paint in headless Chromium (budget 1 s), against a
// baseline in the same run: the same page's HTML, captured once from the host and served as
// static bytes by a bare node:http server that hands every other request (stylesheets, scripts,
// pictures) to the host. So the two differ only in how the HTML itself is made: the host renders
// it for each visit (its reads through the API over the loopback, React on the server), the
// baseline sends a file.
import { createServer, request } from "node:http"
import { chromium } from "playwright-core"
import { demoDatabase } from "./lib/demo-database.mjs"
import { get } from "./lib/processes.mjs"

export const name = "web-lcp"
export const description = "web application: publication page LCP in headless Chromium (budget 1 s) against the same HTML served static by node:http"

const PUBLICATIONS = 300
const VISITS = 15
const BUDGET_MS = 1000

/** A bare server: `html` at the page's path, everything else forwarded to the host as it is. */
const baseline = (hostUrl, path, html) =>
  new Promise((resolveServer) => {
    const target = new URL(hostUrl)
    const server = createServer((req, res) => {
      if (req.url === path) {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": html.length, "cache-control": "no-store" })
        res.end(html)
        return
      }
      const forwarded = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        }
      )
      forwarded.on("error", () => res.destroy())
      req.pipe(forwarded)
    })
    server.listen(0, "127.0.0.1", () => resolveServer({ server, url: `http://127.0.0.1:${server.address().port}` }))
  })

/** LCP of one first visit (a fresh context: nothing cached), in ms from navigation start, and the element it fell on. */
const visit = async (browser, url) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  await page.goto(url, { waitUntil: "load" })
  const lcp = await page.evaluate(() =>
    new Promise((resolveLcp) => {
      let last
      new PerformanceObserver((list) => {
        const entries = list.getEntries()
        last = entries[entries.length - 1]
      }).observe({ type: "largest-contentful-paint", buffered: true })
      // LCP is final once nothing paints larger; a short wait after load settles it (longer when none came yet).
      let waited = 0
      const settle = () => {
        waited += 250
        if (last === undefined && waited < 5000) return setTimeout(settle, 250)
        const paint = performance.getEntriesByName("first-contentful-paint")[0]
        // Where the time went: the HTML's first and last byte, the render-blocking stylesheets'
        // last byte, the scripts' last byte, first contentful paint, hydration done (the entry's mark).
        const navigation = performance.getEntriesByType("navigation")[0]
        const resources = performance.getEntriesByType("resource")
        const lastEnd = (kind) => Math.max(0, ...resources.filter((r) => kind(r)).map((r) => r.responseEnd))
        const phases = {
          ttfb: navigation?.responseStart ?? 0,
          html: navigation?.responseEnd ?? 0,
          css: lastEnd((r) => r.initiatorType === "link" && r.name.endsWith(".css")),
          js: lastEnd((r) => r.initiatorType === "script" || (r.initiatorType === "link" && r.name.endsWith(".js")) || r.initiatorType === "other"),
          fcp: paint?.startTime ?? 0,
          hydrated: performance.getEntriesByName("birzha:hydrated")[0]?.startTime ?? 0
        }
        resolveLcp(last === undefined
          ? { ms: null, fcp: paint?.startTime ?? null, visibility: document.visibilityState, title: document.title }
          : { ms: last.startTime, element: last.element?.tagName ?? "", phases })
      }
      setTimeout(settle, 500)
    })
  )
  await context.close()
  return lcp
}

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return { p50: sorted[Math.floor(sorted.length / 2)], p90: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))], max: sorted[sorted.length - 1] }
}

export const run = async (ctx) => {
  const { log } = ctx
  const database = await demoDatabase(ctx, { publications: PUBLICATIONS })
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url } })
  const { rows: [one] } = await database.query(
    `SELECT uuid FROM publications
     WHERE approved IS NOT NULL AND NOT hidden AND deleted_at IS NULL AND kind = 'service'
       AND jsonb_array_length(approved->'content'->'assets') >= 2
     ORDER BY approved_at DESC, uuid DESC LIMIT 1`
  )
  const path = `/p/${one.uuid}?lang=ru`
  const captured = await get(host.url + path, { timeoutMs: 30_000 })
  if (captured.status !== 200) throw new Error(`GET ${path} answered ${captured.status}`)
  const bare = await baseline(host.url, path, captured.body)
  const browser = await chromium.launch({
    executablePath: process.env.BIRZHA_CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
  try {
    // Warm both (the host's first render compiles and caches; the browser's first start is slow), then alternate.
    await visit(browser, host.url + path)
    await visit(browser, bare.url + path)
    const results = { host: [], baseline: [] }
    const phases = { host: [], baseline: [] }
    let element = ""
    for (let i = 0; i < VISITS; i++) {
      for (const [which, origin] of i % 2 === 0 ? [["host", host.url], ["baseline", bare.url]] : [["baseline", bare.url], ["host", host.url]]) {
        const lcp = await visit(browser, origin + path)
        if (lcp.ms === null) throw new Error(`no largest-contentful-paint entry on ${which}: ${JSON.stringify(lcp)}`)
        results[which].push(lcp.ms)
        phases[which].push(lcp.phases)
        if (which === "host") element = lcp.element
      }
    }
    const hostStats = stats(results.host)
    const baseStats = stats(results.baseline)
    log("")
    log(`  ${path}: ${captured.body.length} bytes of HTML, LCP element <${element.toLowerCase()}>; ${VISITS} first visits each, alternating, 1280×900:`)
    log(`  ${"server".padEnd(34)} ${"LCP p50 ms".padStart(11)} ${"p90 ms".padStart(8)} ${"max ms".padStart(8)}`)
    log(`  ${"host (server render)".padEnd(34)} ${hostStats.p50.toFixed(0).padStart(11)} ${hostStats.p90.toFixed(0).padStart(8)} ${hostStats.max.toFixed(0).padStart(8)}`)
    log(`  ${"baseline (same HTML, node:http)".padEnd(34)} ${baseStats.p50.toFixed(0).padStart(11)} ${baseStats.p90.toFixed(0).padStart(8)} ${baseStats.max.toFixed(0).padStart(8)}`)
    log("")
    log(`  where the time goes (p50 of each mark, ms from navigation start):`)
    const marks = ["ttfb", "html", "css", "js", "fcp", "hydrated"]
    log(`  ${"server".padEnd(34)} ${marks.map((mark) => mark.padStart(8)).join(" ")}`)
    const phaseStats = {}
    for (const which of ["host", "baseline"]) {
      phaseStats[which] = Object.fromEntries(marks.map((mark) => [mark, stats(phases[which].map((p) => p[mark])).p50]))
      log(`  ${which.padEnd(34)} ${marks.map((mark) => phaseStats[which][mark].toFixed(0).padStart(8)).join(" ")}`)
    }
    log("")
    log(`  publication page LCP p50: ${hostStats.p50.toFixed(0)} ms (budget ${BUDGET_MS} ms: ${hostStats.p90 <= BUDGET_MS ? "PASS" : "OVER"} at p90); ratio host/baseline ${(hostStats.p50 / baseStats.p50).toFixed(2)}`)
    return { path, htmlBytes: captured.body.length, element, host: hostStats, baseline: baseStats, ratio: hostStats.p50 / baseStats.p50, phases: phaseStats }
  } finally {
    await browser.close()
    await new Promise((done) => bare.server.close(done))
  }
}
