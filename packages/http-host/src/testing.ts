import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Scope } from "effect"

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
