import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import "./provided.js"

/**
 * Creating an embedded database runs PGlite's initdb, many seconds of CPU; opening one that exists
 * takes a fraction of that. So the first test of a run to need one creates an empty, initialised
 * data directory once (the template; other workers wait for it), and every test gets its own copy:
 * the migrations and everything after still run in the test. Creating a database from nothing
 * stays covered by the CLI tests (`birzha serve` and `birzha demo` on a fresh data directory).
 */
const template = async (initialise: (dir: string) => Promise<unknown>): Promise<string> => {
  const root = inject("runDir")
  const dir = join(root, "pglite-template")
  const done = join(root, "pglite-template.done")
  // A directory, made by one process only; not `<dir>.lock`, which the client takes while open.
  const making = join(root, "pglite-template.making")
  const until = Date.now() + 180_000
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
        rmSync(dir, { recursive: true, force: true })
        await initialise(dir)
        writeFileSync(done, "")
        return dir
      } finally {
        // Failed: let the next caller try again instead of waiting for nothing.
        if (!existsSync(done)) rmSync(making, { recursive: true, force: true })
      }
    }
    if (Date.now() > until) throw new Error("the PGlite template was not made within 180 s")
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
  cpSync(await template(initialise), dir, { recursive: true })
  return { dir, home, remove: () => rmSync(home, { recursive: true, force: true }) }
}
