import {
  Database,
  DatabaseConfig,
  DatabaseLive,
  MailConfig,
  MailerLive,
  MigrationsAtStart,
  ServerSecretLive,
  ServiceConfig,
  WorkerHostLive
} from "@birzha/worker-host"
import { PostgresBlobStore } from "@birzha/domain/server"
import { Config, Effect, Layer, Option } from "effect"
import { HttpConfig, type HttpSettings } from "./HttpConfig.js"
import { HttpServerLive } from "./HttpHost.js"
import { Readiness } from "./Readiness.js"

const ReadinessLive = Layer.effect(Readiness, Effect.map(Database, (database) => ({ check: database.readiness })))

/**
 * The whole service as one layer: HTTP on the configured database, migrations applied in the
 * background (readyz says when), and on the embedded database the workers in this process too.
 */
export const ServiceLive = (settings: HttpSettings, options: { readonly workers: boolean }) =>
  Layer.mergeAll(HttpServerLive(settings), MigrationsAtStart, options.workers ? WorkerHostLive : Layer.empty).pipe(
    Layer.provide(ReadinessLive),
    Layer.provide(Layer.mergeAll(ServerSecretLive, MailerLive, PostgresBlobStore)),
    Layer.provideMerge(DatabaseLive)
  )

/**
 * `birzha serve`: every setting is validated first (a bad value ends here, before anything
 * binds), then the service runs until SIGTERM or SIGINT, which drain in-flight requests.
 */
export const serve = Effect.gen(function*() {
  // One read of every setting, so a start reports each bad variable, not only the first.
  const [settings, { url }] = yield* Config.all([HttpConfig, DatabaseConfig, ServiceConfig, MailConfig])
  return yield* Layer.launch(ServiceLive(settings, { workers: Option.isNone(url) }))
})
