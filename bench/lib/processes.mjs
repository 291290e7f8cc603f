// Child processes of the bench runner: the host under test and the bare baseline server.
//
// Both run as separate Node processes so that neither shares an event loop with the load
// generator (autocannon runs in the runner's own process). Their stdout/stderr go straight
// to a log file (not through a pipe into the runner), so per-request logging costs the
// process that logs, not the load generator.

import { spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import http from "node:http"
import net from "node:net"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { pinnedCommand } from "./pinning.mjs"

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** Every child still alive, so that the runner can stop them on any exit path. */
const live = new Set()

/**
 * The node flags of a command's own first line (`#!/usr/bin/env -S node …`): the flags `birzha`
 * runs with, so a benchmark that starts `node <flags> bin.js serve|worker` measures it as it runs.
 */
export const commandFlags = (entry = resolve(repoRoot, "packages/cli/dist/bin.js")) => {
  const first = readFileSync(entry, "utf8").slice(0, 200).split("\n")[0] ?? ""
  const found = /^#!\/usr\/bin\/env -S node (.*)$/.exec(first)
  return found === null ? [] : found[1].split(" ").filter(Boolean)
}

export const liveChildren = () => [...live]

/** Synchronous last resort (process 'exit'): SIGTERM to whatever is still running. */
export const signalAllSync = (signal = "SIGTERM") => {
  for (const child of live) {
    try {
      process.kill(child.pid, signal)
    } catch {
      // already gone
    }
  }
}

/** A TCP port on the loopback that was free a moment ago. */
export const freePort = (host = "127.0.0.1") =>
  new Promise((resolvePort, reject) => {
    const server = net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, host, () => {
      const { port } = server.address()
      server.close(() => resolvePort(port))
    })
  })

/** One GET on the loopback (with optional request `headers`); resolves with status, headers and the body bytes. */
export const get = (url, { timeoutMs = 5_000, headers = {} } = {}) =>
  new Promise((resolveGet, reject) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs, headers }, (res) => {
      const chunks = []
      res.on("data", (chunk) => chunks.push(chunk))
      res.on("end", () => resolveGet({ status: res.statusCode, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("timeout", () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)))
    req.on("error", reject)
  })

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const tail = (file, maxBytes = 16_384) => {
  try {
    const size = statSync(file).size
    const text = readFileSync(file).subarray(Math.max(0, size - maxBytes)).toString("utf8")
    return size > maxBytes ? `[... ${size - maxBytes} earlier bytes in ${file}]\n${text}` : text
  } catch (error) {
    return `(no output: ${error.message})`
  }
}

/** Clock ticks per second for /proc/<pid>/stat; 100 on every Linux we run on. */
const CLK_TCK = 100

/** CPU seconds (user + system, all threads) a child has used so far, or undefined off Linux. */
export const childCpuSeconds = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK
  } catch {
    return undefined
  }
}

/** A process's resident set now and its peak since start or the last `resetPeakRss` (bytes), from /proc; undefined off Linux. */
export const residentMemory = (pid) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024
    return { rss: kb("VmRSS"), peakRss: kb("VmHWM") }
  } catch {
    return undefined
  }
}

/** Sets a process's peak RSS (VmHWM) to its RSS now (`5` to /proc/<pid>/clear_refs, Linux ≥ 4.0); false when that is not possible. */
export const resetPeakRss = (pid) => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}

/**
 * Watches a process's memory from now until `stop()`, which returns `{ rss, peakRss }` in bytes:
 * the RSS at the start and the highest RSS in between. The peak is the kernel's own high-water
 * mark, reset at the start, so no short spike is missed; where it cannot be reset, RSS is sampled
 * every 20 ms instead. Undefined readings off Linux.
 */
export const watchMemory = (pid) => {
  const start = residentMemory(pid)
  if (start === undefined) return { stop: () => ({ rss: undefined, peakRss: undefined }) }
  if (resetPeakRss(pid)) {
    return { stop: () => ({ rss: start.rss, peakRss: residentMemory(pid)?.peakRss ?? undefined }) }
  }
  let peak = start.rss
  const timer = setInterval(() => {
    const now = residentMemory(pid)
    if (now !== undefined) peak = Math.max(peak, now.rss)
  }, 20)
  return {
    stop: () => {
      clearInterval(timer)
      const now = residentMemory(pid)
      return { rss: start.rss, peakRss: Math.max(peak, now?.rss ?? 0) }
    }
  }
}

/**
 * Starts `node [nodeOptions] entry ...args` with its output in `<workDir>/<label>.log`, waits
 * until `readyUrl` answers 200 (or the child exits, or the timeout passes) and returns a handle.
 * With `core`, the process runs pinned to that core (`taskset -c core node ...`).
 * On failure the child is stopped and the tail of its output is part of the error message.
 */
export const startProcess = async ({
  label,
  entry,
  args = [],
  nodeOptions = [],
  env = {},
  host = "127.0.0.1",
  port,
  readyPath,
  readyTimeoutMs = 60_000,
  workDir,
  core
}) => {
  const logFile = join(workDir, `${label}.log`)
  const fd = openSync(logFile, "a")
  const startedAt = Date.now()
  const nodeArgs = [...nodeOptions, entry, ...args]
  const { command, args: commandArgs } = core === undefined ? { command: process.execPath, args: nodeArgs } : pinnedCommand(core, nodeArgs)
  const child = spawn(command, commandArgs, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", fd, fd]
  })
  closeSync(fd)
  live.add(child)

  let exited = null
  const exitPromise = new Promise((resolveExit) => {
    child.once("exit", (code, signal) => {
      exited = { code, signal }
      live.delete(child)
      resolveExit(exited)
    })
  })
  const spawnError = new Promise((_, reject) => child.once("error", reject))
  spawnError.catch(() => {})

  const url = `http://${host}:${port}`
  const handle = {
    label,
    pid: child.pid,
    core,
    url,
    logFile,
    output: () => tail(logFile),
    cpuSeconds: () => childCpuSeconds(child.pid),
    get exited() {
      return exited
    },
    /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
    stop: async ({ graceMs = 10_000 } = {}) => {
      if (exited) return { ...exited, forced: false }
      child.kill("SIGTERM")
      const timer = sleep(graceMs).then(() => "timeout")
      const outcome = await Promise.race([exitPromise, timer])
      if (outcome === "timeout") {
        child.kill("SIGKILL")
        return { ...(await exitPromise), forced: true }
      }
      return { ...outcome, forced: false }
    }
  }

  const deadline = startedAt + readyTimeoutMs
  let lastProblem = "no answer yet"
  while (true) {
    if (exited) {
      throw new Error(
        `${label} exited before it was ready (code ${exited.code}, signal ${exited.signal}); its output:\n${tail(logFile)}`
      )
    }
    if (Date.now() > deadline) {
      await handle.stop({ graceMs: 5_000 })
      throw new Error(
        `${label} was not ready after ${readyTimeoutMs / 1000} s (GET ${readyPath}: ${lastProblem}); its output:\n${tail(logFile)}`
      )
    }
    try {
      const res = await Promise.race([get(url + readyPath, { timeoutMs: 2_000 }), spawnError])
      if (res.status === 200) break
      lastProblem = `status ${res.status}: ${res.body.toString("utf8").slice(0, 200)}`
    } catch (error) {
      lastProblem = error.message
    }
    await sleep(100)
  }
  handle.readyAfterMs = Date.now() - startedAt
  return handle
}

/** A fresh temporary directory; removed by the returned function. */
export const tempDir = (prefix) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
