import { BirzhaApi, catalog, type CatalogEntry, openApiDocument } from "@birzha/domain"
import { SignInConfig } from "@birzha/domain/server"
import { type HttpApi, HttpApiBuilder, HttpMiddleware, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { renderDocsPage } from "./DocsPage.js"
import { errorEnvelope } from "./ErrorEnvelope.js"
import { AuthenticationLive } from "./Authentication.js"
import { AccountHandlers } from "./handlers/AccountHandlers.js"
import { AuthHandlers } from "./handlers/AuthHandlers.js"
import { CommentsHandlers } from "./handlers/CommentsHandlers.js"
import { EventsHandlers } from "./handlers/EventsHandlers.js"
import { FileRoutes, fileRoutes } from "./handlers/FileRoutes.js"
import { FilesHandlers } from "./handlers/FilesHandlers.js"
import { HealthHandlers } from "./handlers/HealthHandlers.js"
import { IntegrationCommandsHandlers } from "./handlers/IntegrationCommandsHandlers.js"
import { KeysHandlers } from "./handlers/KeysHandlers.js"
import { McpRoutes, mcpRoutes } from "./handlers/McpRoute.js"
import {
  ArticlesHandlers,
  JobsHandlers,
  LearningHandlers,
  ModerationHandlers,
  PortfolioHandlers,
  PublicHandlers,
  ResumesHandlers,
  ServicesHandlers,
  TasksHandlers
} from "./handlers/PublicationsHandlers.js"
import { WebhooksHandlers } from "./handlers/WebhooksHandlers.js"
import { HostSettings } from "./HostSettings.js"
import type { HttpSettings } from "./HttpConfig.js"
import { PageRoutes, pageRoutes } from "./pages/Pages.js"
import { IntegrationsRoutes, integrationsRoutes } from "./pages/IntegrationsPage.js"
import { WebhookPageRoutes, webhookPageRoutes } from "./pages/WebhookApprovalPage.js"
import { CommandPageRoutes, commandPageRoutes } from "./pages/CommandApprovalPage.js"
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
/** The publication kinds' owner commands, public reads and moderation. */
const PublicationHandlers = Layer.mergeAll(
  PublicHandlers,
  TasksHandlers,
  PortfolioHandlers,
  ServicesHandlers,
  ArticlesHandlers,
  JobsHandlers,
  ResumesHandlers,
  LearningHandlers,
  ModerationHandlers
)

export const ApiHandlers = Layer.mergeAll(HealthHandlers, AuthHandlers, AccountHandlers, EventsHandlers, CommentsHandlers, FilesHandlers, PublicationHandlers, KeysHandlers, IntegrationCommandsHandlers, WebhooksHandlers).pipe(
  Layer.provide(AuthenticationLive)
)

export const ApiLive = HttpApiBuilder.api(BirzhaApi).pipe(Layer.provide(ApiHandlers))

/**
 * Node's 16 KiB header limit is below the spec's `q` of 4096 characters once percent-encoded
 * (Cyrillic takes 6 bytes a character), so the request line may be up to 64 KiB.
 */
const listener = () => createServer({ maxHeaderSize: 64 * 1024 })

/**
 * Serves an API layer (the catalog's, or a test API built with the same `operation` helper)
 * with the host's middleware and document routes on a Node listener. It also outputs the
 * `HttpServer`, so callers (tests, benchmarks) can read the bound address.
 */
export const makeHttpServer = <E, R, E2 = never, R2 = never>(
  api: Layer.Layer<HttpApi.Api, E, R>,
  entries: ReadonlyArray<CatalogEntry>,
  settings: Pick<HttpSettings, "maxBodyBytes" | "port" | "host" | "publicOrigin">,
  pages: {
    readonly layer: Layer.Layer<never, E2, R2>
    readonly routes: ReadonlyArray<{ readonly method: string; readonly path: string }>
  } = { layer: Layer.empty as Layer.Layer<never, E2, R2>, routes: [] }
) =>
  HttpApiBuilder.serve(HttpMiddleware.logger).pipe(
    Layer.provide(DocumentRoutes),
    Layer.provide(pages.layer),
    Layer.provide(api),
    Layer.provide(errorEnvelope(makeRouteTable(entries, [...documentRoutes, ...pages.routes]), settings)),
    HttpServer.withLogAddress,
    Layer.provideMerge(NodeHttpServer.layer(listener, { port: settings.port, host: settings.host }))
  )

/** The service's HTTP server: the whole catalog. Needs `Readiness`, the database and the domain services. */
export const HttpServerLive = (settings: HttpSettings) =>
  makeHttpServer(ApiLive, catalog, settings, {
    layer: Layer.mergeAll(PageRoutes, FileRoutes, WebhookPageRoutes, IntegrationsRoutes, CommandPageRoutes, McpRoutes),
    routes: [...pageRoutes, ...fileRoutes, ...webhookPageRoutes, ...integrationsRoutes, ...commandPageRoutes, ...mcpRoutes]
  }).pipe(
    Layer.provide(Layer.succeed(HostSettings, { publicOrigin: settings.publicOrigin, trustProxy: settings.trustProxy })),
    Layer.provide(Layer.succeed(SignInConfig, { publicOrigin: settings.publicOrigin }))
  )
