// The teaching pages' budget (packages/web, /teaching): the course's dashboard and its review
// queue rendered on the server for the owner of a course with 5,000 learners and 50,000
// submissions (the scene of learning-teaching.bench.mjs: 2,000 staff reviews waiting in the pool,
// learners whose profiles are not public), target p95 ≤ 300 ms at one connection, against the
// API read each page starts from (learning.teaching.get, learning.reviews.assignment_list with the
// page's filter and size), on the same host in the same run.
import { teachingScene } from "./learning-teaching.bench.mjs"
import { get } from "./lib/processes.mjs"

export const name = "web-teaching"
export const description = "teaching dashboard and review queue pages (SSR) at 5,000 learners, vs the API reads they start from"
export const pin = true

/** The budget: the teaching dashboard and the review queue render in 300 ms or less. */
const TARGET_MS = 300

export const run = async (ctx) => {
  const { log } = ctx
  const { host, owner, course } = await teachingScene(ctx, "web_teaching")
  const headers = { cookie: owner.cookie }
  const pages = [
    {
      label: "teaching dashboard page",
      page: `/teaching/${course.uuid}?lang=ru`,
      api: `/api/v1/learning/teaching/courses/${course.uuid}`,
      check: (html) => html.includes(`/teaching/${course.uuid}/reviews?`)
    },
    {
      label: "review queue page (pooled, 50 a page)",
      page: `/teaching/${course.uuid}/reviews?status=pooled&lang=ru`,
      api: `/api/v1/learning/courses/${course.uuid}/review-assignments?status=pooled&limit=50`,
      check: (html) => (html.match(/data-submission=/g) ?? []).length === 50
    }
  ]
  const results = {}
  for (const { label, page, api, check } of pages) {
    const answer = await get(host.url + page, { headers, timeoutMs: 60_000 })
    const html = answer.body.toString("utf8")
    if (answer.status !== 200 || !check(html)) throw new Error(`${label}: ${answer.status} ${html.slice(0, 400)}`)
    const read = await ctx.measure({ connections: 1, label: `${label}: API read, 1 conn`, url: host.url + api, server: host, headers })
    const rendered = await ctx.measure({ connections: 1, label: `${label}, 1 conn`, url: host.url + page, server: host, headers })
    ctx.printTable([read, rendered])
    const p95 = rendered.latencyP95
    log(`  ${label}: p95 ${p95.toFixed(1)} ms (target ≤ ${TARGET_MS} ms: ${p95 <= TARGET_MS ? "met" : "NOT met"}); ` +
      `its API read p95 ${read.latencyP95.toFixed(1)} ms (page/read ${(p95 / read.latencyP95).toFixed(2)})`)
    results[label] = { p95Ms: p95, apiP95Ms: read.latencyP95, ratio: p95 / read.latencyP95, page: rendered, api: read }
  }
  return results
}
