import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { runToEnd } from "../../../testing/childProcess.js"
import { freePort } from "../../../testing/net.js"
import { eventually } from "../../../testing/progress.js"

// What a newcomer does: clone the repository, run the README's first command, open the service;
// stop it and start it again. The clone installs from the machine's pnpm store (as a second clone
// on a developer's machine would), builds, initialises the embedded database and serves.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const work = mkdtempSync(join(tmpdir(), "birzha-clone-"))
const running = new Set<ChildProcess>()
afterAll(() => {
  for (const child of running) stop(child)
  rmSync(work, { recursive: true, force: true })
})

/**
 * Liveness bounds only: a start that never becomes ready fails here, however busy the machine.
 * How fast a fresh clone starts is measured by `bench/fresh-start.bench.mjs`.
 */
const firstStartLimitMs = 10 * 60_000
const restartLimitMs = 3 * 60_000

/** The first command of the README's first `sh` block, without its comment. */
const readmeFirstCommand = (readme: string): string => {
  const block = /```sh\n([^\n]*)\n/.exec(readme)
  if (block === null) throw new Error("the README has no sh block")
  return block[1]!.replace(/\s+#.*$/, "").trim()
}

const stop = (child: ChildProcess) => {
  // The command is a shell running npx, pnpm and node: end the whole group it leads.
  if (child.pid !== undefined && child.exitCode === null) {
    try {
      process.kill(-child.pid, "SIGTERM")
    } catch {
      // already gone
    }
  }
}

/** Runs the command in the clone until the service answers readyz 200, for at most `limitMs`. */
const startUntilReady = async (command: string, cwd: string, env: Record<string, string>, port: number, limitMs: number) => {
  const started = Date.now()
  const child = spawn("sh", ["-c", command], { cwd, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] })
  running.add(child)
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  while (Date.now() - started < limitMs && child.exitCode === null) {
    const ready = await fetch(`http://127.0.0.1:${port}/api/readyz`).then((r) => r.status === 200, () => false)
    if (ready) return { ms: Date.now() - started, child, exited, output: () => output }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  stop(child)
  throw new Error(`not ready after ${Date.now() - started} ms; output:\n${output}`)
}

/** The shell ends at once on SIGTERM; the service drains first: wait until it no longer answers. */
const untilClosed = (port: number) =>
  eventually(
    () => fetch(`http://127.0.0.1:${port}/api/healthz`).then(() => true, () => false),
    (answered) => !answered,
    `the service on port ${port} closes after SIGTERM`,
    { timeoutMs: restartLimitMs, everyMs: 100 }
  )

describe("a fresh clone", () => {
  it("serves after the README's first command, and a restart serves without building again", async () => {
    const command = readmeFirstCommand(readFileSync(join(root, "README.md"), "utf8"))
    expect(command).toBe("npx -y pnpm@10.34.9 start")
    const clone = join(work, "birzha")
    expect((await runToEnd("git", ["clone", "--quiet", root, clone])).status).toBe(0)
    const port = await freePort()
    const env = { BIRZHA_PORT: String(port), BIRZHA_DATA_DIR: join(work, "data"), npm_config_fund: "false", npm_config_audit: "false" }

    const first = await startUntilReady(command, clone, env, port, firstStartLimitMs)
    // The log names where a browser signs in.
    expect(first.output()).toContain(`open http://localhost:${port}`)
    stop(first.child)
    await first.exited
    await untilClosed(port)

    const second = await startUntilReady(command, clone, env, port, restartLimitMs)
    expect(second.output()).not.toContain("Building")
    stop(second.child)
    await second.exited
    await untilClosed(port)

    console.log(`fresh clone: first start (install, build, new database) ready in ${(first.ms / 1000).toFixed(1)} s; restart ready in ${(second.ms / 1000).toFixed(1)} s`)
  }, firstStartLimitMs + restartLimitMs + 120_000)
})
