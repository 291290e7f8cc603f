// Installs the dependencies when the lockfile differs from the one of the last install, then
// builds the JavaScript of the workspace packages whose inputs changed since their last build
// here, and nothing else: `pnpm start` and `pnpm birzha` run it before the command. Never writes
// type declarations (that is `pnpm build`, for publishing). A package's inputs are its sources
// (tests left out), its package.json and build configuration, the shared tsconfig and the lockfile,
// and the inputs of the workspace packages it depends on (the `birzha` command bundles them). What
// was built from which inputs is kept in node_modules/.cache/birzha-build, outside `dist`, which
// tsup cleans; a package whose outputs are missing is built whatever the record says.
import { spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

// pnpm keeps a copy of the lockfile it installed in node_modules/.pnpm/lock.yaml: the same bytes,
// nothing to install (a restart skips pnpm's own check, seconds on a loaded machine).
const installedLockfile = join(root, "node_modules", ".pnpm", "lock.yaml")
const lockfile = join(root, "pnpm-lock.yaml")
if (!existsSync(installedLockfile) || !readFileSync(installedLockfile).equals(readFileSync(lockfile))) {
  process.stderr.write("Installing the dependencies (pnpm install --frozen-lockfile)\n")
  // Under pnpm (`pnpm start`) its own command is on the PATH; otherwise the pinned one through npx.
  const underPnpm = (process.env["npm_config_user_agent"] ?? "").startsWith("pnpm/")
  const [command, args] = underPnpm ? ["pnpm", []] : ["npx", ["-y", "pnpm@10.34.9"]]
  const installed = spawnSync(command, [...args, "install", "--frozen-lockfile"], { cwd: root, stdio: "inherit" })
  if (installed.status !== 0) {
    process.stderr.write(`pnpm install failed (${installed.error?.message ?? `exit code ${installed.status}`})\n`)
    process.exit(1)
  }
}
const cacheDir = join(root, "node_modules", ".cache", "birzha-build")
const tsup = join(root, "node_modules", "tsup", "dist", "cli-default.js")

const packages = new Map(
  readdirSync(join(root, "packages"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, "packages", entry.name, "package.json")))
    .map((entry) => {
      const dir = join(root, "packages", entry.name)
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
      return [manifest.name, { dir, manifest }]
    })
)

const workspaceDeps = (manifest) =>
  Object.keys({ ...manifest.dependencies }).filter((name) => packages.has(name))

const sourceFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith(".test.ts"))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))

/**
 * A package builds with tsup, or with its own Node script when its `build` is `node <script>`
 * (packages/web: the Vite builds of the browser bundle and the server's render function).
 */
const buildCommand = ({ manifest }) => {
  const own = /^node (\S+)$/.exec(manifest.scripts?.build ?? "")
  return own === null ? [tsup, "--no-dts", "--silent"] : [own[1], "--silent"]
}

/**
 * Built by its own script from the workspace's sources (packages/web: Vite reads the sources, not
 * the other packages' `dist`), and loaded by the host at run time, not bundled into it: such a
 * package neither waits for the tsup builds nor holds them up, and its inputs are not theirs.
 */
const ownScript = (name) => buildCommand(packages.get(name))[0] !== tsup

/** The hash of one package's own inputs. */
const ownInputs = new Map()
const ownHash = (name) => {
  if (!ownInputs.has(name)) {
    const { dir } = packages.get(name)
    const files = [
      // The web application's build also takes its static files and its build script.
      ...["src", "public", "scripts"].map((folder) => join(dir, folder)).filter(existsSync).flatMap(sourceFiles),
      ...["package.json", "tsup.config.ts", "vite.config.ts", "tsconfig.build.json", "tsconfig.json"].map((file) => join(dir, file)).filter(existsSync)
    ].sort()
    const hash = createHash("sha256")
    for (const file of files) hash.update(relative(root, file)).update("\0").update(readFileSync(file)).update("\0")
    ownInputs.set(name, hash.digest("hex"))
  }
  return ownInputs.get(name)
}

const shared = createHash("sha256")
for (const file of ["tsconfig.base.json", "pnpm-lock.yaml"]) if (existsSync(join(root, file))) shared.update(readFileSync(join(root, file)))
const sharedHash = shared.digest("hex")

/** The package's inputs and those of every workspace package it depends on. */
const inputsHash = (name, seen = new Set()) => {
  seen.add(name)
  const hash = createHash("sha256").update(sharedHash).update(ownHash(name))
  // An own-script build bundles the sources of its development dependencies too (the domain's
  // declarations, through the client's sources).
  const { manifest } = packages.get(name)
  const deps = ownScript(name) ? workspaceDeps({ dependencies: { ...manifest.dependencies, ...manifest.devDependencies } }) : workspaceDeps(manifest)
  for (const dep of deps.sort()) {
    if (!seen.has(dep) && !ownScript(dep)) hash.update(inputsHash(dep, seen))
  }
  return hash.digest("hex")
}

/** Every file a package's build writes that something runs: its main entry, its entries' JavaScript and its bin. */
const outputs = ({ dir, manifest }) =>
  [manifest.main, ...Object.values(manifest.exports ?? {}).map((entry) => entry?.import), ...Object.values(manifest.bin ?? {})]
    .filter((file) => typeof file === "string" && file.endsWith(".js")).map((file) => join(dir, file))

const record = (name) => join(cacheDir, `${name.replace("/", "__")}.json`)

const stale = [...packages.keys()].filter((name) => {
  const pkg = packages.get(name)
  if (!outputs(pkg).every(existsSync)) return true
  try {
    return JSON.parse(readFileSync(record(name), "utf8")).inputs !== inputsHash(name)
  } catch {
    return true
  }
})

const buildOne = (name) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, buildCommand(packages.get(name)), { cwd: packages.get(name).dir, stdio: "inherit" })
    child.on("error", reject)
    child.on("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`building ${name} failed (${signal ?? `exit code ${code}`})`)))
  })

if (stale.length > 0) {
  const started = Date.now()
  process.stderr.write(`Building ${stale.join(", ")} (JavaScript only)\n`)
  mkdirSync(cacheDir, { recursive: true })
  // In dependency order, the packages whose dependencies are built going at once.
  const pending = new Set(stale)
  while (pending.size > 0) {
    const ready = [...pending].filter((name) =>
      ownScript(name) || workspaceDeps(packages.get(name).manifest).every((dep) => ownScript(dep) || !pending.has(dep)))
    if (ready.length === 0) throw new Error(`the workspace packages depend on each other in a cycle: ${[...pending].join(", ")}`)
    await Promise.all(ready.map(async (name) => {
      await buildOne(name)
      writeFileSync(record(name), JSON.stringify({ inputs: inputsHash(name) }))
      pending.delete(name)
    }))
  }
  process.stderr.write(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
}
