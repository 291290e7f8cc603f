// @birzha/client's size: its JavaScript and declarations as published (raw, gzip -9, and the
// packed tarball), and what a browser bundle carries that uses three operations, against one
// that uses one operation and one that names every export (whether tree-shaking trims anything).
// Reads packages/client-sdk/dist: build it first (`npx -y pnpm@10.34.9 --filter @birzha/client
// run build`). Runs alone too: `node bench/client-size.bench.mjs`.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { gzipSync } from "node:zlib"

export const name = "client-size"
export const description = "@birzha/client: JS and declarations (raw, gzip, packed) and a 3-operation browser bundle"

const root = fileURLToPath(new URL("..", import.meta.url))
const client = join(root, "packages", "client-sdk")
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`
const sizes = (bytes) => ({ raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length })

/** A browser bundle (esbuild, minified, ESM) of `source`, importing the published JavaScript. */
const bundle = async (source) => {
  const { build } = await import("esbuild")
  const dir = mkdtempSync(join(tmpdir(), "birzha-client-bundle-"))
  try {
    writeFileSync(join(dir, "entry.js"), source)
    const result = await build({
      entryPoints: [join(dir, "entry.js")],
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      write: false,
      alias: { "@birzha/client": join(client, "dist", "index.js") },
      nodePaths: [join(client, "node_modules")],
      logLevel: "error"
    })
    return sizes(Buffer.from(result.outputFiles[0].contents))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const run = async () => {
  const js = sizes(readFileSync(join(client, "dist", "index.js")))
  const dts = sizes(readFileSync(join(client, "dist", "index.d.ts")))
  // npm's count of the tarball (the package's own files, the prepack left out: dist is built).
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: client, encoding: "utf8" }))
  const three = await bundle(`import { createBirzhaClient } from "@birzha/client"
const birzha = createBirzhaClient({ baseUrl: location.origin })
const page = await birzha.listPublications()
console.log(await birzha.getPublication({ path: { uuid: page.items[0].uuid } }))
console.log(await birzha.tasks.save({ payload: { requestUuid: crypto.randomUUID(), data: {} } }))
`)
  const one = await bundle(`import { createBirzhaClient } from "@birzha/client"
console.log(await createBirzhaClient({ baseUrl: location.origin }).listPublications())
`)
  const everything = await bundle(`import * as all from "@birzha/client"
console.log(all)
`)
  const rows = [
    ["dist/index.js (ESM)", kb(js.raw), kb(js.gzip)],
    ["dist/index.d.ts", kb(dts.raw), kb(dts.gzip)],
    ["packed tarball (npm pack)", kb(packed.unpackedSize) + " unpacked", kb(packed.size)],
    ["browser bundle, 3 operations (esbuild, minified)", kb(three.raw), kb(three.gzip)],
    ["browser bundle, 1 operation", kb(one.raw), kb(one.gzip)],
    ["browser bundle, every export", kb(everything.raw), kb(everything.gzip)]
  ]
  console.log("| | raw | gzip -9 |\n|---|---|---|")
  for (const row of rows) console.log(`| ${row.join(" | ")} |`)
  return { js, dts, packed: { size: packed.size, unpackedSize: packed.unpackedSize }, three, one, everything }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run()
