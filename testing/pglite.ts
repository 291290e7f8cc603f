import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import "./provided.js"

/** The process id `pidFile` holds; undefined while it is not written yet. */
const pidIn = (pidFile: string): number | undefined => {
  try {
    const pid = Number(readFileSync(pidFile, "utf8"))
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const hasEnded = (pid: number) => {
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code !== "EPERM"
  }
}

/**
 * Removes the making directory `making` when the maker it names has ended, for one waiter only:
 * the waiter claims that directory (`taken-over` inside it, made by one process only), then checks
 * that the process id it holds is still the ended one. A directory made meanwhile by a new maker
 * (after another waiter removed the ended one) holds the new maker's id, or none yet, and is left.
 */
const takeOverFromEndedMaker = (making: string) => {
  const pidFile = join(making, "pid")
  const pid = pidIn(pidFile)
  if (pid === undefined || !hasEnded(pid)) return
  const claim = join(making, "taken-over")
  try {
    mkdirSync(claim)
  } catch {
    // Another waiter took it over, or the directory is gone.
    return
  }
  if (pidIn(pidFile) === pid) rmSync(making, { recursive: true, force: true })
  else rmSync(claim, { recursive: true, force: true })
}

/**
 * Creating an embedded database runs PGlite's initdb, many seconds of CPU; opening one that exists
 * takes a fraction of that. So the first test of a run to need one creates an empty, initialised
 * data directory once (the template; other workers wait for it), and every test gets its own copy:
 * the migrations and everything after still run in the test. Creating a database from nothing
 * stays covered by the CLI tests (`birzha serve` and `birzha demo` on a fresh data directory).
 */
export const template = async (root: string, initialise: (dir: string) => Promise<unknown>): Promise<string> => {
  const dir = join(root, "pglite-template")
  const done = join(root, "pglite-template.done")
  // A directory, made by one process only; not `<dir>.lock`, which the client takes while open.
  // It holds the maker's process id: the others wait as long as that process lives, however slow
  // the machine (the test's own liveness bound, vitest.config.ts, still applies), and one of them
  // takes over if it died without finishing.
  const making = join(root, "pglite-template.making")
  const maker = join(making, "pid")
  for (;;) {
    if (existsSync(done)) return dir
    let mine = false
    try {
      mkdirSync(making)
      mine = true
    } catch {
      // Another worker is making it.
    }
    if (mine) {
      try {
        writeFileSync(maker, String(process.pid))
        rmSync(dir, { recursive: true, force: true })
        await initialise(dir)
        writeFileSync(done, "")
        return dir
      } finally {
        // Failed: let the next caller try again instead of waiting for nothing.
        if (!existsSync(done)) rmSync(making, { recursive: true, force: true })
      }
    }
    takeOverFromEndedMaker(making)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

export interface EmbeddedDataDir {
  /** An initialised PGlite data directory of this test's own, with nothing migrated yet. */
  readonly dir: string
  /** A `BIRZHA_DATA_DIR` whose embedded database is `dir` (`<home>/pgdata`). */
  readonly home: string
  readonly remove: () => void
}

/**
 * A fresh embedded database for one test file (or test), copied from the run's template.
 * `initialise` opens and closes the client once on an empty directory (that is PGlite's initdb);
 * it runs only for the template (this module cannot import the Effect runtime the client needs).
 */
export const embeddedDataDir = async (label: string, initialise: (dir: string) => Promise<unknown>): Promise<EmbeddedDataDir> => {
  const home = mkdtempSync(join(tmpdir(), `birzha-${label}-`))
  const dir = join(home, "pgdata")
  cpSync(await template(inject("runDir"), initialise), dir, { recursive: true })
  return { dir, home, remove: () => rmSync(home, { recursive: true, force: true }) }
}
