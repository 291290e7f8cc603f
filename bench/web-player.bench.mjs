// The course player's step switch in headless Chromium (budget 100 ms): a learner in a 200-step
// course (20 modules of 10 steps, text steps and quizzes with attempts, the learner's progress on
// half of them) clicks step after step in the player's tree; each switch is timed in the page, from
// the click to the frame after the new step's title is in the document (the player reads the step
// from the browser and renders it in place: PlayerPage.tsx, readStep). Against a baseline in the
// same run and the same page: the reads the switch makes (learning.steps.get and
// learning.submissions.history at once, then the latest attempt's appeals; the tree's states and the
// progress read beside them, not waited for), made with fetch and nothing rendered, so the ratio is
// what the player adds to its reads. For comparison, the same
// step opened by a full navigation (the server renders the page: what a click with a modifier, or
// one before the page's script runs, does).
import { chromium } from "playwright-core"
import { benchDatabase, signInOnHost, withClient } from "./lib/database.mjs"
import { hostCall } from "./lib/host-call.mjs"
import { get } from "./lib/processes.mjs"

export const name = "web-player"
export const description = "course player: step switch in place in headless Chromium at a 200-step course (budget 100 ms), vs the reads it makes"

const STEPS = 200
const SWITCHES = 40
const BUDGET_MS = 100
const ORIGIN = "http://localhost:8080"

const call = hostCall(ORIGIN)

/** 20 modules of 10 steps: text steps and, every fourth, a quiz with three attempts. */
const tree = () => {
  const nodes = []
  for (let m = 1; nodes.filter((n) => n.kind === "step").length < STEPS; m++) {
    nodes.push({ nodeKey: `m${m}`, kind: "module", title: `Модуль ${m}` })
    for (let s = 1; s <= 10; s++) {
      nodes.push(s % 4 === 0
        ? {
          nodeKey: `m${m}-s${s}`, parentKey: `m${m}`, kind: "step", stepType: "quiz", title: `Тест ${m}.${s}`, body: `Сколько будет ${m} + ${s}?`,
          grading: { maxPoints: 10, attempts: 3, check: { kind: "exact", answers: [String(m + s)] } }, dueOffsetDays: m + 7
        }
        : { nodeKey: `m${m}-s${s}`, parentKey: `m${m}`, kind: "step", stepType: "text", title: `Урок ${m}.${s}`, body: `Материал урока ${m}.${s}. `.repeat(20), dueOffsetDays: m + 3 })
    }
  }
  return nodes
}

/** One switch in place: the tree's link to `href` clicked, until the frame after the step's title shows `title`; ms. */
const switchTo = (page, href, title) =>
  page.evaluate(async ({ href, title }) => {
    const link = [...document.querySelectorAll(".player__tree a")].find((a) => a.getAttribute("href") === href)
    const started = performance.now()
    link.click()
    while (document.querySelector("#step-title")?.textContent !== title) {
      if (performance.now() - started > 30_000) throw new Error(`no switch to ${title}`)
      await new Promise((resolve) => requestAnimationFrame(resolve))
    }
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)))
    return performance.now() - started
  }, { href, title })

/** The baseline: the reads a switch to `node` makes, with fetch from the page, nothing rendered; ms. */
const readsOf = (page, enrollment, node) =>
  page.evaluate(async ({ enrollment, node }) => {
    const read = async (path) => {
      const answer = await fetch(path, { headers: { accept: "application/json" } })
      if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`)
      return answer.json()
    }
    const started = performance.now()
    const base = `/api/v1/learning/enrollments/${enrollment}/steps/${node}`
    // The tree's states and the progress, read beside the step (the page does not wait for them).
    const progress = Promise.all([read(`/api/v1/learning/enrollments/${enrollment}/calendar`), read(`/api/v1/learning/enrollments/${enrollment}/completion`)])
    const [, history] = await Promise.all([read(base), read(`${base}/submissions?limit=20`)])
    if (history.items[0] !== undefined) await read(`/api/v1/learning/submissions/${history.items[0].uuid}/appeals`)
    const ms = performance.now() - started
    await progress
    return ms
  }, { enrollment, node })

/** A full navigation to the step (the server renders it): navigation start to first contentful paint, ms. */
const navigateTo = async (page, url) => {
  await page.goto(url, { waitUntil: "load" })
  await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0)
  return page.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0].startTime)
}

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return { p50: sorted[Math.floor(sorted.length / 2)], p95: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)], max: sorted[sorted.length - 1] }
}

export const run = async (ctx) => {
  const { log } = ctx
  const database = await benchDatabase(ctx, "player")
  const host = await ctx.startHost({ env: { DATABASE_URL: database.url, BIRZHA_PUBLIC_ORIGIN: ORIGIN } })
  const owner = await signInOnHost(host.url, database.url, ORIGIN)
  let course = await call(host.url, owner.cookie, "POST", "/api/v1/learning/courses", { requestUuid: crypto.randomUUID(), title: "Курс на 200 шагов", kind: "single" })
  course = await call(host.url, owner.cookie, "PATCH", `/api/v1/learning/courses/${course.uuid}`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, nodes: tree() })
  await call(host.url, owner.cookie, "POST", `/api/v1/learning/courses/${course.uuid}/publish`, { requestUuid: crypto.randomUUID(), expectedRevision: course.revision, changelog: "" })
  let runRecord = await call(host.url, owner.cookie, "POST", `/api/v1/learning/courses/${course.uuid}/runs`, {
    requestUuid: crypto.randomUUID(), versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 86_400_000).toISOString(), admission: "open",
    waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
  })
  runRecord = await call(host.url, owner.cookie, "PATCH", `/api/v1/learning/runs/${runRecord.uuid}`, { requestUuid: crypto.randomUUID(), expectedRevision: runRecord.revision, publish: true })
  // The run clock's work (the worker's learning_runs job): the run is under way.
  await withClient(database.url, (client) => client.query("UPDATE learning_runs SET status = 'running' WHERE uuid = $1", [runRecord.uuid]))
  const learner = await signInOnHost(host.url, database.url, ORIGIN)
  const enrollment = await call(host.url, learner.cookie, "POST", `/api/v1/learning/runs/${runRecord.uuid}/enroll`, { requestUuid: crypto.randomUUID() })
  // Progress on the first half: text steps marked done, quizzes answered (some wrongly), so the tree shows every state.
  const steps = tree().filter((node) => node.kind === "step")
  for (const [index, step] of steps.slice(0, STEPS / 2).entries()) {
    const path = `/api/v1/learning/enrollments/${enrollment.uuid}/steps/${step.nodeKey}`
    if (step.stepType === "quiz") {
      await call(host.url, learner.cookie, "POST", `${path}/submit`, {
        requestUuid: crypto.randomUUID(), reply: index % 3 === 0 ? "0" : step.grading.check.answers[0]
      })
    } else {
      await call(host.url, learner.cookie, "POST", `${path}/acknowledge`, { requestUuid: crypto.randomUUID() })
    }
  }

  const base = `/learning/${enrollment.uuid}`
  const first = await get(`${host.url}${base}?lang=ru`, { headers: { cookie: learner.cookie }, timeoutMs: 60_000 })
  const firstHtml = first.body.toString("utf8")
  const hrefs = [...new Set([...firstHtml.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1].replaceAll("&amp;", "&"))
    .filter((href) => href.startsWith(base + "?") && href.includes("step=")))]
  if (first.status !== 200 || hrefs.length !== STEPS) throw new Error(`player: ${first.status}, ${hrefs.length} step links: ${firstHtml.slice(0, 400)}`)
  const titles = steps.map((step) => step.title)
  const visits = Array.from({ length: SWITCHES + 1 }, (_, i) => ({ href: hrefs[(i * 7) % STEPS], title: titles[(i * 7) % STEPS] }))

  const browser = await chromium.launch({
    executablePath: process.env.BIRZHA_CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: { cookie: learner.cookie } })
    const page = await context.newPage()
    await page.goto(host.url + visits[0].href, { waitUntil: "load" })
    await page.waitForFunction(() => performance.getEntriesByName("birzha:hydrated").length > 0)
    log(`\n  player: ${STEPS} steps, the page ${(first.body.length / 1024).toFixed(0)} KiB of HTML; ${SWITCHES} switches, each with the baseline's reads beside it`)
    // Alternating: a switch, then the next step's reads; the first three of each are warm-up.
    const switches = []
    const reads = []
    for (let i = 1; i <= SWITCHES; i++) {
      const node = visits[i].href.match(/step=([^&]+)/)[1]
      switches.push(await switchTo(page, visits[i].href, visits[i].title))
      // The tree's states and progress, read after the step is shown, land before the next measurement.
      await page.waitForLoadState("networkidle")
      reads.push(await readsOf(page, enrollment.uuid, decodeURIComponent(node)))
    }
    if (!page.url().endsWith(visits[SWITCHES].href)) throw new Error(`the address after the switches is ${page.url()}`)
    const navigations = []
    for (let i = 1; i <= 10; i++) navigations.push(await navigateTo(page, host.url + visits[i].href))
    await context.close()
    const s = stats(switches.slice(3))
    const r = stats(reads.slice(3))
    const n = stats(navigations.slice(2))
    log(`  step switch in place (click → the new step shown): p50 ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`)
    log(`  baseline, the switch's reads alone (fetch, nothing rendered): p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms; switch/reads p50 ${(s.p50 / r.p50).toFixed(2)}, p95 ${(s.p95 / r.p95).toFixed(2)}`)
    log(`  for comparison, a full navigation to a step (server-rendered, to first contentful paint): p50 ${n.p50.toFixed(1)} ms, p95 ${n.p95.toFixed(1)} ms`)
    log(`  step switch p95 ${s.p95.toFixed(1)} ms (budget ≤ ${BUDGET_MS} ms: ${s.p95 <= BUDGET_MS ? "met" : "NOT met"})`)
    return { steps: STEPS, switches: s, reads: r, navigation: n, ratioP50: s.p50 / r.p50, ratioP95: s.p95 / r.p95, budgetMs: BUDGET_MS, met: s.p95 <= BUDGET_MS }
  } finally {
    await browser.close()
  }
}
