import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

// The published shape, not the workspace: pack the built packages as `pnpm publish` would and
// install the tarballs into an empty npm project, then compile and run code against them there.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const work = mkdtempSync(join(tmpdir(), "birzha-pack-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_fund: "false", npm_config_audit: "false" } })

describe("the @birzha/client package", () => {
  it("installs from its tarball into an empty project, with types that resolve and code that runs", () => {
    const tarballs = join(work, "tarballs")
    for (const pkg of ["domain", "client-sdk"]) {
      run("npx", ["-y", "pnpm@10.34.9", "pack", "--pack-destination", tarballs], join(root, "packages", pkg))
    }
    const files = readdirSync(tarballs).map((file) => join(tarballs, file))
    expect(files).toHaveLength(2)

    const project = join(work, "project")
    run("mkdir", ["-p", project], work)
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    run("npm", ["install", "--no-package-lock", ...files], project)

    writeFileSync(
      join(project, "main.ts"),
      `import { createBirzhaClient, BirzhaError, type BirzhaPromiseClient } from "@birzha/client"
const client: BirzhaPromiseClient = createBirzhaClient({ baseUrl: "http://127.0.0.1:1", apiKey: "key" })
const types: Promise<{ readonly types: ReadonlyArray<string> }> = client["events.types"]()
types.catch((error: unknown) => {
  if (error instanceof BirzhaError) console.log(error.code)
})
// @ts-expect-error an operation id the catalog does not have
client["events.nope"]
`
    )
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", noEmit: true, skipLibCheck: false, types: [] }, files: ["main.ts"] })
    )
    run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], project)

    writeFileSync(
      join(project, "check.mjs"),
      `import { createBirzhaClient } from "@birzha/client"
const client = createBirzhaClient({ baseUrl: "http://127.0.0.1:1" })
console.log(JSON.stringify(Object.keys(client).sort()))
const error = await client["health.live"]().catch((e) => e)
console.log(error.code)
`
    )
    const [methods, code] = run(process.execPath, ["check.mjs"], project).trim().split("\n")
    expect(JSON.parse(methods!)).toContain("events.types")
    expect(code).toBe("transport_error")
  }, 240_000)
})
