import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runToEnd } from "../../../testing/childProcess.js"
import { freePort, patientHostEnv } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"

// The built `birzha serve` on Postgres, with a module loader hook that writes down every module
// Node loads (to the file named by BIRZHA_LOADED_LOG): what a request to the API does not need is
// not loaded at start, and is loaded by the first request that needs it (bench/README.md, `memory`).
const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")
const work = mkdtempSync(join(tmpdir(), "birzha-lazy-"))
const loadedLog = join(work, "loaded.txt")
const hooks = join(work, "hooks.mjs")
const register = join(work, "register.mjs")
writeFileSync(
  hooks,
  `import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  appendFileSync(process.env.BIRZHA_LOADED_LOG, url + "\\n")
  return next(url, context)
}
`
)
writeFileSync(register, `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)

/** Loaded only by the request that needs them. */
const notAtStart = [
  ["the web application's server renderer", /web\/dist\/server\/entry-server\.js/],
  ["the MCP SDK", /McpSession-|@modelcontextprotocol/],
  ["PGlite", /pglite/],
  ["nodemailer", /nodemailer/],
  ["undici", /undici/]
] as const

let database: TestDatabase
let child: ChildProcess | undefined
let port = 0
let output = ""

beforeAll(async () => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run the build first (pnpm test does)`)
  database = await createTestDatabase("cli_lazy_start")
  port = await freePort()
  child = spawn(process.execPath, ["--import", pathToFileURL(register).href, bin, "serve"], {
    cwd: work,
    env: { PATH: process.env["PATH"] ?? "", ...patientHostEnv, BIRZHA_LOADED_LOG: loadedLog, DATABASE_URL: database.url, BIRZHA_PORT: String(port), BIRZHA_HOST: "127.0.0.1", BIRZHA_DATA_DIR: work, BIRZHA_PUBLIC_ORIGIN: "http://localhost:8080" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const started = Date.now()
  while (Date.now() - started < 120_000) {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${output}`)
    const ready = await fetch(`http://127.0.0.1:${port}/api/readyz`).then((r) => r.status === 200, () => false)
    if (ready) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`not ready after 120 s:\n${output}`)
})

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    child.kill("SIGTERM")
    await new Promise((resolve) => child!.once("exit", resolve))
  }
  await database?.drop()
  rmSync(work, { recursive: true, force: true })
})

const loaded = (log = loadedLog) => readFileSync(log, "utf8").split("\n").filter((line) => line !== "")

describe("birzha serve on Postgres", () => {
  it("is ready without the web renderer, the MCP SDK, PGlite, nodemailer or undici loaded", () => {
    const modules = loaded()
    // The hook saw the command itself, so an empty list is not taken for a lean start.
    expect(modules.some((url) => url.endsWith("/cli/dist/main.js"))).toBe(true)
    for (const [what, pattern] of notAtStart) expect(modules.filter((url) => pattern.test(url)), what).toEqual([])
  })

  // That it runs before readiness says ready is StartupMemory.test.ts's; here, that the command runs it.
  it("frees what starting left behind once the migrations are applied (StartupMemory.ts)", () => {
    const line = output.split("\n").find((entry) => entry.includes("start-up garbage collected"))
    expect(line, output).toMatch(/youngMiB="\d+ -> \d+"/)
    const [before, after] = /heapMiB="(\d+) -> (\d+)"/.exec(line!)!.slice(1).map(Number)
    expect(after).toBeLessThan(before!)
  })

  it("loads each on the first request that needs it and answers it", async () => {
    const page = await fetch(`http://127.0.0.1:${port}/catalog`, { headers: { accept: "text/html" } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("<html")
    expect(loaded().some((url) => /web\/dist\/server\/entry-server\.js/.test(url))).toBe(true)

    const document = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`)
    expect(document.status).toBe(200)
    expect(((await document.json()) as { openapi: string }).openapi).toMatch(/^3\./)
    const docs = await fetch(`http://127.0.0.1:${port}/api/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    expect(await docs.text()).toContain("tasks.save")

    // Without a key the endpoint refuses before any MCP exchange: the SDK stays unloaded.
    const refused = await fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(refused.status).toBe(401)
    expect(loaded().some((url) => /McpSession-|@modelcontextprotocol/.test(url))).toBe(false)
  })
})

describe("birzha mail list", () => {
  it("loads its own program (mail.js), not the whole command with the service's operations", async () => {
    const log = join(work, "mail-loaded.txt")
    const run = await runToEnd(process.execPath, ["--import", pathToFileURL(register).href, bin, "mail", "list"], {
      cwd: work,
      env: { PATH: process.env["PATH"] ?? "", BIRZHA_LOADED_LOG: log, DATABASE_URL: database.url }
    })
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toContain("The development mailbox is empty.")
    const modules = loaded(log)
    expect(modules.some((url) => url.endsWith("/cli/dist/mail.js"))).toBe(true)
    expect(modules.filter((url) => /\/cli\/dist\/(main|chunk-)/.test(url))).toEqual([])
  })
})
