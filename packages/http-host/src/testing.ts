import { HttpServer } from "@effect/platform"
import { ConfigProvider, Context, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import type { ConnectionLimits } from "./ConnectionLimits.js"
import { ServiceLive } from "./Serve.js"

export interface RunningHost {
  readonly url: string
  readonly close: () => Promise<void>
}

/** Starts a server layer (bound to port 0) in its own scope and returns its base URL. */
export const startHost = async <E>(layer: Layer.Layer<HttpServer.HttpServer, E>): Promise<RunningHost> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/**
 * The whole service as `birzha serve` composes it (without in-process workers), on the settings
 * and environment given, quiet unless asked: for tests and benchmarks.
 */
export const startService = async (
  options: {
    readonly env: Record<string, string>
    readonly port?: number
    readonly publicOrigin?: string
    readonly trustProxy?: boolean
    readonly logLevel?: LogLevel.LogLevel
    readonly connections?: ConnectionLimits
    readonly metricsPort?: number
  }
): Promise<RunningHost> => {
  const settings = {
    port: options.port ?? 0,
    host: "127.0.0.1",
    publicOrigin: options.publicOrigin ?? "http://localhost:8080",
    maxBodyBytes: 10 * 1024 * 1024,
    trustProxy: options.trustProxy ?? false,
    ...(options.connections === undefined ? {} : { connections: options.connections }),
    ...(options.metricsPort === undefined ? {} : { metricsPort: options.metricsPort })
  }
  return startHost(
    ServiceLive(settings, { workers: false }).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(options.env))))),
      Layer.provide(Logger.minimumLogLevel(options.logLevel ?? LogLevel.None))
    )
  )
}

/**
 * Polls readyz until the migrations are applied (they run in the background at start); a liveness
 * bound, not a speed limit: a busy machine only waits longer. 500 s by default, under vitest's 600 s
 * per test (vitest.config.ts), as `eventually` (testing/progress.ts).
 */
export const untilReady = async (host: RunningHost, timeoutMs = 500_000): Promise<void> => {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    const response = await fetch(`${host.url}/api/readyz`).catch(() => undefined)
    if (response?.status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the host did not become ready within ${timeoutMs / 1000} s`)
}
