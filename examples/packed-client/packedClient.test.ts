import { type ChildProcess, execFile, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../testing/postgres.js"
import { signIn } from "../../testing/signIn.js"

// The published shape, not the workspace: the packed @birzha/client (as `pnpm publish` would pack
// it), installed alone into an empty npm project (its dependencies from the registry), this folder's
// script built there with strict tsc and run against a host on Postgres, in its own process, as a
// third party would reach a deployed one.
// In the release checks (scripts/release-dry-run.mjs) the tarball is the one the dry run packed
// (BIRZHA_PACKED_CLIENT) and the host is the `birzha` command installed from the packed servers
// (BIRZHA_PACKED_HOST): nothing is packed or built twice. Run alone, the test packs the client
// itself (its `prepack` builds it) and serves with the workspace's build (`build:js`).
const example = dirname(fileURLToPath(import.meta.url))
const root = join(example, "..", "..")
const packageDir = join(root, "packages", "client-sdk")
const packedClient = process.env["BIRZHA_PACKED_CLIENT"]
const hostBin = process.env["BIRZHA_PACKED_HOST"] ?? join(root, "packages", "cli", "dist", "bin.js")
const work = mkdtempSync(join(tmpdir(), "birzha-packed-client-"))
let database: TestDatabase
let host: ChildProcess
let url: string
let db: Pg.Client
let origin: string
beforeAll(async () => {
  database = await createTestDatabase("packed_client")
  const port = await freePort()
  origin = `http://localhost:${port}`
  url = `http://127.0.0.1:${port}`
  host = spawn(process.execPath, [hostBin, "serve"], {
    env: { ...process.env, DATABASE_URL: database.url, BIRZHA_PORT: String(port), BIRZHA_PUBLIC_ORIGIN: origin, BIRZHA_TRUST_PROXY: "1" },
    stdio: "ignore"
  })
  const exited = new Promise<never>((_, reject) => host.once("exit", (code) => reject(new Error(`birzha serve exited (${code})`))))
  const ready = async () => {
    for (;;) {
      const status = await fetch(`${url}/api/readyz`).then((response) => response.status, () => 0)
      if (status === 200) return
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  exited.catch(() => undefined) // once ready, its exit (killed after the test) is no failure
  await Promise.race([ready(), exited])
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  host?.kill()
  await database?.drop()
  rmSync(work, { recursive: true, force: true })
})

// Asynchronous: the service runs in this process and must answer while the script runs.
const run = async (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  (await promisify(execFile)(command, [...args], {
    cwd,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, npm_config_fund: "false", npm_config_audit: "false", ...env }
  })).stdout

describe("examples/packed-client", { timeout: 1_800_000 }, () => {
  it("installs the packed client alone with npm, type-checks under strict and runs against a host", async () => {
    const tarballs = join(work, "tarballs")
    if (packedClient === undefined) await run("npx", ["-y", "pnpm@10.34.9", "pack", "--pack-destination", tarballs], packageDir)
    const [tarball, ...more] = packedClient === undefined ? readdirSync(tarballs).map((file) => join(tarballs, file)) : [packedClient]
    expect(more).toEqual([])
    const manifest = JSON.parse(await run("tar", ["-xzOf", tarball!, "package/package.json"], work)) as {
      dependencies: Record<string, string>
      exports: Record<string, Record<string, string>>
    }
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["@effect/platform", "effect"])
    expect(JSON.stringify(manifest)).not.toContain("workspace:")
    // The published exports name no source file (the workspace's `source` condition stays home).
    expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", import: "./dist/index.js" })
    expect((await run("tar", ["-tzf", tarball!], work)).split("\n").filter(Boolean).sort())
      .toEqual(["package/README.md", "package/dist/index.d.ts", "package/dist/index.js", "package/dist/index.js.map", "package/package.json"])

    const project = join(work, "project")
    mkdirSync(project)
    for (const file of ["package.json", "tsconfig.json", "main.ts", "types.ts"]) copyFileSync(join(example, file), join(project, file))
    await run("npm", ["install", "--no-package-lock", "--prefer-offline", tarball!, "@types/node@20.19.43"], project)
    expect(readdirSync(join(project, "node_modules", "@birzha"))).toEqual(["client"])
    expect(existsSync(join(project, "node_modules", "@birzha", "domain"))).toBe(false)
    await run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], project)

    const owner = await signIn({ url, origin, db })
    const output = JSON.parse(await run(process.execPath, [join("dist", "main.js")], project, {
      BIRZHA_URL: url,
      BIRZHA_COOKIE: owner.cookie,
      BIRZHA_ORIGIN: origin
    })) as unknown
    expect(output).toEqual({
      own: ["Бот для записи", "Лендинг для кофейни", "Логотип для пекарни"],
      kinds: [],
      missing: "not_found 404",
      counted: 3
    })
  })
})
