import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { untilDone } from "../../../testing/progress.js"
import { runCli } from "./testCli.js"

// The built command, as an operator runs it; `pnpm test` builds before running the tests.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")
const serverSecret = "cli automation tests: a server secret of at least 32 characters"

const birzha = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child: ChildProcess = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env["PATH"] ?? "", BIRZHA_SECRET: serverSecret, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stdout!.resume()
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, exited, stderr: () => stderr }
}

let database: TestDatabase
let db: Pg.Client
beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  database = await createTestDatabase("cli_automations", { migrated: true })
  expect((await runCli(["migrate"], { DATABASE_URL: database.url })).code).toBe(0)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await database?.drop()
})

const count = async (text: string, params: ReadonlyArray<unknown> = []) =>
  (await db.query<{ n: number }>(text, params as Array<unknown>)).rows[0]!.n

/** Executions in each state, for waiting on the worker: a liveness bound (testing/progress.ts), not a speed one. */
const executions = async () =>
  (await db.query<{ finished: number; succeeded: number }>(`SELECT count(*) FILTER (WHERE status IN ('succeeded', 'failed', 'cancelled'))::int AS finished,
    count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded FROM automation_executions`)).rows[0]!

describe("automation rules in the worker process", () => {
  it("kill -9 in the middle of 1,000 matching events: one execution per (rule, event), no action twice", async () => {
    const { rows: [account] } = await db.query<{ uuid: string }>("INSERT INTO accounts (email) VALUES ($1) RETURNING uuid", [`rules.${Date.now()}@example.com`])
    const { rows: [profile] } = await db.query<{ uuid: string }>(
      "INSERT INTO profiles (id, account_uuid, name, type) VALUES ($1, $2, 'Автор правил', 'Физлицо') RETURNING uuid",
      [`rules${Date.now()}`.slice(0, 12), account!.uuid]
    )
    // Two rules of a session (no key): a notification, and a draft saved through the registry.
    const rules = [
      { action: { type: "notification.create" }, scope: null },
      { action: { type: "command.execute", operationId: "articles.save", arguments: { data: { title: "Заметка правила" } } }, scope: "articles:write" }
    ]
    for (const [i, rule] of rules.entries()) {
      await db.query(
        `INSERT INTO automation_rules (uuid, profile_uuid, account_uuid, name, event_type, action, action_scope, max_runs_per_day, created_via, start_position)
         VALUES (gen_random_uuid(), $1, $2, $3, 'profile.updated', $4::jsonb, $5, 1000, 'session', (SELECT last_position FROM event_sequence))`,
        [profile!.uuid, account!.uuid, `Правило ${i}`, JSON.stringify(rule.action), rule.scope]
      )
    }
    const env = { DATABASE_URL: database.url }
    const first = birzha(["worker"], env)
    let second: ReturnType<typeof birzha> | undefined
    try {
      await db.query(
        `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
         SELECT 'profile.updated', 'profile', $1::uuid, g, jsonb_build_object('objectUuid', $1::text, 'status', 'updated'),
           jsonb_build_object('profileUuid', $1::text)
         FROM generate_series(1, 1000) g`, [profile!.uuid]
      )
      await untilDone(executions, (now) => now.succeeded >= 100, (now) => now, "the first runs", { stallMs: 120_000 })
      first.child.kill("SIGKILL")
      expect(await first.exited).toBe(null)
      const atKill = await count("SELECT count(*)::int AS n FROM automation_executions WHERE status = 'succeeded'")
      expect(atKill).toBeLessThan(2000)
      // Executions the dead worker held come back when their lease runs out (60 s,
      // AutomationRepository.ts executionLeaseSeconds): the test moves that moment to now
      // instead of waiting for it.
      await db.query("UPDATE automation_executions SET lease_until = now() - interval '1 second' WHERE status = 'running'")
      second = birzha(["worker"], env)
      await untilDone(executions, (now) => now.finished === 2000, (now) => now, "every execution to finish", { stallMs: 120_000 })
      expect(await count("SELECT count(*)::int AS n FROM automation_executions")).toBe(2000)
      expect(await count("SELECT count(*)::int AS n FROM automation_executions WHERE status = 'succeeded'")).toBe(2000)
      expect(await count("SELECT count(DISTINCT (rule_uuid, event_uuid))::int AS n FROM automation_executions")).toBe(2000)
      // No action ran twice: one notification per execution, one draft per event.
      expect(await count("SELECT count(*)::int AS n FROM notifications WHERE profile_uuid = $1", [profile!.uuid])).toBe(1000)
      expect(await count("SELECT count(*)::int AS n FROM publications WHERE owner_profile_uuid = $1", [profile!.uuid])).toBe(1000)
    } finally {
      first.child.kill("SIGKILL")
      second?.child.kill("SIGTERM")
      await second?.exited
    }
    expect(second!.stderr()).not.toMatch(/uncaught|unhandled/i)
  }, 1_800_000)
})
