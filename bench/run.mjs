#!/usr/bin/env node
// Birzha benchmark runner.
//
//   node bench/run.mjs [name ...] [--duration=10] [--warmup=2] [--connections=50]
//                      [--pipelining=1] [--host-node-options="..."] [--cpu-prof] [--keep]
//                      [--pin | --no-pin] [--json=file] [--list]
//
// A benchmark is a module bench/<name>.bench.mjs exporting { name, description, run(ctx) } and
// optionally `pin` (true: CPU pinning by default), as named exports or a default export. With no
// names, every benchmark runs, in file order.
// See bench/README.md.

import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { cpuVerdict, machine, meanRow, measure, printTable } from "./lib/load.mjs"
import { pinningAvailable, pinningNote, pinRunner, serverCore, unpinRunner } from "./lib/pinning.mjs"
import { commandFlags, freePort, get, liveChildren, repoRoot, signalAllSync, startProcess, tempDir } from "./lib/processes.mjs"

const benchDir = dirname(fileURLToPath(import.meta.url))

const usage = `usage: node bench/run.mjs [name ...] [options]

options:
  --list                       list the benchmarks and exit
  --duration=SECONDS           measured run per target (default 10)
  --warmup=SECONDS             discarded warm-up before each measured run (default 2)
  --connections=N              concurrent connections (default 50)
  --pipelining=N               requests in flight per connection (default 1)
  --host-node-options="..."    extra node flags for the host process
                               (also BENCH_HOST_NODE_OPTIONS)
  --cpu-prof                   profile the host (and the baselines that support it): adds --cpu-prof --cpu-prof-dir=.bench/profiles/<time>
  --keep                       keep the work directory (host logs, data dir)
  --pin / --no-pin             pin servers to core 0 and the load generator to core 1 with taskset
                               for every benchmark / none (default: the benchmarks that ask for it:
                               event-types, auth-session, bearer-session, get-publication)
  --json=FILE                  also write the results as JSON

environment:
  BENCH_HOST_ENTRY             host entry script (default packages/cli/dist/bin.js, run with "serve")
  BENCH_HOST_NODE_OPTIONS      as --host-node-options
  DATABASE_URL                 passed through to the host by benchmarks that make no database of their own
                               (default: embedded PGlite in a temp dir)
  BENCH_POSTGRES_URL           the Postgres server of the benchmarks that need one (default the local one)
  BENCH_WEBHOOK_RATE           webhooks: the offered events/s of the target run (default 2000)
  BENCH_WEBHOOK_LIGHT_RATE     webhooks: the offered events/s of the latency run (default 200)
  BENCH_WEBHOOK_ENDPOINTS      webhooks: endpoints subscribed to every event (default 1)
  BENCH_PLAN_CACHE_MODE        search: plan_cache_mode of its database (experiment; default the server's)
  BENCH_AB_PATH, BENCH_AB_ROUNDS, BENCH_AB_ENTRY_A/B, BENCH_AB_FLAGS_A/B
                               host-ab: the path, the rounds, and each variant's build and node flags
                               (bench/host-ab.bench.mjs)`

const parseArgs = (argv) => {
  const options = {
    names: [],
    list: false,
    durationSeconds: 10,
    warmupSeconds: 2,
    connections: 50,
    pipelining: 1,
    hostNodeOptions: splitFlags(process.env.BENCH_HOST_NODE_OPTIONS ?? ""),
    cpuProf: false,
    keep: false,
    pin: "auto",
    json: undefined
  }
  const positiveNumber = (flag, value, { integer = false, min = 1 } = {}) => {
    const n = Number(value)
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      throw new UsageError(`${flag} wants a number ≥ ${min}, got "${value}"`)
    }
    return n
  }
  for (const arg of argv) {
    const [flag, ...rest] = arg.split("=")
    const value = rest.join("=")
    switch (flag) {
      case "--help":
      case "-h":
        console.log(usage)
        process.exit(0)
        break
      case "--list":
        options.list = true
        break
      case "--duration":
        options.durationSeconds = positiveNumber(flag, value)
        break
      case "--warmup":
        options.warmupSeconds = positiveNumber(flag, value, { min: 0 })
        break
      case "--connections":
        options.connections = positiveNumber(flag, value, { integer: true })
        break
      case "--pipelining":
        options.pipelining = positiveNumber(flag, value, { integer: true })
        break
      case "--host-node-options":
        options.hostNodeOptions.push(...splitFlags(value))
        break
      case "--cpu-prof":
        options.cpuProf = true
        break
      case "--keep":
        options.keep = true
        break
      case "--pin":
        options.pin = "on"
        break
      case "--no-pin":
        options.pin = "off"
        break
      case "--json":
        if (!value) throw new UsageError("--json wants a file: --json=results.json")
        options.json = resolve(value)
        break
      default:
        if (flag.startsWith("-")) throw new UsageError(`unknown option ${arg}`)
        options.names.push(arg)
    }
  }
  return options
}

const displayPath = (file) => {
  const rel = relative(repoRoot, file)
  return rel.startsWith("..") ? file : rel
}

function splitFlags(text) {
  return text.split(/\s+/).filter(Boolean)
}

class UsageError extends Error {}

const loadBenchmarks = async () => {
  const files = readdirSync(benchDir).filter((f) => f.endsWith(".bench.mjs")).sort()
  const benchmarks = []
  for (const file of files) {
    const mod = await import(pathToFileURL(join(benchDir, file)).href)
    const bench = mod.default && typeof mod.default.run === "function" ? mod.default : mod
    if (typeof bench.name !== "string" || typeof bench.run !== "function") {
      throw new Error(`bench/${file} must export { name, description, run(ctx) }`)
    }
    benchmarks.push({ name: bench.name, description: bench.description ?? "", run: bench.run, pin: bench.pin === true, file })
  }
  return benchmarks
}

// ---------------------------------------------------------------------------------------------
// Stopping children on every way out: normal end (deferred cleanups), errors, signals, exit.

const cleanups = []
let cleaningUp = null

const runCleanups = () => {
  if (!cleaningUp) {
    cleaningUp = (async () => {
      while (cleanups.length > 0) {
        const fn = cleanups.pop()
        try {
          await fn()
        } catch (error) {
          console.error(`cleanup failed: ${error.message}`)
        }
      }
      cleaningUp = null
    })()
  }
  return cleaningUp
}

process.on("exit", () => signalAllSync("SIGTERM"))
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping ${liveChildren().length} child process(es)`)
    const hardExit = setTimeout(() => process.exit(130), 15_000)
    hardExit.unref()
    runCleanups().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------

const makeContext = (options, workDir, profileDir, pinned) => {
  const log = (...args) => console.log(...args)
  const defer = (fn) => cleanups.push(fn)
  // The core of the servers under test, or undefined when not pinned.
  const core = pinned ? serverCore : undefined
  let runnerPinned = false

  const stopAndReport = (handle) => async () => {
    const outcome = await handle.stop()
    if (outcome.forced) {
      console.error(`warning: ${handle.label} ignored SIGTERM for 10 s and was killed`)
    } else if (outcome.code !== 0 && outcome.signal !== "SIGTERM") {
      console.error(`warning: ${handle.label} exited with code ${outcome.code} after SIGTERM; output tail:\n${handle.output()}`)
    }
    return outcome
  }

  return {
    options,
    workDir,
    log,
    defer,
    get,
    printTable,
    meanRow,
    machine,
    pinned,
    serverCore: core,
    /** Node flags for a baseline server: with --cpu-prof, the baselines are profiled as the host is. */
    profileNodeOptions: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
    /** Prints the headline: server CPU per request baseline/host against the target. */
    cpuVerdict: (args) => cpuVerdict({ log, ...args }),

    /**
     * Starts the Birzha host (`cli serve`) on a free loopback port with a fresh data dir; `entry` in
     * place of BENCH_HOST_ENTRY (another build, bench/host-ab.bench.mjs).
     */
    startHost: async ({ env = {}, nodeOptions = [], readyPath = "/api/readyz", entry: given } = {}) => {
      const entry = resolve(repoRoot, given ?? process.env.BENCH_HOST_ENTRY ?? "packages/cli/dist/bin.js")
      if (!existsSync(entry)) {
        throw new Error(`${displayPath(entry)} does not exist: build first (npx -y pnpm@10.34.9 -r build)`)
      }
      const port = await freePort()
      const dataDir = join(workDir, `data-${port}`)
      mkdirSync(dataDir, { recursive: true })
      // The host as `birzha serve` runs: with the flags of the command's own first line.
      const flags = [...commandFlags(entry), ...options.hostNodeOptions, ...nodeOptions]
      if (profileDir) flags.push("--cpu-prof", `--cpu-prof-dir=${profileDir}`)
      log(`  host: node ${[...flags, displayPath(entry), "serve"].join(" ")} (port ${port}, data ${dataDir}${process.env.DATABASE_URL ? ", DATABASE_URL set" : ""})`)
      const handle = await startProcess({
        label: "host",
        entry,
        args: ["serve"],
        nodeOptions: flags,
        env: { BIRZHA_PORT: String(port), BIRZHA_HOST: "127.0.0.1", BIRZHA_DATA_DIR: dataDir, ...env },
        port,
        readyPath,
        workDir,
        core
      })
      log(`  host: ready after ${handle.readyAfterMs} ms (pid ${handle.pid}, log ${handle.logFile})`)
      handle.stopAndReport = stopAndReport(handle)
      handle.isHost = true
      defer(handle.stopAndReport)
      return handle
    },

    /** Warm-up then a measured autocannon run with the runner's concurrency settings. */
    measure: async (args) => {
      // Pinned only from the first measurement on, so that setup (demo data, sign-in) may use every core.
      if (pinned && !runnerPinned) {
        pinRunner()
        runnerPinned = true
        defer(() => unpinRunner())
      }
      const row = await measure({
        connections: options.connections,
        pipelining: options.pipelining,
        warmupSeconds: options.warmupSeconds,
        durationSeconds: options.durationSeconds,
        log,
        ...args
      })
      if (profileDir && (args.server?.isHost || args.server?.profiled)) {
        // The profile covers the host's whole life (start-up included); this is the measured run alone.
        log(
          `  ${row.label}: profile of the measured run: node bench/lib/profile-summary.mjs ${displayPath(profileDir)}` +
            ` --pid=${args.server.pid} --between=${row.windowMicros.join(",")} --requests=${row.total2xx + row.non2xx}`
        )
      }
      return row
    }
  }
}

const main = async () => {
  const options = parseArgs(process.argv.slice(2))
  const benchmarks = await loadBenchmarks()

  if (options.list) {
    for (const b of benchmarks) console.log(`${b.name.padEnd(20)} ${b.description}`)
    return 0
  }
  const unknown = options.names.filter((n) => !benchmarks.some((b) => b.name === n))
  if (unknown.length > 0) {
    throw new UsageError(`unknown benchmark(s): ${unknown.join(", ")}; known: ${benchmarks.map((b) => b.name).join(", ")}`)
  }
  const selected = options.names.length === 0 ? benchmarks : benchmarks.filter((b) => options.names.includes(b.name))

  const work = tempDir("birzha-bench-")
  if (!options.keep) cleanups.unshift(() => work.remove())
  const profileDir = options.cpuProf ? join(repoRoot, ".bench", "profiles", new Date().toISOString().replace(/[:.]/g, "-")) : undefined
  if (profileDir) mkdirSync(profileDir, { recursive: true })

  console.log(`birzha bench: ${selected.map((b) => b.name).join(", ")}`)
  console.log(`machine: ${machine()}; load generator: autocannon in this process; load average ${loadavg().map((x) => x.toFixed(1)).join(" ")}`)
  console.log(`work dir: ${work.dir}${options.keep ? " (kept)" : ""}`)
  const results = {}
  let failed = false
  for (const bench of selected) {
    console.log(`\n== ${bench.name}: ${bench.description}`)
    const pinned = pinningAvailable() && (options.pin === "on" || (options.pin === "auto" && bench.pin))
    if (options.pin === "on" && !pinningAvailable()) console.log("  --pin: taskset is missing or there are fewer than 2 cores; running unpinned")
    console.log(`  ${pinningNote(pinned)}; load average ${loadavg().map((x) => x.toFixed(1)).join(" ")}`)
    const mark = cleanups.length
    try {
      const result = await bench.run(makeContext(options, work.dir, profileDir, pinned))
      results[bench.name] = result && typeof result === "object" ? { pinned, ...result } : result
    } catch (error) {
      failed = true
      results[bench.name] = { error: error.message }
      console.error(`\n${bench.name} FAILED: ${process.env.BENCH_DEBUG ? error.stack : error.message}`)
    } finally {
      // Stop this benchmark's processes before the next one starts (the first `mark` cleanups
      // belong to the whole run).
      const mine = cleanups.splice(mark)
      for (const fn of mine.reverse()) {
        try {
          await fn()
        } catch (error) {
          console.error(`cleanup failed: ${error.message}`)
        }
      }
    }
  }
  if (profileDir) console.log(`\nhost CPU profiles (open in Chrome DevTools or speedscope): ${profileDir}`)
  if (options.json) {
    writeFileSync(options.json, JSON.stringify({ machine: machine(), options, results }, null, 2) + "\n")
    console.log(`results written to ${options.json}`)
  }
  return failed ? 1 : 0
}

main()
  .then(
    (code) => code,
    (error) => {
      if (error instanceof UsageError) {
        console.error(`${error.message}\n\n${usage}`)
        return 2
      }
      console.error(`bench harness error: ${error.stack ?? error}`)
      return 1
    }
  )
  .then(async (code) => {
    await runCleanups()
    process.exitCode = code
  })
