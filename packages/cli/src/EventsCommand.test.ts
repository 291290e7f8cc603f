import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { runCli } from "./testCli.js"

// The built command, as an operator runs it; `pnpm test` builds before running the tests.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")

const birzha = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child: ChildProcess = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  // A liveness bound, not a speed limit: the command's start took over 20 s with the machine's load at 23.
  const until = (check: () => boolean, what: string) =>
    eventually(check, Boolean, () => `${what}; stdout:\n${stdout}\nstderr:\n${stderr}`, { timeoutMs: 240_000, everyMs: 20 })
  return { child, exited, stdout: () => stdout, stderr: () => stderr, until }
}

let database: TestDatabase
let db: Pg.Client
beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  database = await createTestDatabase("cli_events", { migrated: true })
  expect((await runCli(["migrate"], { DATABASE_URL: database.url })).code).toBe(0)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await database?.drop()
})

/** An event straight into the outbox; its uuid, and its aggregate's (what the readable line shows). */
const insertEvent = async (type: string, kind: string) => {
  const { rows } = await db.query<{ uuid: string; aggregate_uuid: string }>(
    `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data)
     VALUES ($1, $2, gen_random_uuid(), 1, jsonb_build_object('objectUuid', gen_random_uuid(), 'status', 'x')) RETURNING uuid, aggregate_uuid`,
    [type, kind]
  )
  return { uuid: rows[0]!.uuid, aggregate: rows[0]!.aggregate_uuid }
}
const insert = async (type: string, kind: string) => (await insertEvent(type, kind)).uuid

describe("birzha events tail", { timeout: 600_000 }, () => {
  it("prints the events a worker sequences, from a position, filtered by type, until Ctrl-C", async () => {
    const env = { DATABASE_URL: database.url }
    const worker = birzha(["worker"], env)
    const tail = birzha(["events", "tail", "--from", "1", "--types", "profile.*,offer.received", "--json", "--poll-ms", "20"], env)
    try {
      const first = await insert("profile.updated", "profile")
      const skipped = await insert("publication.submitted", "publication")
      await tail.until(() => tail.stdout().includes(first), "the first event")
      const later = await insert("offer.received", "offer")
      await tail.until(() => tail.stdout().includes(later), "the event inserted while following")
      const lines = tail.stdout().trim().split("\n").map((text) => JSON.parse(text) as { position: string; uuid: string; type: string })
      expect(lines.map((l) => [l.position, l.uuid, l.type])).toEqual([["1", first, "profile.updated"], ["3", later, "offer.received"]])
      expect(tail.stdout()).not.toContain(skipped)
      expect(tail.stderr()).toContain("Following events after position 0")
      tail.child.kill("SIGINT")
      expect(await tail.exited).toBe(0)
    } finally {
      tail.child.kill("SIGKILL")
      worker.child.kill("SIGTERM")
      await worker.exited
    }
  })

  it("starts at the current end by default and prints readable lines", async () => {
    const old = await insertEvent("profile.updated", "profile")
    const worker = birzha(["worker"], { DATABASE_URL: database.url })
    try {
      // Wait until the old event is numbered, so "the end" lies after it.
      // However long the worker takes to start: on a machine running two suites it took over five seconds.
      await eventually(
        async () => (await db.query("SELECT 1 FROM outbox_events WHERE uuid = $1 AND position IS NOT NULL", [old.uuid])).rowCount,
        (numbered) => numbered === 1,
        "the worker numbers the old event"
      )
      const tail = birzha(["events", "tail", "--poll-ms", "20"], { DATABASE_URL: database.url })
      try {
        await tail.until(() => tail.stderr().includes("Following events after position"), "the start line")
        const fresh = await insertEvent("file.ready", "file")
        await tail.until(() => tail.stdout().includes(fresh.aggregate), "the new event")
        expect(tail.stdout()).not.toContain(old.aggregate)
        expect(tail.stdout()).toMatch(new RegExp(`^ +\\d+  \\d{4}-\\d\\d-\\d\\dT[^ ]+Z  file\\.ready  file/${fresh.aggregate} r1  \\{"objectUuid":"[0-9a-f-]{36}","status":"x"\\}\\n$`))
      } finally {
        tail.child.kill("SIGINT")
        await tail.exited
      }
    } finally {
      worker.child.kill("SIGTERM")
      await worker.exited
    }
  })

  it("refuses a type pattern that names no type", async () => {
    const run = birzha(["events", "tail", "--types", "nothing.*"], { DATABASE_URL: database.url })
    expect(await run.exited).toBe(1)
    expect(run.stderr()).toContain("birzha: --types: \"nothing.*\" matches no event type")
  })
})
