import { BirzhaApi, catalog, type CatalogEntry, openApiDocument } from "@birzha/domain"
import { type HttpApi, HttpApiBuilder, HttpMiddleware, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { renderDocsPage } from "./DocsPage.js"
import { errorEnvelope } from "./ErrorEnvelope.js"
import { EventsHandlers } from "./handlers/EventsHandlers.js"
import { HealthHandlers } from "./handlers/HealthHandlers.js"
import type { HttpSettings } from "./HttpConfig.js"
import { makeRouteTable } from "./RouteTable.js"

/** Routes served by the host beside the catalog's operations (documents and pages, not operations). */
const documentRoutes = [
  { method: "GET", path: "/api/v1/openapi.json" },
  { method: "GET", path: "/api/docs" }
] as const

const pageHeaders = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const DocumentRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const spec = openApiDocument()
    const body = JSON.stringify(spec)
    const page = renderDocsPage(spec)
    yield* router.get(
      "/api/v1/openapi.json",
      Effect.succeed(HttpServerResponse.text(body, { contentType: "application/json" }))
    )
    yield* router.get("/api/docs", Effect.succeed(HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders(pageHeaders))))
  })
)

/** Every handler of the catalog; a missing one is a type error at this line. */
export const ApiHandlers = Layer.mergeAll(HealthHandlers, EventsHandlers)

export const ApiLive = HttpApiBuilder.api(BirzhaApi).pipe(Layer.provide(ApiHandlers))

/**
 * Serves an API layer (the catalog's, or a test API built with the same `operation` helper)
 * with the host's middleware and document routes on a Node listener. It also outputs the
 * `HttpServer`, so callers (tests, benchmarks) can read the bound address.
 */
export const makeHttpServer = <E, R>(
  api: Layer.Layer<HttpApi.Api, E, R>,
  entries: ReadonlyArray<Pick<CatalogEntry, "method" | "path">>,
  settings: Pick<HttpSettings, "maxBodyBytes" | "port" | "host">
) =>
  HttpApiBuilder.serve(HttpMiddleware.logger).pipe(
    Layer.provide(DocumentRoutes),
    Layer.provide(api),
    Layer.provide(errorEnvelope(makeRouteTable(entries, documentRoutes), settings.maxBodyBytes)),
    HttpServer.withLogAddress,
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: settings.port, host: settings.host }))
  )

/** The service's HTTP server: the whole catalog. Needs `Readiness` (and later the domain services). */
export const HttpServerLive = (settings: HttpSettings) => makeHttpServer(ApiLive, catalog, settings)
