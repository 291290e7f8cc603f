import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** A directory for this run's shared test fixtures (the PGlite template), removed at the end. */
    readonly runDir: string
  }
}

export default function setup(project: TestProject) {
  const runDir = mkdtempSync(join(tmpdir(), "birzha-test-run-"))
  project.provide("runDir", runDir)
  return () => rmSync(runDir, { recursive: true, force: true })
}
