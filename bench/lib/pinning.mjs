// Optional CPU pinning with `taskset` (Linux, util-linux): the server under test on one core, the
// load generator (autocannon, in the runner's process) on another, as the host-overhead measurements (bench/README.md)
// were made. On a 2-core machine this keeps the two from taking turns on the same core, so the
// server's CPU per request is not inflated by cache and scheduler churn. Postgres is not pinned
// (its processes are not ours): it runs on whichever core is free.

import { spawnSync } from "node:child_process"
import { cpus } from "node:os"

/** The core of the servers under test and the core of the load generator. */
export const serverCore = 0
export const loadgenCore = 1

let available
/** Whether `taskset` runs here and there are at least two cores to split. */
export const pinningAvailable = () => {
  if (available === undefined) {
    const probe = spawnSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" })
    available = probe.status === 0 && cpus().length >= 2
  }
  return available
}

/** The command that runs `node [args]` pinned to `core` (taskset execs node: the pid stays node's). */
export const pinnedCommand = (core, args) => ({ command: "taskset", args: ["-c", String(core), process.execPath, ...args] })

const setAffinity = (cpuList, pid) => {
  // -a: every thread of the process (autocannon runs on the main thread; libuv and V8 threads too).
  const result = spawnSync("taskset", ["-a", "-p", "-c", cpuList, String(pid)], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`taskset -a -p -c ${cpuList} ${pid} failed: ${result.stderr || result.error?.message}`)
}

/** Pins the runner (the load generator) to its core. */
export const pinRunner = () => setAffinity(String(loadgenCore), process.pid)

/** Lets the runner use every core again (children it starts later inherit this). */
export const unpinRunner = () => setAffinity(`0-${cpus().length - 1}`, process.pid)

/** What the output says about pinning. */
export const pinningNote = (pinned) =>
  pinned
    ? `CPU pinning: servers under test on core ${serverCore}, load generator on core ${loadgenCore} (taskset); Postgres unpinned`
    : `CPU pinning: off${pinningAvailable() ? " (--pin to enable)" : " (taskset missing or fewer than 2 cores)"}`
