import { PostgresBlobStore } from "@birzha/domain/internal"
import type { PooledReads } from "@birzha/domain/server"
import { Database, DatabaseLive, MailerLive, MetricsServerLive, MigrationsAtStart, ServerSecretLive, TracingLive } from "@birzha/infrastructure"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { type ConfigError, Context, Effect, Layer } from "effect"
import { BirzhaHandler, type HandlerSettings, HttpHandlerLive } from "./HttpHandler.js"
import type { HttpSettings } from "./HttpConfig.js"
import { HttpServerLive, Operations } from "./HttpHost.js"
import { Readiness } from "./Readiness.js"

const ReadinessLive = Layer.effect(Readiness, Effect.map(Database, (database) => ({ check: database.readiness })))

/** What the service runs on: a database layer (`DatabaseLive` from the settings, or `DatabaseFromPool`, `DatabaseEmbedded`). */
export type DatabaseLayer = Layer.Layer<SqlClient.SqlClient | Database | PooledReads, ConfigError.ConfigError | SqlError>

interface ServiceOptions<E, R> {
  /** The workers to run in the same process (`WorkerHostLive` of `@birzha/worker-host`), or `false` for none. */
  readonly workers: Layer.Layer<never, E, R> | false
  /** The database; `DatabaseLive` (`DATABASE_URL`, or the embedded one in `BIRZHA_DATA_DIR`) when absent. */
  readonly database?: DatabaseLayer
}

/**
 * The service around an HTTP front (a listener, or a handler): migrations applied in the
 * background (readyz says when), the workers given, on one database; the server secret and mail
 * from the settings (`BIRZHA_SECRET`, `BIRZHA_SMTP_URL`, …, read through the `ConfigProvider`);
 * traces exported when the standard `OTEL_*` variables name an endpoint (`TracingLive`).
 */
const around = <A, E1, R1, E, R>(front: Layer.Layer<A, E1, R1>, options: ServiceOptions<E, R>) =>
  Layer.mergeAll(front, MigrationsAtStart, options.workers === false ? Layer.empty : options.workers).pipe(
    Layer.provide(ReadinessLive),
    Layer.provide(Layer.mergeAll(ServerSecretLive, MailerLive, PostgresBlobStore)),
    Layer.provideMerge(options.database ?? DatabaseLive),
    Layer.provide(TracingLive)
  )

/**
 * The whole service as one layer: HTTP on its own listener (`birzha serve`; the CLI passes the
 * worker host's layer on the embedded database, this package does not depend on it).
 */
export const ServiceLive = <E = never, R = never>(settings: HttpSettings, options: ServiceOptions<E, R>) =>
  around(
    settings.metricsPort === undefined
      ? HttpServerLive(settings)
      : Layer.merge(HttpServerLive(settings), MetricsServerLive({ host: settings.host, port: settings.metricsPort })),
    options
  )

/**
 * The whole service as handlers to mount in another server (`BirzhaHandler`: `node` and `fetch`),
 * with the registry (`Operations`) for in-process calls beside them. Nothing listens: the
 * embedding server routes requests to `node` or `fetch`.
 */
export const ServiceHandlerLive = <E = never, R = never>(
  settings: HandlerSettings,
  options: ServiceOptions<E, R>
) =>
  Layer.scopedContext(
    Effect.map(
      Layer.build(around(HttpHandlerLive(settings), options)),
      (context) => Context.pick(BirzhaHandler, Operations)(context)
    )
  )
