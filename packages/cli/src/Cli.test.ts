import { makePgliteClient } from "@birzha/infrastructure"
import { Command } from "@effect/cli"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runToEnd } from "../../../testing/childProcess.js"
import { taskDraft } from "../../../testing/drafts.js"
import { freePort, patientHostEnv } from "../../../testing/net.js"
import { embeddedDataDir } from "../../../testing/pglite.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { birzha as birzhaCommand } from "./Cli.js"

// These tests run the built command, as an operator would; `pnpm test` builds before running them.
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")

interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
}

/** Every command started, so a test that fails midway leaves no host running. */
const spawned = new Set<ChildProcess>()
afterAll(() => {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

const birzha = (args: ReadonlyArray<string>, env: Record<string, string>, cwd?: string): Running => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: cwd ?? tmpdir(),
    env: { PATH: process.env["PATH"] ?? "", ...patientHostEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  spawned.add(child)
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
  // A liveness bound, not a speed limit, under vitest's per test (vitest.config.ts): an embedded
  // host's first start took over 240 s with a second suite beside this one on two cores.
  const waitFor = (pattern: RegExp, timeoutMs = 540_000) =>
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
    const run = birzha(["serve"], { BIRZHA_PORT: "eighty", DATABASE_URL: "mysql://localhost/x", BIRZHA_METRICS_PORT: "70000" })
    expect(await run.exited).toBe(1)
    const lines = run.output().trim().split("\n")
    expect(lines[0]).toBe("birzha: invalid configuration")
    expect(lines.slice(1).some((line) => line.startsWith("BIRZHA_PORT: "))).toBe(true)
    expect(lines.slice(1).some((line) => line.startsWith("DATABASE_URL: expected a postgres:// or postgresql:// URL"))).toBe(true)
    expect(lines.slice(1).some((line) => line.startsWith("BIRZHA_METRICS_PORT: expected a TCP port"))).toBe(true)
    expect(run.output()).not.toMatch(/\n\s+at /)
  })

  it("stop a worker at a bad BIRZHA_METRICS_PORT too, named once", async () => {
    const run = birzha(["worker"], { DATABASE_URL: "postgres://127.0.0.1:1/none", BIRZHA_METRICS_PORT: "70000" })
    expect(await run.exited).toBe(1)
    const lines = run.output().trim().split("\n")
    expect(lines).toEqual(["birzha: invalid configuration", "BIRZHA_METRICS_PORT: expected a TCP port, an integer from 0 to 65535"])
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
    const database = await createTestDatabase("cli_accounts", { migrated: true })
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

  // Twice at once is what pnpm gives on Ctrl-C: the terminal signals the whole group, and pnpm
  // sends its child one more.
  it.each([["once", 1], ["twice at once (a package manager's copy)", 2]])(
    "stops on Ctrl-C (SIGINT) %s with exit code 0, printing nothing but info lines",
    async (_, signals) => {
      const database = await createTestDatabase(`cli_sigint_${signals}`)
      try {
        const run = birzha(["serve"], { BIRZHA_PORT: "0", DATABASE_URL: database.url })
        await run.waitFor(listening)
        await run.waitFor(/migrations applied/)
        // What the stop prints (a start on a loaded machine may log a retried connection before it).
        const before = run.output().length
        for (let i = 0; i < signals; i++) run.child.kill("SIGINT")
        expect(await run.exited).toBe(0)
        expect(run.child.signalCode).toBeNull()
        const lines = run.output().slice(before).trim().split("\n").filter((line) => line !== "")
        expect(lines.every((line) => line.includes(" level=INFO ")), run.output()).toBe(true)
      } finally {
        await database.drop()
      }
    }
  )

  it("serves on the embedded database, which keeps its data across restarts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "birzha-serve-"))
    const started: Array<ReturnType<typeof birzha>> = []
    try {
      const first = birzha(["serve"], { BIRZHA_PORT: "0", BIRZHA_DATA_DIR: dataDir })
      started.push(first)
      // A new directory: PGlite's initdb first, seconds of CPU, while other test files run beside
      // it (and minutes with a second suite beside them).
      const [, port] = await first.waitFor(listening)
      await first.waitFor(/migrations applied[\s\S]*1_foundation/)
      const ready = await fetch(`http://127.0.0.1:${port}/api/readyz`)
      expect(ready.status).toBe(200)
      expect(first.output()).toContain("worker started")
      first.child.kill("SIGTERM")
      expect(await first.exited).toBe(0)
      expect(first.output()).toContain("worker stopped")

      const second = birzha(["serve"], { BIRZHA_PORT: "0", BIRZHA_DATA_DIR: dataDir })
      started.push(second)
      const [, port2] = await second.waitFor(listening)
      await second.waitFor(/migrations applied[\s\S]*none pending/)
      expect((await fetch(`http://127.0.0.1:${port2}/api/readyz`)).status).toBe(200)
      second.child.kill("SIGTERM")
      expect(await second.exited).toBe(0)
    } finally {
      // A serve still running (a step above failed) writes into the directory: stopped first.
      for (const run of started) run.child.kill("SIGKILL")
      await Promise.all(started.map((run) => run.exited))
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 600_000)
})

describe("birzha openapi", () => {
  it("prints the OpenAPI document", async () => {
    const run = birzha(["openapi"], {})
    expect(await run.exited).toBe(0)
    expect(JSON.parse(run.output())).toMatchObject({ openapi: "3.1.0", info: { version: "2026-10-15" } })
  })
})

describe("birzha mail, its own program", () => {
  // bin.ts loads mail.js for `birzha mail ...` instead of main.js: the same command, built apart.
  const program = (file: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
    new Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [join(dirname(bin), file), ...args], { cwd: tmpdir(), env: { PATH: process.env["PATH"] ?? "", ...env } })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      child.on("close", (status) => resolve({ status, stdout, stderr }))
    })

  it("answers every form of the command as the whole command does: help, refusals and the mailbox", async () => {
    const database = await createTestDatabase("cli_mail_program", { migrated: true })
    try {
      const client = new Pg.Client({ connectionString: database.url })
      await client.connect()
      await client.query(
        "INSERT INTO development_mailbox (to_address, subject, text_body, html_body) VALUES ('kept@example.com', 'Your code', 'Code: 123456', '<p>Code: 123456</p>')"
      )
      await client.end()
      const env = { DATABASE_URL: database.url, NO_COLOR: "1" }
      const forms = [
        ["mail", "--help"],
        ["mail", "list", "--help"],
        ["mail", "list", "--limit", "0"],
        ["mail", "list", "--nope"],
        ["mail", "list", "--to", "kept@example.com"],
        ["mail", "list", "--to", "nobody@example.com"]
      ]
      // Each form by both programs at once; the forms one after another (a process loading main.js
      // costs over a second of CPU, and other test files run beside this one).
      for (const args of forms) {
        const [alone, whole] = await Promise.all([program("mail.js", args, env), program("main.js", args, env)])
        expect({ args, ...alone }).toEqual({ args, ...whole })
      }
      const kept = await program("bin.js", ["mail", "list"], env)
      expect(kept.status).toBe(0)
      expect(kept.stdout).toContain("to kept@example.com")
      expect(kept.stdout).toContain("Code: 123456")
    } finally {
      await database.drop()
    }
  }, 600_000)
})

describe("birzha beside a running host on the embedded database", () => {
  it("runs mail list, moderation queue and approve inside the host, on the data the host serves", async () => {
    // Initialised (PGlite's initdb done) but empty; `birzha serve` on a new directory is tested above.
    const data = await embeddedDataDir("beside", (dir) => Effect.runPromise(Effect.scoped(makePgliteClient(dir))))
    const dataDir = data.home
    const port = await freePort()
    const env = { BIRZHA_PORT: String(port), BIRZHA_DATA_DIR: dataDir }
    const host = birzha(["serve"], env)
    try {
      await host.waitFor(listening)
      await host.waitFor(/migrations applied/)
      // The endpoint's address and token, readable by the data directory's owner only.
      expect(statSync(join(dataDir, "admin.json")).mode & 0o777).toBe(0o600)

      const origin = `http://localhost:${port}`
      const api = (path: string, body: unknown, cookie?: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", origin, ...(cookie === undefined ? {} : { cookie }) },
          body: JSON.stringify(body)
        })
      const email = "beside@example.com"
      const started = await api("/api/v1/auth/email/start", { email })
      expect(started.status).toBe(200)
      const { challengeUuid } = (await started.json()) as { challengeUuid: string }

      // The code, from the development mailbox the host writes to.
      const mail = birzha(["mail", "list", "--to", email], env)
      expect(await mail.exited).toBe(0)
      const code = /\b(\d{6})\b/.exec(mail.output())?.[1]
      expect(code).toMatch(/^\d{6}$/)
      const verified = await api("/api/v1/auth/email/verify", { challengeUuid, code })
      expect(verified.status).toBe(200)
      const cookie = verified.headers.get("set-cookie")!.split(";")[0]!

      const saved = await api("/api/v1/commands/tasks.save", { requestUuid: crypto.randomUUID(), data: taskDraft }, cookie)
      expect(saved.status).toBe(200)
      const task = (await saved.json()) as { uuid: string; revision: number }
      const submitted = await api("/api/v1/commands/tasks.submit", { requestUuid: crypto.randomUUID(), publicationUuid: task.uuid, expectedRevision: task.revision }, cookie)
      expect(submitted.status).toBe(200)

      const queue = birzha(["moderation", "queue"], env)
      expect(await queue.exited).toBe(0)
      expect(queue.output()).toContain(`${task.uuid}  task`)
      expect(queue.output()).toContain(taskDraft.title)

      const approve = birzha(["moderation", "approve", task.uuid], env)
      expect(await approve.exited).toBe(0)
      expect(approve.output()).toContain(`Publication ${task.uuid} is approved`)
      const published = await fetch(`http://127.0.0.1:${port}/api/v1/publications/${task.uuid}`)
      expect(published.status).toBe(200)

      // A refusal keeps its exit code and its one line.
      const again = birzha(["moderation", "approve", task.uuid], env)
      expect(await again.exited).toBe(1)
      expect(again.output()).toContain(`publication ${task.uuid} is approved, not pending`)
      const empty = birzha(["moderation", "queue"], env)
      expect(await empty.exited).toBe(0)
      expect(empty.output()).toContain("No publications are waiting for moderation.")
      // The operator role too (the admin area's), granted on the host's database.
      const operator = birzha(["operators", "grant", "boss@example.com"], env)
      expect(await operator.exited, operator.output()).toBe(0)
      const operators = birzha(["operators", "list"], env)
      expect(await operators.exited, operators.output()).toBe(0)
      expect(operators.output()).toMatch(/^boss@example\.com {2}cli {2}granted /m)

      // Without the token of admin.json the endpoint runs nothing.
      const { url } = JSON.parse(readFileSync(join(dataDir, "admin.json"), "utf8")) as { url: string }
      const stranger = await fetch(`${url}/commands`, { method: "POST", headers: { authorization: "Bearer nope" }, body: JSON.stringify({ args: ["mail", "list"] }) })
      expect(stranger.status).toBe(401)

      host.child.kill("SIGTERM")
      expect(await host.exited).toBe(0)
      expect(existsSync(join(dataDir, "admin.json"))).toBe(false)
      // The host has stopped: the command opens the database itself.
      const alone = birzha(["moderation", "queue"], env)
      expect(await alone.exited).toBe(0)
      expect(alone.output()).toContain("No publications are waiting for moderation.")
    } finally {
      host.child.kill("SIGKILL")
      data.remove()
    }
  }, 600_000)

  it("names the process holding the embedded database, without suggesting a migration", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "birzha-held-"))
    try {
      // A live process (this test's) holds the lock and offers no endpoint: an older host, say.
      mkdirSync(join(dataDir, "pgdata"))
      writeFileSync(join(dataDir, "pgdata.lock"), String(process.pid))
      const run = birzha(["moderation", "queue"], { BIRZHA_DATA_DIR: dataDir })
      expect(await run.exited).toBe(1)
      expect(run.output()).toContain(`is in use by process ${process.pid}`)
      expect(run.output()).not.toContain("migrate")
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe("birzha --help", () => {
  it("has no colour codes when its output is not a terminal", async () => {
    const run = birzha(["--help"], {})
    expect(await run.exited).toBe(0)
    expect(run.output()).toContain("moderation")
    expect(run.output()).not.toContain("\u001b[")
  })

  it("through ./birzha lists every command once, one aligned line each, and a command's --help stays detailed", async () => {
    // The runnable commands by @effect/cli's public API: the paths of its bash completions that
    // lead to no further command.
    const completions = (await Effect.runPromise(Command.getBashCompletions(birzhaCommand, "birzha"))).join("\n")
    const all = [...completions.matchAll(/^\s*birzha,([a-z,-]+)\)$/gm)].map((match) => match[1]!.split(",").join(" "))
    const expected = all.filter((path) => !all.some((other) => other.startsWith(`${path} `)))
    expect(expected).toContain("moderation complaint uphold")

    const script = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "birzha")
    const help = await runToEnd(script, ["--help"], { env: { PATH: process.env["PATH"] ?? "" } })
    expect(help.status).toBe(0)
    const lines = help.stdout.split("\n")
    const listed = lines.slice(lines.indexOf("Commands:") + 1, lines.indexOf("", lines.indexOf("Commands:")))
    const rows = listed.map((line) => /^ {2}(\S+(?: \S+)*?)( {2,})(\S.*)$/.exec(line))
    expect(rows.every((row) => row !== null)).toBe(true)
    const paths = rows.map((row) => row![1]!)
    expect([...paths].sort()).toEqual([...expected].sort())
    expect(new Set(paths).size).toBe(paths.length)
    for (const path of paths) expect(path.split(" ").every((word, index, words) => word !== words[index - 1])).toBe(true)
    // One column for the descriptions, two spaces after the longest path, each a single clause.
    const column = new Set(rows.map((row) => row![1]!.length + row![2]!.length))
    expect([...column]).toEqual([Math.max(...paths.map((path) => path.length)) + 2])
    for (const row of rows) expect(row![3]).not.toMatch(/[.;:]\s/)

    const detailed = await runToEnd(script, ["moderation", "approve", "--help"], { env: { PATH: process.env["PATH"] ?? "" } })
    expect(detailed.status).toBe(0)
    expect(detailed.stdout).toContain("--reason")
    expect(detailed.stdout).toContain("Approve a pending publication: its draft becomes the public data.")
  })
})
