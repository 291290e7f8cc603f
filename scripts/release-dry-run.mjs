#!/usr/bin/env node
// The release checks, as a release without publishing meets them (`pnpm test:release`, which CI
// runs after the test command): on a clean copy of the repository (its tracked files and new
// unignored ones, no node_modules, no dist), apply the pending changesets (`changeset version`,
// nothing committed), pack every published package (each `prepack` builds what it packs, its
// declarations included: the one declaration build of the run), check the API reports against
// those declarations (scripts/api-report.mjs --check), lint each tarball with publint and
// @arethetypeswrong/cli (types resolve under node16 and bundler), install the tarballs with npm
// into empty projects (the client alone; the others together, as they depend on each other at the
// released versions), type-check a small consumer of each under `strict` and run it; last, the
// packed-client example (examples/packed-client) on the same client tarball, against the `birzha`
// command installed from the same server tarballs.
// Exits non-zero on the first problem. `--keep` leaves the temporary folder for inspection.
import { execFileSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const keep = process.argv.includes("--keep")
const work = mkdtempSync(join(tmpdir(), "birzha-release-"))
const copy = join(work, "repo")
const tarballs = join(work, "tarballs")
const started = Date.now()
const pnpm = ["-y", "pnpm@10.34.9"]

const step = (what) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${what}\n`)
const run = (command, args, cwd, env = {}) =>
  execFileSync(command, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_fund: "false", npm_config_audit: "false", npm_config_update_notifier: "false", ...env }
  })

try {
  step(`clean copy in ${copy}`)
  const files = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root).split("\0").filter(Boolean)
  for (const file of files) {
    try {
      cpSync(join(root, file), join(copy, file))
    } catch (error) {
      // A tracked file deleted in the working tree is not part of the copy.
      if (error.code !== "ENOENT") throw error
    }
  }
  step("pnpm install (frozen lockfile)")
  run("npx", [...pnpm, "install", "--frozen-lockfile", "--prefer-offline"], copy)

  step("changeset version")
  // changesets reads the repository's history to find the base branch: the copy is a fresh one.
  run("git", ["init", "-q", "-b", "main"], copy)
  run("npx", ["changeset", "version"], copy)
  const packageDirs = readdirSync(join(copy, "packages")).map((name) => join(copy, "packages", name))
  const manifests = packageDirs.map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
  const published = manifests.filter(({ manifest }) => manifest.private !== true)
  for (const { manifest } of published) step(`  ${manifest.name}@${manifest.version}`)

  step("pack every package (prepack builds each)")
  run("npx", [...pnpm, "-r", "--filter", "./packages/*", "pack", "--pack-destination", tarballs], copy)
  const tarballOf = new Map(published.map(({ manifest }) => {
    const file = `${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`
    return [manifest.name, join(tarballs, file)]
  }))
  for (const [name, file] of tarballOf) {
    const listing = run("tar", ["-tzf", file], work)
    const packed = JSON.parse(run("tar", ["-xzOf", file, "package/package.json"], work))
    if (JSON.stringify(packed).includes("workspace:")) throw new Error(`${name}: the packed package.json keeps a workspace: range`)
    // publishConfig.exports (the workspace's exports without their `source` condition) must offer
    // every entry the workspace declares.
    const declared = Object.keys(published.find(({ manifest }) => manifest.name === name).manifest.exports ?? {}).sort()
    const offered = Object.keys(packed.exports ?? {}).sort()
    if (JSON.stringify(declared) !== JSON.stringify(offered)) {
      throw new Error(`${name}: publishes the entries ${offered.join(", ")}, but declares ${declared.join(", ")} (publishConfig.exports)`)
    }
    if (JSON.stringify(packed.exports ?? {}).includes("./src/") && name !== "@birzha/web") {
      throw new Error(`${name}: a published entry points into src/`)
    }
    if (packed.types !== undefined && !listing.includes(`package/${packed.types.replace(/^\.\//, "")}`)) {
      throw new Error(`${name}: its types (${packed.types}) are not in the tarball`)
    }
  }

  // The declarations the packs just built are the ones published: the reports are checked on them.
  step("API reports (scripts/api-report.mjs --check)")
  run(process.execPath, [join("scripts", "api-report.mjs"), "--check"], copy)

  for (const [name, file] of tarballOf) {
    step(`publint ${name}`)
    run(join(root, "node_modules", ".bin", "publint"), ["run", file, "--strict", "--level", "warning"], work)
    step(`attw ${name}`)
    // ESM-only packages: resolution is checked for node16 (from ESM) and for bundlers.
    run(join(root, "node_modules", ".bin", "attw"), [file, "--profile", "esm-only", "--format", "ascii", "--no-emoji", "--no-color"], work)
  }

  const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
  const strict = {
    compilerOptions: {
      strict: true,
      exactOptionalPropertyTypes: true,
      module: "nodenext",
      moduleResolution: "nodenext",
      target: "es2022",
      lib: ["es2022", "dom"],
      noEmit: true,
      skipLibCheck: false,
      types: ["node"]
    },
    files: ["main.ts"]
  }
  /** Installs tarballs into an empty npm project, type-checks main.ts strictly and runs main.mjs. */
  const consumer = (name, packages, main, script) => {
    const project = join(work, name)
    mkdirSync(project)
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: `consumer-${name}`, private: true, type: "module" }))
    step(`${name}: npm install ${packages.join(" ")}`)
    run("npm", ["install", "--no-package-lock", "--prefer-offline", "@types/node@20.19.43", ...packages.map((p) => tarballOf.get(p))], project)
    const installed = readdirSync(join(project, "node_modules", "@birzha")).sort()
    const expected = packages.map((p) => p.replace("@birzha/", "")).sort()
    if (JSON.stringify(installed) !== JSON.stringify(expected)) {
      throw new Error(`${name}: installed @birzha/${installed.join(", @birzha/")}, expected only the tarballs given`)
    }
    writeFileSync(join(project, "main.ts"), main)
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(strict))
    step(`${name}: tsc --strict`)
    run(process.execPath, [tsc, "-p", "tsconfig.json"], project)
    writeFileSync(join(project, "main.mjs"), script)
    step(`${name}: run`)
    const output = run(process.execPath, ["main.mjs"], project).trim()
    step(`${name}: ${output}`)
    return project
  }

  // The client stands alone: nothing of @birzha/domain comes with it, and its results are typed
  // (a wrong property of a result is a compile error, not an `any`).
  consumer(
    "client",
    ["@birzha/client"],
    `import { BirzhaError, createBirzhaClient } from "@birzha/client"
const birzha = createBirzhaClient({ baseUrl: "http://127.0.0.1:1" })
export const titles = async (): Promise<ReadonlyArray<string>> => {
  const page = await birzha.listPublications()
  // @ts-expect-error a page has no such property
  page.notAProperty
  const own = await birzha.tasks.list({ urlParams: { limit: 10 } })
  // @ts-expect-error an own task has no such property
  own.items[0]?.notAProperty
  return page.items.map((item) => item.uuid)
}
export const isRefusal = (error: unknown): string | undefined => error instanceof BirzhaError ? error.code : undefined
`,
    `import { createBirzhaClient } from "@birzha/client"
const birzha = createBirzhaClient({ baseUrl: "http://127.0.0.1:1" })
const error = await birzha.listPublications().catch((e) => e)
if (error.code !== "transport_error") throw new Error("expected a transport error, got " + String(error))
if (typeof birzha.tasks.save !== "function" || typeof birzha["tasks.save"] !== "function") throw new Error("no tasks.save")
console.log("client ok: " + Object.keys(birzha).length + " operations")
`
  )

  // The hosts and the CLI install together (each names the others at the released version; the
  // web application's pages use the client, so the client's tarball comes along).
  const servers = published.map(({ manifest }) => manifest.name)
  const serversProject = consumer(
    "servers",
    servers,
    `import { catalog } from "@birzha/domain"
import * as HttpHost from "@birzha/http-host"
import * as WorkerHost from "@birzha/worker-host"
import * as Cli from "@birzha/cli"
export const ids: ReadonlyArray<string> = catalog.map((entry) => entry.id)
// @ts-expect-error a catalog entry has no such property
catalog[0]?.notAProperty
export const modules = [HttpHost, WorkerHost, Cli] as const
`,
    `import { catalog } from "@birzha/domain"
await import("@birzha/http-host")
await import("@birzha/worker-host")
await import("@birzha/cli")
import { execFileSync } from "node:child_process"
const help = execFileSync("node_modules/.bin/birzha", ["--help"], { encoding: "utf8" })
if (!help.includes("serve")) throw new Error("birzha --help names no serve command")
console.log("servers ok: " + catalog.length + " operations in the catalog; the birzha command answers")
`
  )

  // The third-party script of examples/packed-client on the client tarball above, against the host
  // as released (the `birzha` command of the server tarballs installed above) on Postgres.
  step("examples/packed-client on the packed client and the packed host")
  run(join(copy, "node_modules", ".bin", "vitest"), ["run", "examples/packed-client"], copy, {
    BIRZHA_RELEASE_CHECKS: "1",
    BIRZHA_PACKED_CLIENT: tarballOf.get("@birzha/client"),
    BIRZHA_PACKED_HOST: join(serversProject, "node_modules", "@birzha", "cli", "dist", "bin.js")
  })
  step("release dry run passed")
} catch (error) {
  const out = [error.stdout, error.stderr].filter(Boolean).join("\n")
  process.stderr.write(`release dry run failed: ${error.message.split("\n")[0]}\n${out}\n`)
  process.exitCode = 1
} finally {
  if (keep) process.stdout.write(`kept ${work}\n`)
  else rmSync(work, { recursive: true, force: true })
}
