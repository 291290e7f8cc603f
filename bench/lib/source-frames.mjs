// Frames of V8's profiles (CPU and sampling heap) named by their original source: a frame in a
// bundle is mapped through the source map beside it (`<file>.map`), so the host's bundled code
// shows as the package and file it came from. Shared by bench/lib/profile-summary.mjs and
// bench/lib/allocation-summary.mjs.
import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

/** The package a source belongs to: a node_modules name, `@birzha/<workspace>`, node's internals or V8. */
export const packageOf = (source) => {
  const inModules = /node_modules\/(@[^/]+\/[^/]+|[^/@][^/]*)\/(?!.*node_modules\/)/.exec(source)
  if (inModules !== null) return inModules[1]
  const workspace = /(?:^|\/)packages\/([^/]+)\//.exec(source) ?? /^\.\.\/\.\.\/([^/]+)\/src\//.exec(source)
  if (workspace !== null) return `@birzha/${workspace[1]}`
  if (source.startsWith("node:")) return "node internals"
  return source === "" ? "V8 and native" : source
}

/** `frameOf(callFrame)`: `{ source, line, name }`, the source shortened (repo-relative, `node_modules/<pkg>/…`). */
export const sourceFrames = (repoRoot) => {
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
  return { frameOf }
}
