import { Database, DatabaseLive, MailerLive, MigrationsAtStart, ServerSecretLive } from "@birzha/infrastructure"
import { PostgresBlobStore } from "@birzha/domain/internal"
import { Effect, Layer } from "effect"
import type { HttpSettings } from "./HttpConfig.js"
import { HttpServerLive } from "./HttpHost.js"
import { Readiness } from "./Readiness.js"

const ReadinessLive = Layer.effect(Readiness, Effect.map(Database, (database) => ({ check: database.readiness })))

/**
 * The whole service as one layer: HTTP on the configured database, migrations applied in the
 * background (readyz says when), and the workers given in this process too, on the same database
 * (`birzha serve` passes the worker host's on the embedded database; this package does not depend on it).
 */
export const ServiceLive = <E = never, R = never>(
  settings: HttpSettings,
  options: { readonly workers: Layer.Layer<never, E, R> | false }
) =>
  Layer.mergeAll(HttpServerLive(settings), MigrationsAtStart, options.workers === false ? Layer.empty : options.workers).pipe(
    Layer.provide(ReadinessLive),
    Layer.provide(Layer.mergeAll(ServerSecretLive, MailerLive, PostgresBlobStore)),
    Layer.provideMerge(DatabaseLive)
  )
