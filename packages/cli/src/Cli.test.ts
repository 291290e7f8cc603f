import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"

// These tests run the built command, as an operator would; `pnpm test` builds before running them.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")

interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
}

const birzha = (args: ReadonlyArray<string>, env: Record<string, string>, cwd?: string): Running => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: cwd ?? tmpdir(),
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const listeners = new Set<() => void>()
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding("utf8")
    stream.on("data", (chunk: string) => {
      output += chunk
      for (const listener of listeners) listener()
    })
  }
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output.match(pattern)
        if (match) {
          listeners.delete(check)
          clearTimeout(timer)
          resolve(match)
        }
      }
      const timer = setTimeout(() => {
        listeners.delete(check)
        reject(new Error(`timed out waiting for ${pattern}; output:\n${output}`))
      }, timeoutMs)
      listeners.add(check)
      check()
    })
  return { child, output: () => output, exited, waitFor }
}

const listening = /Listening on http:\/\/127\.0\.0\.1:(\d+)/

beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
})

describe("configuration errors", () => {
  it("stop the host with one line naming each bad variable, exit code 1 and no stack", async () => {
    const run = birzha(["serve"], { BIRZHA_PORT: "eighty", DATABASE_URL: "mysql://localhost/x" })
    expect(await run.exited).toBe(1)
    const lines = run.output().trim().split("\n")
    expect(lines[0]).toBe("birzha: invalid configuration")
    expect(lines.slice(1).some((line) => line.startsWith("BIRZHA_PORT: "))).toBe(true)
    expect(lines.slice(1).some((line) => line.startsWith("DATABASE_URL: expected a postgres:// or postgresql:// URL"))).toBe(true)
    expect(run.output()).not.toMatch(/\n\s+at /)
  })

  it("rejects a short BIRZHA_SECRET by name", async () => {
    const run = birzha(["migrate"], { BIRZHA_SECRET: "short" })
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain("BIRZHA_SECRET: expected at least 32 characters")
  })
})

describe("birzha migrate", () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase("cli_migrate")
  })
  afterAll(() => database?.drop())

  it("applies the migrations to a Postgres server and exits 0, then finds none pending", async () => {
    const first = birzha(["migrate"], { DATABASE_URL: database.url })
    expect(await first.exited).toBe(0)
    expect(first.output()).toContain("applied 1_foundation, 2_accounts")
    const client = new Pg.Client({ connectionString: database.url })
    await client.connect()
    const { rows } = await client.query<{ migration_id: number }>("SELECT migration_id FROM birzha_migrations")
    await client.end()
    expect(rows.length).toBeGreaterThanOrEqual(3)
    const second = birzha(["migrate"], { DATABASE_URL: database.url })
    expect(await second.exited).toBe(0)
    expect(second.output()).toContain("no migrations pending")
  })
})

describe("birzha accounts delete", () => {
  it("deletes the live account of an address with its profiles and sessions, and says so when there is none", async () => {
    const database = await createTestDatabase("cli_accounts")
    try {
      expect(await birzha(["migrate"], { DATABASE_URL: database.url }).exited).toBe(0)
      const client = new Pg.Client({ connectionString: database.url })
      await client.connect()
      const { rows } = await client.query<{ uuid: string }>("INSERT INTO accounts (email) VALUES ('gone@example.com') RETURNING uuid")
      const account = rows[0]!.uuid
      const profile = await client.query<{ uuid: string }>("INSERT INTO profiles (id, account_uuid, name, type) VALUES ('cliprofile01', $1, 'P', 'Физлицо') RETURNING uuid", [account])
      await client.query("INSERT INTO sessions (token_hash, account_uuid, profile_uuid, expires_at) VALUES ('h', $1, $2, now() + interval '1 day')", [account, profile.rows[0]!.uuid])
      const run = birzha(["accounts", "delete", "Gone@Example.com"], { DATABASE_URL: database.url })
      expect(await run.exited).toBe(0)
      expect(run.output()).toContain("Deleted the account of Gone@Example.com")
      const state = await client.query(
        "SELECT a.deleted_at IS NOT NULL AS account, p.deleted_at IS NOT NULL AS profile, s.revoked_at IS NOT NULL AS session FROM accounts a JOIN profiles p ON p.account_uuid = a.uuid JOIN sessions s ON s.account_uuid = a.uuid"
      )
      expect(state.rows).toEqual([{ account: true, profile: true, session: true }])
      await client.end()
      const again = birzha(["accounts", "delete", "gone@example.com"], { DATABASE_URL: database.url })
      expect(await again.exited).toBe(1)
      expect(again.output()).toContain("no live account")
    } finally {
      await database.drop()
    }
  })
})

describe("birzha serve", () => {
  it("drains an in-flight request on SIGTERM and exits 0", async () => {
    // A "database" that accepts connections and never answers: readyz waits its full two seconds.
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => sockets.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    const dbPort = (silent.address() as { port: number }).port
    const run = birzha(["serve"], { BIRZHA_PORT: "0", DATABASE_URL: `postgres://postgres@127.0.0.1:${dbPort}/x` })
    try {
      const [, port] = await run.waitFor(listening)
      const started = Date.now()
      const inFlight = fetch(`http://127.0.0.1:${port}/api/readyz`)
      await new Promise((resolve) => setTimeout(resolve, 300))
      run.child.kill("SIGTERM")
      const response = await inFlight
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({ error: { code: "not_ready", message: "The database does not answer" } })
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500)
      expect(await run.exited).toBe(0)
      await expect(fetch(`http://127.0.0.1:${port}/api/healthz`)).rejects.toThrow()
    } finally {
      run.child.kill("SIGKILL")
      for (const socket of sockets) socket.destroy()
      silent.close()
    }
  })

  it("serves on the embedded database, which keeps its data across restarts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "birzha-serve-"))
    try {
      const first = birzha(["serve"], { BIRZHA_PORT: "0", BIRZHA_DATA_DIR: dataDir })
      // A new directory: PGlite's initdb first, seconds of CPU, while other test files run beside it.
      const [, port] = await first.waitFor(listening, 60_000)
      await first.waitFor(/migrations applied[\s\S]*1_foundation/)
      const ready = await fetch(`http://127.0.0.1:${port}/api/readyz`)
      expect(ready.status).toBe(200)
      expect(first.output()).toContain("worker started")
      first.child.kill("SIGTERM")
      expect(await first.exited).toBe(0)
      expect(first.output()).toContain("worker stopped")

      const second = birzha(["serve"], { BIRZHA_PORT: "0", BIRZHA_DATA_DIR: dataDir })
      const [, port2] = await second.waitFor(listening)
      await second.waitFor(/migrations applied[\s\S]*none pending/)
      expect((await fetch(`http://127.0.0.1:${port2}/api/readyz`)).status).toBe(200)
      second.child.kill("SIGTERM")
      expect(await second.exited).toBe(0)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("birzha openapi", () => {
  it("prints the OpenAPI document", async () => {
    const run = birzha(["openapi"], {})
    expect(await run.exited).toBe(0)
    expect(JSON.parse(run.output())).toMatchObject({ openapi: "3.1.0", info: { version: "2026-10-15" } })
  })
})
