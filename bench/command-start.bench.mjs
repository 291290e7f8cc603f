// What a developer waits for at the terminal: `birzha --help`, and `birzha mail list` (where a
// sign-in code is read) on the embedded default with no host running and on Postgres. Baseline in
// the same run: `node -e 0`, what starting Node costs on this machine. BENCH_CLI_BEFORE=<bin.js of
// another build> runs that build's commands too, alternated with this one's, for a before/after.
// Target: each under one second on the quiet machine (docs/operations.md, "The command").

import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { benchDatabase, withClient } from "./lib/database.mjs"
import { commandFlags, repoRoot, tempDir } from "./lib/processes.mjs"

export const name = "command-start"
export const description = "`birzha --help` and `birzha mail list` (embedded, Postgres) against `node -e 0`, wall and CPU"

const TARGET_S = 1
const runs = Number(process.env.BENCH_CLI_RUNS ?? 5)

/** Wall and CPU (user + system, from /usr/bin/time when there) of one run of `argv`. */
const timedRun = (argv, env, cwd) => {
  const withTime = existsSync("/usr/bin/time")
  const started = process.hrtime.bigint()
  const result = spawnSync(withTime ? "/usr/bin/time" : argv[0], withTime ? ["-f", "cpu %U %S", ...argv] : argv.slice(1), {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8"
  })
  const wallS = Number(process.hrtime.bigint() - started) / 1e9
  if (result.status !== 0) throw new Error(`${argv.join(" ")} exited ${result.status}: ${result.stderr}`)
  const cpu = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(result.stderr ?? "")
  return { wallS, cpuS: cpu === null ? undefined : Number(cpu[1]) + Number(cpu[2]) }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

export const run = async (ctx) => {
  const { log } = ctx
  const work = tempDir("birzha-bench-command-")
  try {
    const builds = [["this build", resolve(repoRoot, "packages/cli/dist/bin.js")]]
    if (process.env.BENCH_CLI_BEFORE) builds.push(["before", resolve(process.env.BENCH_CLI_BEFORE)])
    const dataDir = join(work.dir, "data")
    const database = await benchDatabase(ctx, "command")
    // Both stores migrated by this build, one kept message each on Postgres.
    for (const env of [{ BIRZHA_DATA_DIR: dataDir }, { DATABASE_URL: database.url }]) {
      timedRun([process.execPath, builds[0][1], "migrate"], env, work.dir)
    }
    await withClient(database.url, (client) =>
      client.query("INSERT INTO development_mailbox (to_address, subject, text_body, html_body) VALUES ('bench@example.com', 'Code', 'Code: 123456', '<p>Code: 123456</p>')"))

    const cases = [
      ["node -e 0", () => [process.execPath, "-e", "0"], {}, false],
      ["birzha --help", (bin) => [process.execPath, ...commandFlags(bin), bin, "--help"], {}, true],
      ["birzha mail list (embedded, no host)", (bin) => [process.execPath, ...commandFlags(bin), bin, "mail", "list", "--limit", "1"], { BIRZHA_DATA_DIR: dataDir }, true],
      ["birzha mail list (Postgres)", (bin) => [process.execPath, ...commandFlags(bin), bin, "mail", "list", "--limit", "1"], { DATABASE_URL: database.url }, true]
    ]
    const samples = new Map()
    for (let round = 0; round < runs; round++) {
      for (const [what, argv, env, perBuild] of cases) {
        for (const [build, bin] of perBuild ? builds : builds.slice(0, 1)) {
          const key = perBuild ? `${what} — ${build}` : what
          const list = samples.get(key) ?? []
          list.push(timedRun(argv(bin), env, work.dir))
          samples.set(key, list)
        }
      }
    }

    const node = median(samples.get("node -e 0").map((s) => s.wallS))
    const results = {}
    log("")
    log(`  ${"command".padEnd(52)} ${"wall (median)".padStart(13)} ${"range".padStart(13)} ${"CPU".padStart(7)} ${"× node -e 0".padStart(11)}`)
    for (const [key, list] of samples) {
      const walls = list.map((s) => s.wallS)
      const cpus = list.map((s) => s.cpuS).filter((c) => c !== undefined)
      const wall = median(walls)
      results[key] = { wallS: wall, minS: Math.min(...walls), maxS: Math.max(...walls), cpuS: cpus.length > 0 ? median(cpus) : undefined }
      log(
        `  ${key.padEnd(52)} ${`${wall.toFixed(2)} s`.padStart(13)} ${`${Math.min(...walls).toFixed(2)}–${Math.max(...walls).toFixed(2)}`.padStart(13)} ${
          cpus.length > 0 ? `${median(cpus).toFixed(2)} s`.padStart(7) : "".padStart(7)
        } ${(wall / node).toFixed(1).padStart(10)}×`
      )
    }
    if (builds.length > 1) {
      for (const [what, , , perBuild] of cases) {
        if (!perBuild) continue
        const ratio = results[`${what} — this build`].wallS / results[`${what} — before`].wallS
        log(`  ${what}: this build / before ${ratio.toFixed(2)}`)
      }
    }
    const slowest = Math.max(...cases.filter(([, , , perBuild]) => perBuild).map(([what]) => results[`${what} — this build`].wallS))
    log(`  target: each under ${TARGET_S} s (on the quiet machine: Node's start there is about 0.04 s); slowest here ${slowest.toFixed(2)} s`)
    return { runs, nodeStartS: node, results, pass: slowest < TARGET_S }
  } finally {
    work.remove()
  }
}
