import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium } from "playwright-core"
import type { TestProject } from "vitest/node"
import { migrateDatabase } from "../packages/domain/test/migrateDatabase.js"
import { chromiumOptions } from "./chromium.js"
import { admin, holdTestRun, newRunToken, testDatabaseName, testPostgresUrl } from "./postgresServer.js"
import "./provided.js"

export default async function setup(project: TestProject) {
  const runDir = mkdtempSync(join(tmpdir(), "birzha-test-run-"))
  project.provide("runDir", runDir)
  // One Chromium for the whole run (when the machine has it: without it page tests fail on their
  // own launch, saying so): each file works in contexts of its own, in parallel with the other
  // workers' files. Idle, it costs nothing measurable.
  const browserServer = existsSync(chromiumOptions.executablePath!) ? await chromium.launchServer(chromiumOptions) : undefined
  project.provide("chromiumEndpoint", browserServer?.wsEndpoint())
  // Every database of the run carries its token, so that two runs on one server (a second copy of
  // the suite beside the first) each drop their own at the end and nothing else.
  const runToken = newRunToken()
  const run = await holdTestRun(runToken)
  project.provide("testRunToken", runToken)
  // The migrations applied once for the run; files copy the result. Nothing stays connected to
  // it (Postgres copies only a database nobody is connected to).
  const migrated = testDatabaseName("migrated", runToken)
  await admin((client) => client.query(`CREATE DATABASE "${migrated}"`))
  const url = new URL(testPostgresUrl)
  url.pathname = `/${migrated}`
  await migrateDatabase(url.toString())
  project.provide("migratedDatabase", migrated)
  return async () => {
    await Promise.all([run.close(), browserServer?.close()])
    rmSync(runDir, { recursive: true, force: true })
  }
}
