#!/usr/bin/env node
// The top functions by self time of V8 CPU profiles (.cpuprofile, as `node --cpu-prof` writes them).
//
// Usage: node bench/lib/profile-summary.mjs <file-or-dir> [...] [--top=25] [--by=function|package]
//                                           [--pid=PID] [--between=START,END] [--requests=N]
//   A directory means every .cpuprofile in it (--pid: only the profile of that process, from
//   node's file name CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile). --by=package groups by
//   the package (node_modules name, the workspace package, node's internals or V8) instead of by
//   function; a bundle's frames are mapped to their original source first. --between keeps the
//   samples between two instants of the monotonic clock in µs (the
//   clock of V8's profiles; bench/run.mjs --cpu-prof prints the window of each measured host run),
//   so start-up and warm-up are left out. --requests=N (the requests answered in that window) adds
//   CPU µs per request to every row.
//
// Self time of a function: the samples whose top frame it is, each weighted by the time to the
// next sample (V8's timeDeltas). "(idle)" is time the process waited for I/O; it is left out of the
// percentages, which are of the busy time.

import { readdirSync, readFileSync, statSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { packageOf, sourceFrames } from "./source-frames.mjs"

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const found = args.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : found.slice(name.length + 3)
}
const top = Number(option("top", "25"))
const by = option("by", "function")
const requests = option("requests", undefined) === undefined ? undefined : Number(option("requests", "0"))
const pid = option("pid", undefined)
const between = option("between", undefined)?.split(",").map(Number)
if (between !== undefined && (between.length !== 2 || between.some((x) => !Number.isFinite(x)))) {
  console.error("--between wants START,END in µs of the monotonic clock")
  process.exit(2)
}
const inputs = args.filter((a) => !a.startsWith("--"))
if (inputs.length === 0 || !["function", "package"].includes(by) || !(top > 0)) {
  console.error("usage: node bench/lib/profile-summary.mjs <file.cpuprofile|dir> [...] [--top=25] [--by=function|package] [--requests=N]")
  process.exit(2)
}

const files = inputs.flatMap((input) =>
  statSync(input).isDirectory()
    ? readdirSync(input).filter((f) => f.endsWith(".cpuprofile")).sort().map((f) => join(input, f))
    : [input]
).filter((file) => pid === undefined || basename(file).split(".")[3] === pid)
if (files.length === 0) {
  console.error(`no .cpuprofile in ${inputs.join(", ")}`)
  process.exit(1)
}

// A bundle's frames are named by their original source (its source map), so the host's bundled
// code shows as the package it came from.
const { frameOf } = sourceFrames(join(dirname(fileURLToPath(import.meta.url)), "..", ".."))
const named = new Map()
const nameOf = (callFrame) => {
  const key = `${callFrame.url}:${callFrame.lineNumber}:${callFrame.columnNumber}:${callFrame.functionName}`
  if (!named.has(key)) {
    const frame = frameOf(callFrame)
    named.set(key, by === "package" ? packageOf(frame.source) : `${frame.name}  ${frame.source === "" ? "" : `${frame.source}:${frame.line}`}`.trim())
  }
  return named.get(key)
}

const self = new Map()
let busy = 0
let idle = 0
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8"))
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const { samples, timeDeltas } = profile
  let at = profile.startTime
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i]
    if (between !== undefined && (at < between[0] || at > between[1])) continue
    const micros = timeDeltas[i + 1] ?? 0
    const frame = nodes.get(samples[i]).callFrame
    if (frame.functionName === "(idle)") {
      idle += micros
      continue
    }
    busy += micros
    const key = nameOf(frame)
    self.set(key, (self.get(key) ?? 0) + micros)
  }
}

const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)
console.log(`${files.length} profile(s): ${files.map((f) => basename(f)).join(", ")}${between ? ` between ${between.join(" and ")} µs` : ""}`)
console.log(`busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s${requests ? `; ${requests} requests: ${(busy / requests).toFixed(1)} µs busy per request` : ""}`)
console.log("")
const header = ["self ms", "self %", ...(requests ? ["µs/req"] : []), by === "package" ? "package" : "function  location"]
console.log(header.join("  "))
let cumulative = 0
for (const [key, micros] of rows) {
  cumulative += micros
  const cells = [
    (micros / 1000).toFixed(1).padStart(header[0].length),
    `${((micros / busy) * 100).toFixed(1)}%`.padStart(header[1].length),
    ...(requests ? [(micros / requests).toFixed(1).padStart(header[2].length)] : []),
    key
  ]
  console.log(cells.join("  "))
}
console.log(`\ntop ${rows.length} together: ${((cumulative / busy) * 100).toFixed(1)}% of busy time`)
