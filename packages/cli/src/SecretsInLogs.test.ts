import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { taskDraft } from "../../../testing/drafts.js"
import { sampleFiles } from "../../../testing/files.js"
import { freePort, patientHostEnv } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { parsePrometheusText, sampleValue } from "../../../testing/prometheus.js"
import { signIn } from "../../../testing/signIn.js"
import { type Receiver, startReceiver } from "../../../testing/webhookReceiver.js"

// The built command, as an operator runs it: `birzha serve` and `birzha worker` on one Postgres,
// every byte they write to stdout and stderr kept.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")

const spawned = new Set<ChildProcess>()
const start = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env["PATH"] ?? "", ...patientHostEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  spawned.add(child)
  let output = ""
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding("utf8")
    stream.on("data", (chunk: string) => {
      output += chunk
    })
  }
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}


let database: TestDatabase
let db: Pg.Client
let receiver: Receiver
let host: ReturnType<typeof start>
let worker: ReturnType<typeof start>
let url: string
let metricsUrl: string
let workerMetricsUrl: string
const secret = "secrets in logs: a server secret of at least 32 characters"

beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  database = await createTestDatabase("secrets_in_logs", { migrated: true })
  receiver = await startReceiver()
  const port = await freePort()
  const metricsPort = await freePort()
  const workerMetricsPort = await freePort()
  url = `http://localhost:${port}`
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
  workerMetricsUrl = `http://127.0.0.1:${workerMetricsPort}/metrics`
  const env = { DATABASE_URL: database.url, BIRZHA_SECRET: secret, BIRZHA_PORT: String(port), BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1" }
  host = start(["serve"], { ...env, BIRZHA_METRICS_PORT: String(metricsPort) })
  // Each process its own page, as on two machines.
  worker = start(["worker"], { ...env, BIRZHA_METRICS_PORT: String(workerMetricsPort) })
  await eventually(() => fetch(`${url}/api/readyz`).then((r) => r.status, () => 0), (status) => status === 200, "the host ready", { timeoutMs: 150_000 })
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  await db?.end()
  await receiver?.stop()
  await database?.drop()
})

const call = async (method: string, path: string, who: { cookie?: string; bearer?: string }, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      origin: url,
      ...(who.cookie === undefined ? {} : { cookie: who.cookie }),
      ...(who.bearer === undefined ? {} : { authorization: `Bearer ${who.bearer}` })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: (text === "" ? {} : JSON.parse(text)) as Record<string, any> }
}

describe("the host's metrics beside a worker", () => {
  it("count the webhook delivery the worker made, as the database holds it, and the requests that asked for it; the worker's own page its attempt", async () => {
    const scrapeOf = async (page: string) => parsePrometheusText(await (await fetch(page)).text())
    const scrape = () => scrapeOf(metricsUrl)
    const owner = await signIn({ url, origin: url, db })
    const before = await scrape()
    const succeeded = sampleValue(before, "birzha_webhook_deliveries", { status: "succeeded" }) ?? 0
    await eventually(() => fetch(workerMetricsUrl).then((r) => r.status, () => 0), (status) => status === 200, "the worker's metrics page")
    const workerBefore = await scrapeOf(workerMetricsUrl)
    const attempts = sampleValue(workerBefore, "birzha_webhook_attempts_total", { result: "succeeded" }) ?? 0

    const endpoint = await call("POST", "/api/v1/webhook-endpoints", owner, { requestUuid: randomUUID(), url: receiver.url, eventTypes: ["profile.updated"] })
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200)
    const { uuid, url: endpointUrl, revision } = endpoint.body["endpoint"]
    expect((await call("POST", `/api/v1/webhook-endpoints/${uuid}/approve`, owner, { url: endpointUrl, expectedRevision: revision })).status).toBe(200)
    expect((await call("POST", `/api/v1/webhook-endpoints/${uuid}/test`, owner, { requestUuid: randomUUID() })).status).toBe(200)
    await eventually(
      async () => (await db.query<{ status: string }>("SELECT status FROM webhook_deliveries WHERE endpoint_uuid = $1", [uuid])).rows[0]?.status,
      (status) => status === "succeeded",
      "the test delivery succeeded"
    )

    const after = await scrape()
    expect(sampleValue(after, "birzha_webhook_deliveries", { status: "succeeded" })).toBe(succeeded + 1)
    expect(sampleValue(after, "birzha_webhook_deliveries", { status: "pending" })).toBe(0)
    expect(sampleValue(after, "birzha_webhook_delivery_lag_seconds")).toBe(0)
    const requests = after.get("birzha_http_requests_total")!.samples
    const answered = (prefix: string) => requests.filter((sample) => sample.labels["operation"]!.startsWith(prefix) && sample.labels["status"] === "200")
    expect(answered("webhooks.").length, JSON.stringify(requests.map((sample) => sample.labels))).toBeGreaterThanOrEqual(3)

    // The worker counted the attempt it made and its time; the host, which made none, has no such series.
    const workerAfter = await scrapeOf(workerMetricsUrl)
    expect(sampleValue(workerAfter, "birzha_webhook_attempts_total", { result: "succeeded" })).toBe(attempts + 1)
    expect(sampleValue(workerAfter, "birzha_webhook_attempt_duration_seconds_count")).toBeGreaterThanOrEqual(1)
    expect(sampleValue(after, "birzha_webhook_attempts_total", { result: "succeeded" })).toBeUndefined()
    // Its statements and its pool, beside the same queue gauges the host shows.
    expect(sampleValue(workerAfter, "birzha_db_statement_duration_seconds_count")).toBeGreaterThan(0)
    expect(sampleValue(workerAfter, "birzha_db_pool_max_connections")).toBe(10)
    expect(sampleValue(workerAfter, "birzha_webhook_deliveries", { status: "succeeded" })).toBe(succeeded + 1)
  })
})

describe("logs", () => {
  it("hold none of the codes, tokens, keys, secrets and mail bodies that sign-in, keys, webhooks, approvals and uploads create", async () => {
    const created: Array<{ readonly what: string; readonly value: string }> = []
    const keep = (what: string, value: string) => {
      expect(value.length, what).toBeGreaterThan(0)
      created.push({ what, value })
    }

    // Sign-in by email: the code, the link's token and the whole message, then the session's token.
    const email = `secrets.${randomUUID()}@example.com`
    const started = await call("POST", "/api/v1/auth/email/start", {}, { email })
    expect(started.status).toBe(200)
    const mail = await eventually(
      async () => (await db.query<{ subject: string; text_body: string; html_body: string }>(
        "SELECT subject, text_body, html_body FROM development_mailbox WHERE to_address = $1", [email])).rows[0],
      (row) => row !== undefined,
      "the sign-in mail"
    )
    const code = mail!.text_body.match(/\b(\d{6})\b/)![1]!
    const linkToken = mail!.text_body.match(/token=([A-Za-z0-9_-]+)/)![1]!
    keep("sign-in code", code)
    keep("sign-in link token", linkToken)
    keep("mail subject", mail!.subject)
    for (const line of mail!.text_body.split("\n").filter((l) => l.trim().length > 12)) keep("mail body line", line.trim())
    keep("recipient address", email)
    const verified = await call("POST", "/api/v1/auth/email/verify", {}, { challengeUuid: started.body["challengeUuid"], code })
    expect(verified.status).toBe(200)
    const session = /__Host-birzha_session=([^;]+)/.exec(verified.headers.get("set-cookie") ?? "")![1]!
    keep("session token", session)
    const owner = { cookie: `__Host-birzha_session=${session}` }

    // A key: its secret, used as a bearer.
    const key = await call("POST", "/api/v1/keys", owner, {
      requestUuid: randomUUID(), name: "agent", scopes: ["tasks:write", "tasks:submit", "files:write"], httpEnabled: true, mcpEnabled: false
    })
    expect(key.status, JSON.stringify(key.body)).toBe(200)
    keep("key secret", key.body["secret"])
    const agent = { bearer: key.body["secret"] as string }

    // A webhook endpoint: its signing secret, signing the test delivery the worker sends.
    const endpoint = await call("POST", "/api/v1/webhook-endpoints", owner, { requestUuid: randomUUID(), url: receiver.url, eventTypes: ["profile.updated"] })
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200)
    keep("webhook signing secret", endpoint.body["secret"])
    const { uuid, url: endpointUrl, revision } = endpoint.body["endpoint"]
    expect((await call("POST", `/api/v1/webhook-endpoints/${uuid}/approve`, owner, { url: endpointUrl, expectedRevision: revision })).status).toBe(200)
    expect((await call("POST", `/api/v1/webhook-endpoints/${uuid}/test`, owner, { requestUuid: randomUUID() })).status).toBe(200)
    await eventually(() => receiver.received.length, (n) => n >= 1, "the signed test delivery")

    // A command that needs approval: prepared by the key, approved by the owner, committed by the key.
    const saved = await call("POST", "/api/v1/commands/tasks.save", agent, { requestUuid: randomUUID(), data: taskDraft })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const prepared = await call("POST", "/api/v1/integration-commands/prepare", agent, {
      operationId: "tasks.submit", arguments: { publicationUuid: saved.body["uuid"], expectedRevision: saved.body["revision"] }
    })
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200)
    const command = prepared.body["command"]
    expect((await call("POST", `/api/v1/integration-commands/${command.uuid}/decide`, owner, { decision: "approve" })).status).toBe(200)
    expect((await call("POST", `/api/v1/integration-commands/${command.uuid}/commit`, agent, {})).status).toBe(200)

    // An upload: the address's token, used to send the bytes.
    const png = sampleFiles["image/png"]
    const upload = await call("POST", "/api/v1/files/uploads", owner, {
      requestUuid: randomUUID(), name: "note.png", mimeType: "image/png", size: png.length, purpose: "avatar"
    })
    expect(upload.status, JSON.stringify(upload.body)).toBe(200)
    const address = String(upload.body["upload"]["url"])
    keep("upload token", decodeURIComponent(/token=([^&]+)/.exec(address)![1]!))
    const put = await fetch(address.replace(/^https?:\/\/[^/]+/, url), { method: "PUT", headers: { "content-type": "image/png" }, body: png })
    expect(put.status).toBeLessThan(300)

    // A wrong code and a wrong key are logged as refusals at most, never echoed.
    const wrong = await call("POST", "/api/v1/auth/email/start", {}, { email })
    const wrongCode = code === "000000" ? "111111" : "000000"
    await call("POST", "/api/v1/auth/email/verify", {}, { challengeUuid: wrong.body["challengeUuid"], code: wrongCode })
    await call("GET", "/api/v1/keys", { bearer: `${key.body["secret"]}x` })

    // Stopped as an operator stops them, so every line is flushed.
    host.child.kill("SIGTERM")
    worker.child.kill("SIGTERM")
    await Promise.all([host.exited, worker.exited])
    const logs = `${host.output()}\n${worker.output()}`
    expect(logs).toContain("Listening on")
    expect(logs).toContain("worker started")
    // Whole values only: a code's six digits inside a uuid or a number are not that code.
    for (const { value, what } of created) {
      const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      expect(new RegExp(`(?<![0-9A-Za-z])${escaped}(?![0-9A-Za-z])`).test(logs), `${what} appears in the logs`).toBe(false)
    }
  })
})
