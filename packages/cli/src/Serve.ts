import { HttpConfig, ServiceLive } from "@birzha/http-host"
import { DatabaseConfig, MailConfig, ServiceConfig, StartupMemoryLive, StartupMemoryRequestsLive, TracingConfig } from "@birzha/infrastructure"
import { WorkerHostLive } from "@birzha/worker-host"
import { Config, Effect, Layer, Option } from "effect"

/**
 * `birzha serve`: every setting is validated first (a bad value ends here, before anything
 * binds), then the service runs until SIGTERM or SIGINT, which drain in-flight requests. On the
 * embedded database the workers run in this process too, and so does `embeddedOnly` (the CLI's
 * database commands, run for a CLI beside the host). Before ready, one memory-reducing collection
 * frees what starting left behind; on a Postgres server, where this process only answers requests,
 * its young generation is also held at its floor (`StartupMemoryRequestsLive`).
 */
export const serve = <E, R>(embeddedOnly: Layer.Layer<never, E, R>) =>
  Effect.gen(function*() {
    // One read of every setting, so a start reports each bad variable, not only the first.
    const [settings, { url }] = yield* Config.all([HttpConfig, DatabaseConfig, ServiceConfig, MailConfig, TracingConfig])
    const embedded = Option.isNone(url)
    return yield* Layer.launch(
      ServiceLive(settings, { workers: embedded ? Layer.merge(WorkerHostLive, embeddedOnly) : false }).pipe(
        // This process is the service's own: what starting left behind is freed before ready (StartupMemory.ts).
        Layer.provide(embedded ? StartupMemoryLive : StartupMemoryRequestsLive)
      )
    )
  })
