import { Database, DatabaseLive, MigrationsAtStart, ServiceConfig, WorkerHostLive } from "@birzha/worker-host"
import { Effect, Layer } from "effect"
import { HttpConfig } from "./HttpConfig.js"
import { HttpServerLive } from "./HttpHost.js"
import { Readiness } from "./Readiness.js"

const ReadinessLive = Layer.effect(
  Readiness,
  Effect.map(Database, (database) => ({ check: database.readiness }))
)

/**
 * `birzha serve`: settings are validated first (a bad value ends here, before anything binds),
 * then HTTP starts on the database; in embedded mode the workers run in this same process.
 */
export const serve = Effect.gen(function*() {
  const settings = yield* HttpConfig
  yield* ServiceConfig
  const database = yield* Effect.provide(Database, DatabaseLive).pipe(Effect.map((d) => d.mode), Effect.orDie, Effect.scoped)
  const workers = database === "embedded" ? WorkerHostLive : Layer.empty
  const host = Layer.mergeAll(HttpServerLive(settings), workers, MigrationsAtStart).pipe(
    Layer.provide(ReadinessLive),
    Layer.provide(DatabaseLive)
  )
  return yield* Layer.launch(host)
})
