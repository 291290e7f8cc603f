// What making `@birzha/client` costs, and its first call: each operation's method is derived on its
// first call (`HttpApiClient.endpoint`), against the baseline of deriving every operation's method
// when the client is made (`HttpApiClient.make(BirzhaApi)`, what the client did before), in the
// same process, alternated. Reads packages/client-sdk/dist and packages/domain/dist: build them first (`npx -y pnpm@10.34.9
// run build:js`). Runs alone too: `node bench/client-start.bench.mjs`.
import { readFileSync, realpathSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

export const name = "client-start"
export const description = "@birzha/client: making the client and its first call, against deriving every operation at once"

const root = fileURLToPath(new URL("..", import.meta.url))
const client = join(root, "packages", "client-sdk")
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export const run = async () => {
  const rounds = Number(process.env["BENCH_CLIENT_ROUNDS"] ?? 15)
  const sdk = await import(pathToFileURL(join(client, "dist", "index.js")).href)
  // The ES modules of effect and the platform that the client imports, and the domain's built declaration.
  const esm = (name) => {
    const dir = realpathSync(join(client, "node_modules", name))
    return import(pathToFileURL(join(dir, JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).exports["."].import)).href)
  }
  const { Effect } = await esm("effect")
  const { FetchHttpClient, HttpApiClient } = await esm("@effect/platform")
  const { BirzhaApi } = await import(pathToFileURL(join(root, "packages", "domain", "dist", "index.js")).href)
  const baseUrl = "http://127.0.0.1:9"
  const time = (f) => {
    const started = performance.now()
    f()
    return performance.now() - started
  }
  const lazy = []
  const firstCall = []
  const eager = []
  for (let round = 0; round < rounds; round++) {
    let made
    lazy.push(time(() => (made = sdk.createBirzhaClient({ baseUrl }))))
    // The first call's synchronous part: the method's derivation, encoding, starting the request
    // (not awaited: nothing listens there).
    firstCall.push(time(() => made["tasks.save"]({ payload: { requestUuid: crypto.randomUUID(), data: {} } }).catch(() => undefined)))
    eager.push(time(() => Effect.runSync(HttpApiClient.make(BirzhaApi, { baseUrl }).pipe(Effect.provide(FetchHttpClient.layer)))))
  }
  const result = { rounds, createMs: median(lazy), firstCallMs: median(firstCall), baselineCreateMs: median(eager) }
  result.ratio = (result.createMs + result.firstCallMs) / result.baselineCreateMs
  console.log(`client-start (medians of ${rounds} rounds, alternated):`)
  console.log(`  createBirzhaClient: ${result.createMs.toFixed(1)} ms; its first call, the synchronous part (the method's derivation included): ${result.firstCallMs.toFixed(1)} ms`)
  console.log(`  baseline, every operation derived at once (HttpApiClient.make): ${result.baselineCreateMs.toFixed(1)} ms`)
  console.log(`  made and first call / baseline: ${result.ratio.toFixed(3)}`)
  return result
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run()
