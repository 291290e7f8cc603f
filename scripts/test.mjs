// The README's test command (`pnpm test`): type-checks the whole repository while it builds the
// JavaScript the tests run (the CLI and the web application's bundles) and then vitest runs every
// test. The two overlap instead of one after the other: the type check is seconds of CPU against
// the suite's minutes. Both always run to the end; the command fails when either failed, and says
// which. Arguments go to vitest.
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const bin = (name) => join(root, "node_modules", ".bin", name)

/** Runs a command in the repository's root; resolves with its exit code (1 when it could not start). */
const run = (command, args, options = {}) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: options.stdio ?? "inherit" })
    let output = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk) => (output += chunk))
    child.stderr?.setEncoding("utf8").on("data", (chunk) => (output += chunk))
    child.on("error", (error) => {
      output += `${error.message}\n`
      resolve({ code: 1, output })
    })
    child.on("close", (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output }))
  })

const started = Date.now()
const seconds = () => `${((Date.now() - started) / 1000).toFixed(0)} s`

// The type check's output is held and printed after vitest's, so the two do not interleave. It is
// TypeScript 7's checker (`typescript-7`; the `typescript` package, 5.9, stays the library the
// builds and the release checks use), on one thread: the suite keeps every core busy, and one
// checker does the least work (17 CPU-s where TypeScript 5.9 spent 55; docs/test-suite.md). It needs
// nothing built, so it starts at once, beside the build, which keeps about one core busy.
const tsc7 = join(root, "node_modules", "typescript-7", "bin", "tsc")
const typecheck = run(process.execPath, [tsc7, "-p", "tsconfig.json", "--singleThreaded"], { stdio: ["ignore", "pipe", "pipe"] })
  .then((result) => ({ ...result, at: seconds() }))
const reportTypecheck = (checked) => {
  process.stdout.write(`\ntypecheck (TypeScript 7, tsc -p tsconfig.json): ${checked.code === 0 ? "passed" : "FAILED"} after ${checked.at}\n`)
  if (checked.output.trim() !== "") process.stdout.write(checked.output)
}

// The JavaScript of every package whose inputs changed since its last build here, as `pnpm start`
// builds it (scripts/build-changed.mjs): all of them on a clean clone, in dependency order with
// independent packages at once, without pnpm's recursive run around each (3 s less on a clean clone).
const built = await run(process.execPath, [join(root, "scripts", "build-changed.mjs")])
if (built.code !== 0) {
  reportTypecheck(await typecheck)
  process.stderr.write(`\npnpm test: the build failed (exit code ${built.code}); no test ran\n`)
  process.exit(built.code)
}

const tests = await run(bin("vitest"), ["run", ...process.argv.slice(2)])
const checked = await typecheck
reportTypecheck(checked)
process.stdout.write(`tests (vitest run): ${tests.code === 0 ? "passed" : "FAILED"}; all done after ${seconds()}\n`)
process.exit(checked.code !== 0 ? checked.code : tests.code)
