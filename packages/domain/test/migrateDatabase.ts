import { Effect } from "effect"
import { runMigrations } from "../src/store/Migrations.js"
import { testPgLayer } from "./pgLayer.js"

/**
 * Applies every migration to the Postgres database at `url` and closes its connection: the run's
 * migrated database that test files copy (testing/globalSetup.ts, testing/postgres.ts). Here, not
 * in testing/, because this package has Effect and its Postgres client as its own dependencies.
 */
export const migrateDatabase = (url: string): Promise<unknown> =>
  Effect.runPromise(Effect.provide(runMigrations, testPgLayer(url, 1)))
