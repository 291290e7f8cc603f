import { Config, Effect, Layer } from "effect"
import * as Store from "@birzha/domain/store"
import { DatabaseLive, MigrationsAtStart } from "./database/Database.js"
import { DatabaseConfig } from "./database/DatabaseConfig.js"
import { MailConfig } from "./mail/MailerLive.js"
import { ServiceConfig } from "./Settings.js"
import { WorkerJobs, WorkerLoop } from "./WorkerLoop.js"

/** The background workers; `birzha serve` runs these in-process on the embedded database. */
export const WorkerHostLive = WorkerLoop.pipe(Layer.provide(WorkerJobs.none))

/** Every setting is read before anything starts, so a bad value stops the host with one line per variable. */
export const validateSettings = Effect.asVoid(Config.all([DatabaseConfig, ServiceConfig, MailConfig]))

/** `birzha worker`: the workers alone, until SIGTERM. */
export const work = Effect.gen(function*() {
  yield* validateSettings
  return yield* Layer.launch(Layer.mergeAll(WorkerHostLive, MigrationsAtStart).pipe(Layer.provide(DatabaseLive)))
})

/** `birzha migrate`: apply pending migrations and exit. */
export const migrate = Effect.gen(function*() {
  yield* validateSettings
  const applied = yield* Store.runMigrations.pipe(Effect.provide(DatabaseLive))
  yield* Effect.logInfo(applied.length === 0 ? "no migrations pending" : `applied ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
})
