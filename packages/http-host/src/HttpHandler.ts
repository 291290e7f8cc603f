import { Context, Effect, Layer, ManagedRuntime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { type FetchHandler, toFetchHandler } from "./FetchHandler.js"
import { hostServices, makeNodeHandler, Operations, ServicePagesWithoutWebApp, withRoutes } from "./HttpHost.js"

/** Where a mounted host answers, and how it treats what it is sent. */
export interface HandlerSettings {
  /** The origin browsers use for the embedding application (`https://app.example`); changes from a browser must carry it as `Origin`. */
  readonly publicOrigin: string
  /**
   * The path the host is mounted under (`/birzha`), or none. Addresses the service writes into its
   * answers (approval pages, upload addresses) start with it, and a request that still carries it
   * (a plain Node server; Express strips it) is answered without it.
   */
  readonly basePath?: string
  /** Largest accepted request body (default 10 MiB); larger ones get 413 before the body is read. */
  readonly maxBodyBytes?: number
  /** Read the client address from `X-Forwarded-For` (only behind a trusted proxy). Default false. */
  readonly trustProxy?: boolean
}

/** The host as handlers of another server. */
export interface BirzhaHandlerService {
  /** For any Node server: `app.use("/birzha", handler.node)` in Express, or inside `createServer`. */
  readonly node: (req: IncomingMessage, res: ServerResponse) => void
  /** Web-standard: a `Request` in, its `Response` out, without a listener. */
  readonly fetch: FetchHandler
}

export class BirzhaHandler extends Context.Tag("@birzha/http-host/BirzhaHandler")<BirzhaHandler, BirzhaHandlerService>() {}

const normalizedBasePath = (path: string | undefined) => {
  const trimmed = (path ?? "").replace(/\/+$/, "")
  if (trimmed !== "" && !trimmed.startsWith("/")) throw new Error(`basePath must start with "/": ${JSON.stringify(path)}`)
  return trimmed
}

/** `url` without the mount path when it still carries it (`/birzha/api/v1/x` → `/api/v1/x`). */
const stripBase = (base: string, url: string) =>
  base === "" || (url !== base && !url.startsWith(`${base}/`) && !url.startsWith(`${base}?`)) ? url : url.slice(base.length) || "/"

/**
 * The host (the catalog's operations, the OpenAPI document at `/api/v1/openapi.json`, MCP at
 * `/mcp`, file bytes, approval and integrations pages) as a handler to mount in another server,
 * with no listener of its own. The web application's pages are `serve`'s only: they read the API
 * over the host's own listener. Needs what `ServiceLive` gives the HTTP server: the database, the
 * server secret, mail, file storage and readiness (`ServiceHandlerLive` composes them).
 */
export const HttpHandlerLive = (settings: HandlerSettings) => {
  const base = normalizedBasePath(settings.basePath)
  const handler = {
    publicOrigin: settings.publicOrigin,
    maxBodyBytes: settings.maxBodyBytes ?? 10 * 1024 * 1024,
    trustProxy: settings.trustProxy ?? false
  }
  const layer = withRoutes(
    Layer.scoped(
      BirzhaHandler,
      Effect.map(makeNodeHandler(handler, ServicePagesWithoutWebApp.routes), ({ handle }): BirzhaHandlerService => {
        const node = (req: IncomingMessage, res: ServerResponse) => {
          req.url = stripBase(base, req.url ?? "/")
          handle(req, res)
        }
        return { node, fetch: toFetchHandler(node) }
      })
    ),
    ServicePagesWithoutWebApp
  ).pipe(Layer.provideMerge(hostServices({ ...handler, linkBase: `${settings.publicOrigin}${base}` })))
  // The handler and the registry; the settings the routes read stay inside.
  return Layer.scopedContext(Effect.map(Layer.build(layer), Context.pick(BirzhaHandler, Operations)))
}

/** A handler built from its layer, for a program that is not written with Effect; `dispose` releases it. */
export interface RunningHandler extends BirzhaHandlerService {
  readonly dispose: () => Promise<void>
}

/**
 * Builds a handler layer (`ServiceHandlerLive(…)`, or `HttpHandlerLive` with the program's own
 * services) and returns its handlers once it is up; migrations and workers it includes keep
 * running until `dispose`.
 */
export const startHandler = async <E>(layer: Layer.Layer<BirzhaHandler, E>): Promise<RunningHandler> => {
  const runtime = ManagedRuntime.make(layer)
  const handler = await runtime.runPromise(BirzhaHandler)
  return { node: handler.node, fetch: handler.fetch, dispose: () => runtime.dispose() }
}
