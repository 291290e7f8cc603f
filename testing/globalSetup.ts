import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium } from "playwright-core"
import type { TestProject } from "vitest/node"
import { migrateDatabase } from "../packages/domain/test/migrateDatabase.js"
import { chromiumOptions } from "./chromium.js"
import { admin, testDatabaseName, testPostgresUrl } from "./postgresServer.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** A directory for this run's shared test fixtures (the PGlite template), removed at the end. */
    readonly runDir: string
    /** The run's one Chromium, which page tests connect to (testing/browser.ts); absent when the run has none. */
    readonly chromiumEndpoint: string | undefined
    /** A database with every migration applied, which `createTestDatabase(label, { migrated: true })` copies (testing/postgres.ts). */
    readonly migratedDatabase: string
  }
}

export default async function setup(project: TestProject) {
  const runDir = mkdtempSync(join(tmpdir(), "birzha-test-run-"))
  project.provide("runDir", runDir)
  // One Chromium for the whole run (when the machine has it: without it page tests fail on their
  // own launch, saying so): each file works in contexts of its own, in parallel with the other
  // workers' files. Idle, it costs nothing measurable.
  const browserServer = existsSync(chromiumOptions.executablePath!) ? await chromium.launchServer(chromiumOptions) : undefined
  project.provide("chromiumEndpoint", browserServer?.wsEndpoint())
  // The migrations applied once for the run; files copy the result. Nothing stays connected to
  // it (Postgres copies only a database nobody is connected to).
  const migrated = testDatabaseName("migrated")
  await admin((client) => client.query(`CREATE DATABASE "${migrated}"`))
  const url = new URL(testPostgresUrl)
  url.pathname = `/${migrated}`
  await migrateDatabase(url.toString())
  project.provide("migratedDatabase", migrated)
  return async () => {
    await admin((client) => client.query(`DROP DATABASE IF EXISTS "${migrated}" WITH (FORCE)`))
    await browserServer?.close()
    rmSync(runDir, { recursive: true, force: true })
  }
}
