// What a newcomer waits for: a fresh clone, the README's first command, until readyz answers 200;
// then a restart. Baselines in the same run and clone: the same launcher (`npx -y pnpm@… exec`)
// starting a bare node:http server that answers readyz, so the ratio is what Birzha adds over any
// pnpm project started the same way; and `pnpm install` alone in a second fresh clone, what every
// pnpm project pays before it can start.
// Budgets: first start ≤ 90 s, restart ≤ 15 s (docs/decisions.md, "Start").

import { execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { freePort, repoRoot, tempDir } from "./lib/processes.mjs"

export const name = "fresh-start"
export const description = "fresh clone → README's first command → ready, and a restart, against a bare server started the same way"

const FIRST_BUDGET_MS = 90_000
const RESTART_BUDGET_MS = 15_000
const LIMIT_MS = 10 * 60_000

const readmeFirstCommand = () => {
  const block = /```sh\n([^\n]*)\n/.exec(readFileSync(join(repoRoot, "README.md"), "utf8"))
  if (block === null) throw new Error("the README has no sh block")
  return block[1].replace(/\s+#.*$/, "").trim()
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `command` in `cwd` (a process group) until GET readyz answers 200; its time, and a stop. */
const untilReady = async (command, cwd, env, port) => {
  const started = Date.now()
  const child = spawn("sh", ["-c", command], { cwd, env: { ...process.env, ...env }, detached: true, stdio: "ignore" })
  const stop = async () => {
    try {
      process.kill(-child.pid, "SIGTERM")
    } catch {
      // already gone
    }
    while (await fetch(`http://127.0.0.1:${port}/api/healthz`).then(() => true, () => false)) await sleep(100)
  }
  while (Date.now() - started < LIMIT_MS && child.exitCode === null) {
    if (await fetch(`http://127.0.0.1:${port}/api/readyz`).then((r) => r.status === 200, () => false)) {
      return { ms: Date.now() - started, stop }
    }
    await sleep(100)
  }
  await stop()
  throw new Error(`${command} was not ready after ${Date.now() - started} ms`)
}

const timed = (run) => {
  const started = Date.now()
  run()
  return Date.now() - started
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`

export const run = async (ctx) => {
  const { log } = ctx
  const work = tempDir("birzha-bench-fresh-")
  try {
    const command = readmeFirstCommand()
    const env = { npm_config_fund: "false", npm_config_audit: "false" }
    const pnpm = command.replace(/\s+start$/, "")

    // Baseline: install alone, in its own fresh clone.
    const other = join(work.dir, "install-only")
    execFileSync("git", ["clone", "--quiet", repoRoot, other], { stdio: "ignore" })
    const installMs = timed(() => execFileSync("sh", ["-c", `${pnpm} install`], { cwd: other, env: { ...process.env, ...env }, stdio: "ignore" }))

    const clone = join(work.dir, "birzha")
    execFileSync("git", ["clone", "--quiet", repoRoot, clone], { stdio: "ignore" })
    const port = await freePort()
    const hostEnv = { ...env, BIRZHA_PORT: String(port), BIRZHA_DATA_DIR: join(work.dir, "data") }
    const first = await untilReady(command, clone, hostEnv, port)
    await first.stop()
    const restart = await untilReady(command, clone, hostEnv, port)
    await restart.stop()

    // Baseline: the same launcher starting a bare server that is ready at once.
    const bare = `const s=require("node:http").createServer((q,r)=>r.end("ok"));s.listen(${port},"127.0.0.1")`
    const bareStart = await untilReady(`${pnpm} exec node -e '${bare}'`, clone, env, port)
    await bareStart.stop()

    const rows = [
      ["first start (install, build, new database)", first.ms, installMs, FIRST_BUDGET_MS],
      ["restart", restart.ms, bareStart.ms, RESTART_BUDGET_MS]
    ]
    log("")
    log("  what                                         birzha    baseline   ratio   budget")
    for (const [what, ms, base, budget] of rows) {
      log(`  ${what.padEnd(44)} ${seconds(ms).padStart(7)}  ${seconds(base).padStart(9)}  ${(ms / base).toFixed(2).padStart(6)}×  ${seconds(budget)} ${ms <= budget ? "met" : "NOT MET"}`)
    }
    log("  baselines: first start against `pnpm install` alone in a fresh clone; restart against a bare server started by the same launcher")
    return {
      firstStartMs: first.ms,
      installOnlyMs: installMs,
      restartMs: restart.ms,
      bareRestartMs: bareStart.ms,
      pass: first.ms <= FIRST_BUDGET_MS && restart.ms <= RESTART_BUDGET_MS
    }
  } finally {
    work.remove()
  }
}
