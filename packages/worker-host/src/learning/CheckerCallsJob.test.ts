import { sealSecret, ServerSecret, signingKey } from "@birzha/domain/internal"
import { Effect } from "effect"
import { createHmac, randomUUID } from "node:crypto"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runningCourse } from "../../../domain/test/learning.js"
import { bodyOf, type Marketplace, openMarketplace } from "../../../domain/test/marketplace.js"
import { makeLearningCheckerCallsJob } from "./CheckerCallsJob.js"

/**
 * Sample runs and variant generation end to end: a real HTTP receiver stands in for the course's
 * grader; the worker job signs each call with the checker's secret (Standard Webhooks) and sends
 * it through the SSRF guard; the learner reads the result, never the clue.
 */

let m: Marketplace
let receiver: http.Server
let port: number
const received: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }> = []
let answer: (path: string) => { status: number; body: unknown } = () => ({ status: 200, body: {} })

beforeAll(async () => {
  m = await openMarketplace("learning_checker_calls")
  receiver = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
      const reply = answer(req.url ?? "")
      res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify(reply.body))
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  port = (receiver.address() as AddressInfo).port
})
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve))
  await m?.close()
})

const ok = <A>(answer: { status: number; body: unknown }): A => {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200)
  return bodyOf<A>(answer as never)
}
const secret = "whsec_" + Buffer.from("a grader's secret of 32 bytes!!!").toString("base64")

const setup = async () => {
  const owner = await m.profile()
  const course = ok<{ uuid: string; revision: number }>(await m.invoke("learning.courses.create", owner, { payload: { requestUuid: randomUUID(), title: "Код", kind: "single" } }))
  const checkerUuid = randomUUID()
  const serverSecret = await m.runtime.runPromise(ServerSecret)
  await m.sql(`INSERT INTO learning_checkers (uuid, course_uuid, lineage_uuid, kind, url, generator_url, status, secret_sealed, timeout_ms)
    VALUES ($1, $2, $1, 'http', $3, $4, 'ready', $5, 5000)`,
    checkerUuid, course.uuid, `http://127.0.0.1:${port}/check`, `http://127.0.0.1:${port}/generate`, sealSecret(serverSecret, checkerUuid, secret))
  const nodes = [
    { nodeKey: "m1", kind: "module", title: "Модуль" },
    { nodeKey: "code", parentKey: "m1", kind: "step", stepType: "code", title: "Задача", body: "Напишите запрос", grading: { maxPoints: 10, checkerUuid }, variants: { mode: "generated" } }
  ]
  const { enrollment, learner } = await runningCourse(m, owner, course, nodes)
  return { learner, enrollment, checkerUuid }
}

const runWorker = (allowHttpLoopback: boolean) =>
  m.runtime.runPromise(Effect.scoped(Effect.flatMap(makeLearningCheckerCallsJob({ allowHttpLoopback }), (job) => job.run)))

describe("the learning checker-call worker", () => {
  it("signs a generation call, stores the clue server-only and shows the learner the dataset", async () => {
    const { enrollment, learner } = await setup()
    answer = (path) => (path === "/generate" ? { status: 200, body: { dataset: { rows: [1, 2, 3] }, clue: { answers: ["6"], secret: "CLUE-ONLY" } } } : { status: 404, body: {} })
    const job = ok<{ uuid: string }>(await m.invoke("learning.generated_variants.create", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID() } }))
    received.length = 0
    await runWorker(true)
    expect(received.map((r) => r.path)).toEqual(["/generate"])
    const call = received[0]!
    expect(call.headers["webhook-id"]).toBe(job.uuid)
    const expected = createHmac("sha256", signingKey(secret)).update(`${job.uuid}.${call.headers["webhook-timestamp"]}.${call.body}`).digest("base64")
    expect(call.headers["webhook-signature"]).toBe(`v1,${expected}`)
    expect(JSON.parse(call.body)).toMatchObject({ jobUuid: job.uuid, kind: "generate", nodeKey: "code" })
    const done = await m.invoke("learning.generated_variants.get", learner, { path: { job: job.uuid } })
    const view = await m.invoke("learning.steps.get", learner, { path: { enrollment, node: "code" } })
    expect(ok<{ status: string; result: { dataset: unknown } }>(done)).toMatchObject({ status: "succeeded", result: { dataset: { rows: [1, 2, 3] } } })
    expect(ok<{ variant: { dataset: unknown } }>(view).variant.dataset).toEqual({ rows: [1, 2, 3] })
    for (const body of [done.body, view.body]) expect(JSON.stringify(body)).not.toContain("CLUE-ONLY")
  })

  it("retries a sample run on 5xx and fails it after 3 tries; a 4xx fails at once; no attempt is ever used", async () => {
    const { enrollment, learner } = await setup()
    answer = () => ({ status: 502, body: {} })
    const sample = ok<{ uuid: string }>(await m.invoke("learning.sample_runs.create", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "SELECT 6" } }))
    for (let i = 0; i < 3; i++) {
      await runWorker(true)
      await m.sql("UPDATE learning_grading_jobs SET next_try_at = now() WHERE uuid = $1", sample.uuid)
    }
    const failed = ok<{ status: string; tries: number; platformError: string }>(await m.invoke("learning.sample_runs.get", learner, { path: { job: sample.uuid } }))
    expect([failed.status, failed.tries, failed.platformError]).toEqual(["failed", 3, "the checker answered 502"])
    answer = () => ({ status: 422, body: {} })
    const rejected = ok<{ uuid: string }>(await m.invoke("learning.sample_runs.create", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "x" } }))
    await runWorker(true)
    expect(ok<{ status: string; tries: number }>(await m.invoke("learning.sample_runs.get", learner, { path: { job: rejected.uuid } }))).toMatchObject({ status: "failed", tries: 1 })
    answer = () => ({ status: 200, body: { verdict: "accepted", cases: [{ name: "sample 1", passed: true }] } })
    const passing = ok<{ uuid: string }>(await m.invoke("learning.sample_runs.create", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "SELECT 6" } }))
    await runWorker(true)
    expect(ok<{ status: string; verdict: string }>(await m.invoke("learning.sample_runs.get", learner, { path: { job: passing.uuid } })))
      .toMatchObject({ status: "succeeded", verdict: "accepted", result: { cases: [{ name: "sample 1", passed: true }] } })
    expect(ok<{ attempts: { used: number } }>(await m.invoke("learning.steps.get", learner, { path: { enrollment, node: "code" } })).attempts.used).toBe(0)
  })

  it("refuses a checker on a loopback address through the SSRF guard (nothing is sent)", async () => {
    const { enrollment, learner } = await setup()
    answer = () => ({ status: 200, body: { verdict: "accepted" } })
    const sample = ok<{ uuid: string }>(await m.invoke("learning.sample_runs.create", learner, { path: { enrollment, node: "code" }, payload: { requestUuid: randomUUID(), reply: "x" } }))
    received.length = 0
    await runWorker(false)
    expect(received).toHaveLength(0)
    const [row] = await m.sql<{ status: string; platform_error: string }>("SELECT status, platform_error FROM learning_grading_jobs WHERE uuid = $1", sample.uuid)
    expect(row!.status).toBe("queued")
    expect(row!.platform_error).toMatch(/refused/)
  })
})
