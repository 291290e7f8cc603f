// The CPU an idle host uses: `birzha serve` with no request at all, on the embedded database
// (PGlite in the host's process, the zero-setup default) and on a Postgres server. After ready the
// host settles (its jobs' first runs, V8's start-up collections), then its CPU (user + system, all
// threads, from /proc/<pid>/stat) is read over the idle window, as a share of one core. See
// bench/README.md, "`idle`".
//
// BENCH_IDLE_SETTLE: seconds after ready before the window (default 20).
// BENCH_IDLE_SECONDS: the measured idle window (default 60).
import { benchDatabase } from "./lib/database.mjs"
import { childCpuSeconds } from "./lib/processes.mjs"

export const name = "idle"
export const description = "CPU of an idle host (no request) on the embedded database and on Postgres, as a share of one core"

/** The target: an idle embedded host costs nothing measurable. */
const TARGET_SHARE = 0.01

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

export const run = async (ctx) => {
  const { log } = ctx
  const settleSeconds = Number(process.env.BENCH_IDLE_SETTLE ?? 20)
  const windowSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 60)
  log(`  settle ${settleSeconds} s after ready, then ${windowSeconds} s idle measured`)
  const rows = []
  for (const backend of ["embedded", "postgres"]) {
    if (backend === "embedded" && process.env.DATABASE_URL) {
      log("  embedded: skipped (DATABASE_URL is set in the runner's environment)")
      continue
    }
    const env = backend === "postgres" ? { DATABASE_URL: (await benchDatabase(ctx, "idle")).url } : {}
    const host = await ctx.startHost({ env })
    await sleep(settleSeconds * 1000)
    const before = childCpuSeconds(host.pid)
    await sleep(windowSeconds * 1000)
    const after = childCpuSeconds(host.pid)
    if (before === undefined || after === undefined) throw new Error("no /proc/<pid>/stat: the idle CPU is measured on Linux only")
    rows.push({ backend, readyAfterMs: host.readyAfterMs, cpuSeconds: after - before, share: (after - before) / windowSeconds })
    await host.stopAndReport()
  }
  log("")
  const header = ["database", "ready ms", `CPU s in ${windowSeconds} s`, "share of a core"]
  const lines = rows.map((r) => [r.backend, String(r.readyAfterMs), r.cpuSeconds.toFixed(2), `${(r.share * 100).toFixed(2)} %`])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)))
  for (const line of [header, ...lines]) log(line.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "))
  log("")
  const embedded = rows.find((r) => r.backend === "embedded")
  if (embedded !== undefined) {
    log(`  idle embedded host: ${(embedded.share * 100).toFixed(2)} % of a core  ${embedded.share < TARGET_SHARE ? "PASS" : "ABOVE TARGET"} (target < ${TARGET_SHARE * 100} %)`)
  }
  return { settleSeconds, windowSeconds, rows }
}
