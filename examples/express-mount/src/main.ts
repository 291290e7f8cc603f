/**
 * An Express application of its own (its routes, its `pg` pool) that mounts Birzha under
 * `/birzha`: the API at `/birzha/api/v1/…`, its OpenAPI document at
 * `/birzha/api/v1/openapi.json`, MCP at `/birzha/mcp`. Birzha's background worker runs in the
 * same process on the same pool. Birzha is mounted before any body parser of the application:
 * it reads request bodies itself, bounded by each operation's schema.
 */
import { ServiceHandlerLive, startHandler } from "@birzha/http-host"
import { DatabaseFromPool } from "@birzha/infrastructure"
import { WorkerHostLive } from "@birzha/worker-host"
import { ConfigProvider, Layer } from "effect"
import express, { type Express } from "express"
import Pg from "pg"

export interface AppSettings {
  /** Where browsers open the application (`https://app.example`); Birzha's sign-in checks `Origin` against it. */
  readonly publicOrigin: string
  /** Birzha's server key (hashes, encryption at rest): the same in every process on this database. */
  readonly serverSecret: string
}

/** The application, and how to stop Birzha's part of it (its workers, its migrations) at shutdown. */
export const createApp = async (pool: Pg.Pool, settings: AppSettings): Promise<{ readonly app: Express; readonly close: () => Promise<void> }> => {
  const birzha = await startHandler(
    ServiceHandlerLive(
      { publicOrigin: settings.publicOrigin, basePath: "/birzha" },
      { database: DatabaseFromPool(pool), workers: WorkerHostLive }
    ).pipe(
      // Birzha's own settings (mail, moderators, limits) are read as `BIRZHA_*` configuration;
      // here from the application's values instead of the environment.
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({
        BIRZHA_SECRET: settings.serverSecret,
        BIRZHA_PUBLIC_ORIGIN: settings.publicOrigin
      })))
    )
  )

  const app = express()
  app.use("/birzha", birzha.node)
  // The application's own routes, parsers and middleware, as before.
  app.use(express.json())
  app.get("/hello", (_req, res) => {
    res.json({ hello: "from the application's own route" })
  })
  app.get("/stats", async (_req, res) => {
    const { rows } = await pool.query<{ tasks: number }>("SELECT count(*)::int AS tasks FROM publications WHERE kind = 'task'")
    res.json(rows[0])
  })
  return { app, close: birzha.dispose }
}

/** Run as a script: `DATABASE_URL=postgres://… npm start`, then open http://localhost:3000/birzha/api/docs. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const pool = new Pg.Pool({ connectionString: process.env["DATABASE_URL"] })
  const { app } = await createApp(pool, {
    publicOrigin: "http://localhost:3000",
    serverSecret: process.env["BIRZHA_SECRET"] ?? "example-secret-change-me-to-32-random-characters"
  })
  app.listen(3000, () => console.log("listening on http://localhost:3000 (Birzha under /birzha)"))
}
