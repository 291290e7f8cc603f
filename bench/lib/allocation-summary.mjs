// Bytes of a V8 sampling heap profile (.heapprofile: HeapProfiler.stopSampling's `profile`) by the
// function that allocated them and by package, with frames of a bundle mapped to their original
// source through its source map (`<file>.map` beside it), as bench/allocations.bench.mjs prints them.
import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

const packageOf = (source) => {
  const inModules = /node_modules\/(@[^/]+\/[^/]+|[^/@][^/]*)\/(?!.*node_modules\/)/.exec(source)
  if (inModules !== null) return inModules[1]
  const workspace = /(?:^|\/)packages\/([^/]+)\//.exec(source) ?? /^\.\.\/\.\.\/([^/]+)\/src\//.exec(source)
  if (workspace !== null) return `@birzha/${workspace[1]}`
  if (source.startsWith("node:")) return "node internals"
  return source === "" ? "V8 and native" : source
}

/** `{ total, byFunction, byPackage }`, the lists as `[name, bytes]` from the largest. */
export const allocationsByFrame = (profile, repoRoot) => {
  const maps = new Map()
  const mapOf = (url) => {
    if (!url.startsWith("file://")) return undefined
    if (!maps.has(url)) {
      const path = fileURLToPath(url)
      maps.set(url, existsSync(`${path}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, "utf8"))) : undefined)
    }
    return maps.get(url)
  }
  const shorten = (source) =>
    source.replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "node_modules/").replace(`${repoRoot}/`, "").replace(/^(\.\.\/)+(?=[a-z-]+\/src\/)/, "packages/")
  const frameOf = (callFrame) => {
    const entry = mapOf(callFrame.url)?.findEntry(callFrame.lineNumber, callFrame.columnNumber)
    const source = entry?.originalSource === undefined ? callFrame.url.replace(/^file:\/\//, "") : entry.originalSource
    const line = entry?.originalSource === undefined ? callFrame.lineNumber + 1 : entry.originalLine + 1
    return { source: shorten(source), line, name: callFrame.functionName || "(anonymous)" }
  }
  const byFunction = new Map()
  const byPackage = new Map()
  let total = 0
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes)
  const visit = (node) => {
    if (node.selfSize > 0) {
      const frame = frameOf(node.callFrame)
      add(byFunction, `${frame.name} ${frame.source === "" ? "(native)" : `${frame.source}:${frame.line}`}`, node.selfSize)
      add(byPackage, packageOf(frame.source), node.selfSize)
      total += node.selfSize
    }
    for (const child of node.children ?? []) visit(child)
  }
  visit(profile.head)
  const sorted = (map) => [...map].sort((a, b) => b[1] - a[1])
  return { total, byFunction: sorted(byFunction), byPackage: sorted(byPackage) }
}
