import { sealSecret } from "@birzha/domain/internal"
import { Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { type Receiver, startReceiver } from "../../../testing/webhookReceiver.js"
import { runCli } from "./testCli.js"

// The built command, as an operator runs it; `pnpm test` builds before running the tests.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")
const serverSecret = "cli webhook tests: a server secret of at least 32 characters"

const birzha = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child: ChildProcess = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env["PATH"] ?? "", BIRZHA_SECRET: serverSecret, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

let database: TestDatabase
let db: Pg.Client
let receiver: Receiver
beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  database = await createTestDatabase("cli_webhooks", { migrated: true })
  expect((await runCli(["migrate"], { DATABASE_URL: database.url })).code).toBe(0)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.stop()
  await db?.end()
  await database?.drop()
})

/** A profile with an active endpoint at the receiver (approved and tested, as the API would leave it). */
const activeEndpoint = async (signingSecret: string) => {
  const { rows: [account] } = await db.query<{ uuid: string }>(
    "INSERT INTO accounts (email) VALUES ($1) RETURNING uuid", [`cli.webhooks.${Date.now()}@example.com`])
  const { rows: [profile] } = await db.query<{ uuid: string }>(
    "INSERT INTO profiles (id, account_uuid, name, type) VALUES ($1, $2, 'Получатель', 'Физлицо') RETURNING uuid",
    [`cli${Date.now()}`.slice(0, 12), account!.uuid])
  const uuid = crypto.randomUUID()
  await db.query(
    `INSERT INTO webhook_endpoints (uuid, profile_uuid, url, event_types, payload_mode, secret_sealed, approved_at, verified_at, after_position)
     VALUES ($1, $2, $3, '["profile.updated"]'::jsonb, 'reference', $4, now(), now(), (SELECT last_position FROM event_sequence))`,
    [uuid, profile!.uuid, receiver.url, sealSecret(Redacted.make(serverSecret), uuid, signingSecret)])
  return { uuid, profileUuid: profile!.uuid }
}

const emit = async (profileUuid: string, count: number) => {
  const { rows } = await db.query<{ uuid: string }>(
    `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
     SELECT 'profile.updated', 'profile', $1::uuid, g, jsonb_build_object('objectUuid', $1::text, 'status', 'updated'),
       jsonb_build_object('profileUuid', $1::text)
     FROM generate_series(1, $2::int) g RETURNING uuid`, [profileUuid, count])
  return rows.map((row) => row.uuid)
}


describe("webhook delivery by the worker process", () => {
  it("loses nothing when the worker is killed (kill -9) in the middle of deliveries; repeats keep their webhook-id", async () => {
    const signingSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`
    const { profileUuid, uuid } = await activeEndpoint(signingSecret)
    // A slow receiver, so many attempts are in flight when the worker dies.
    receiver.answerWith((_req, res) => {
      setTimeout(() => res.end("ok"), 150)
    })
    const env = { DATABASE_URL: database.url, BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1" }
    const first = birzha(["worker"], env)
    const events = await emit(profileUuid, 300)
    let second: ReturnType<typeof birzha> | undefined
    try {
      await receiver.until((all) => all.length >= 60, 120_000)
      first.child.kill("SIGKILL")
      expect(await first.exited).toBe(null)
      const atKill = new Set(receiver.ids())
      const { rows: [inFlight] } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_uuid = $1 AND status = 'pending' AND lease_until > now()", [uuid])
      expect(inFlight!.n).toBeGreaterThan(0)
      expect(events.filter((id) => !atKill.has(id)).length).toBeGreaterThan(0)
      second = birzha(["worker"], env)
      // Leases of the dead worker run out (30 s), then its deliveries are sent again.
      await receiver.until((all) => {
        const got = new Set(all.map((x) => String(x.headers["webhook-id"])))
        return events.every((id) => got.has(id))
      }, 90_000)
      await eventually(async () => {
        const { rows } = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_uuid = $1 AND status = 'succeeded'", [uuid])
        return rows[0]!.n
      }, (n) => n === 300, "every delivery to succeed", { timeoutMs: 120_000 })
      // Every message, first or repeated, is genuine: the independent library verifies each one.
      const verifier = new Webhook(signingSecret)
      for (const request of receiver.received) {
        const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(request.headers[h])]))
        expect((verifier.verify(request.body, headers) as { uuid: string }).uuid).toBe(request.headers["webhook-id"])
      }
    } finally {
      first.child.kill("SIGKILL")
      second?.child.kill("SIGTERM")
      await second?.exited
    }
    expect(second!.stderr()).not.toMatch(/uncaught|unhandled/i)
  })

  it("birzha webhooks deliveries prints an endpoint's deliveries and attempts, newest first", async () => {
    const signingSecret = `whsec_${Buffer.alloc(32, 9).toString("base64")}`
    const { profileUuid, uuid } = await activeEndpoint(signingSecret)
    receiver.answerWith((_req, res) => {
      res.statusCode = 503
      res.end("down for maintenance")
    })
    const worker = birzha(["worker"], { DATABASE_URL: database.url, BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1" })
    try {
      await emit(profileUuid, 1)
      await eventually(async () => {
        const { rows } = await db.query<{ n: number }>("SELECT attempt_count AS n FROM webhook_deliveries WHERE endpoint_uuid = $1", [uuid])
        return rows[0]?.n
      }, (n) => n === 1, "the first attempt", { timeoutMs: 120_000 })
    } finally {
      worker.child.kill("SIGTERM")
      expect(await worker.exited).toBe(0)
    }
    // The listing runs in this process (./testCli.ts); the worker above is the built command.
    const env = { DATABASE_URL: database.url }
    const listed = await runCli(["webhooks", "deliveries", uuid], env)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(`${receiver.url}  active`)
    expect(listed.stdout).toMatch(/pending\s+event\s+profile\.updated/)
    expect(listed.stdout).toMatch(/503\s+\d+ ms\s+down for maintenance/)
    const json = await runCli(["webhooks", "deliveries", uuid, "--json", "--status", "pending"], env)
    expect(json.code).toBe(0)
    const [line] = json.stdout.trim().split("\n").map((text) => JSON.parse(text) as { status: string; attempts: Array<{ statusCode: number }> })
    expect(line?.status).toBe("pending")
    // The retry 4–6 s after the first attempt (RetrySchedule.ts) may come before the worker has
    // stopped on a busy machine: one attempt or more, every one refused.
    expect(line?.attempts.length).toBeGreaterThanOrEqual(1)
    expect(line?.attempts.map((attempt) => attempt.statusCode)).toEqual(line?.attempts.map(() => 503))
    const unknown = await runCli(["webhooks", "deliveries", crypto.randomUUID()], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("birzha: no webhook endpoint")
    const badStatus = await runCli(["webhooks", "deliveries", uuid, "--status", "lost"], env)
    expect(badStatus.code).toBe(1)
    expect(badStatus.stderr).toContain("--status must be")
  })
})
