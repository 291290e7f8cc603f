// A Postgres database made for one benchmark and filled by `birzha demo` (the same generator an
// operator runs), dropped when the benchmark ends. BENCH_POSTGRES_URL names the server (default the
// local one).

import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { benchDatabase, withClient } from "./database.mjs"
import { freePort, repoRoot, startProcess } from "./processes.mjs"


/** Runs the built CLI with `args` against `databaseUrl`; resolves with its output, rejects on a non-zero exit. */
const cli = (args, databaseUrl, workDir) =>
  new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "packages/cli/dist/bin.js"), ...args], {
      cwd: workDir,
      env: { ...process.env, DATABASE_URL: databaseUrl, BIRZHA_DATA_DIR: join(workDir, "cli-data") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk))
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0 ? resolveRun(output) : reject(new Error(`birzha ${args.join(" ")} exited with ${code}:\n${output.slice(-4000)}`))
    )
  })

/**
 * A fresh database with `publications` demo publications. Returns its URL, a client factory and
 * `fill(n)` to replace the demo data with another size (`birzha demo --reset`).
 */
export const demoDatabase = async (ctx, { publications, seed = 1 }) => {
  const database = await benchDatabase(ctx)
  const databaseUrl = database.url
  ctx.log(`  database: ${database.label}`)

  const fill = async (count) => {
    const started = Date.now()
    const output = await cli(["demo", "--reset", "--publications", String(count), "--seed", String(seed)], databaseUrl, ctx.workDir)
    const seconds = (Date.now() - started) / 1000
    const summary = output.split("\n").find((line) => line.startsWith("Demo data:")) ?? output.trim()
    ctx.log(`  birzha demo --publications ${count}: ${seconds.toFixed(1)} s wall (${summary.replace(/^Demo data: /, "")})`)
    // What autovacuum does after a bulk load, done now so every run measures the same state: the
    // planner's statistics, the visibility map, and the trigram index's pending list merged. Every
    // table (the fill writes events, files, courses beside the publications): autovacuum working
    // through those during a measured run tripled its p95. Then the dirty pages written out.
    await withClient(databaseUrl, async (client) => {
      await client.query("VACUUM ANALYZE")
      await client.query("CHECKPOINT")
    })
    return seconds
  }
  const seedSeconds = await fill(publications)
  return {
    url: databaseUrl,
    seedSeconds,
    fill,
    query: (text, params) => withClient(databaseUrl, (client) => client.query(text, params)),
    /** Runs `use` on one connection of its own (for session state: PREPARE, SET). */
    session: (use) => withClient(databaseUrl, use)
  }
}

const libDir = dirname(fileURLToPath(import.meta.url))

/**
 * The bare node:http + pg server of bench/lib/bare-pg-server.mjs, stopped when the benchmark ends
 * (pinned to the servers' core when the benchmark is pinned).
 */
export const startBarePgServer = async (ctx, databaseUrl, nodeOptions = []) => {
  const port = await freePort()
  const handle = await startProcess({
    label: "bare-pg",
    entry: join(libDir, "bare-pg-server.mjs"),
    args: [String(port), "127.0.0.1", databaseUrl],
    nodeOptions: [...nodeOptions, ...ctx.profileNodeOptions],
    port,
    readyPath: "/__ready",
    readyTimeoutMs: 10_000,
    workDir: ctx.workDir,
    core: ctx.serverCore
  })
  ctx.defer(() => handle.stop())
  handle.profiled = ctx.profileNodeOptions.length > 0
  return handle
}

/** The value with object keys sorted, so two JSON answers compare by content. */
export const sorted = (value) =>
  Array.isArray(value)
    ? value.map(sorted)
    : value !== null && typeof value === "object"
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted(value[key])]))
    : value
