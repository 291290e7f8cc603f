import { envelope, NotFound, openApiDocument } from "@birzha/domain"
import { answerOfCause, Operations, OperationsLive, PublicOrigin, SignInConfig } from "@birzha/domain/internal"
import { HttpApiBuilder, HttpRouter, HttpServer, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
// By path: the package index also loads its HTTP client (undici), which the host does not use.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Deferred, Effect, Layer, Option, Runtime } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { makeAccessLog } from "./AccessLog.js"
import { withRequestMetrics } from "./Metrics.js"
import { compileRoutes, makeCompiledApi } from "./CompiledApi.js"
import { applyConnectionLimits, defaultConnectionLimits, serverOptions } from "./ConnectionLimits.js"
import { renderDocsPage } from "./DocsPage.js"
import { pageHeadersOf } from "./pages/WebApp.js"
import { assignRequestId, requestIdHeader, requestIdOf } from "./RequestId.js"
import { FileRoutes, fileRoutes } from "./handlers/FileRoutes.js"
import { McpRoutes, mcpRoutes } from "./handlers/McpRoute.js"
import { OAuthRoutes, oauthRoutes } from "./handlers/OAuthRoutes.js"
import { HostSettings } from "./HostSettings.js"
import type { HttpSettings } from "./HttpConfig.js"
import { WebApplication, WebApplicationLive, WebAppRoutes, webAppRoutes, writeNotFoundPage } from "./pages/WebApp.js"
import { WebhookSettingsLive } from "./WebhookSettingsLive.js"

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

/**
 * The OpenAPI document and the docs page, made on their first request (a few MB the host does not
 * hold for a service nobody reads them from; bench/README.md, `memory`) and kept from then on.
 */
const documents = (() => {
  let made: { readonly json: Uint8Array; readonly page: Uint8Array } | undefined
  return () => {
    if (made === undefined) {
      const spec = openApiDocument()
      made = { json: new TextEncoder().encode(JSON.stringify(spec)), page: new TextEncoder().encode(renderDocsPage(spec)) }
    }
    return made
  }
})()

const DocumentRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    yield* router.get(
      "/api/v1/openapi.json",
      Effect.sync(() =>
        HttpServerResponse.uint8Array(documents().json, { contentType: "application/json", headers: { "x-content-type-options": "nosniff" } })
      )
    )
    yield* router.get(
      "/api/docs",
      Effect.sync(() => HttpServerResponse.uint8Array(documents().page, { contentType: "text/html", headers: pageHeaders }))
    )
  })
)

const json = (status: number, body: unknown) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } })

/**
 * A browser asks for HTML (`Accept: text/html…` on a navigation); a script or an API client that
 * reaches a path nothing serves gets the JSON envelope instead of a page.
 */
const wantsHtml = (accept: string | undefined) => accept !== undefined && accept.includes("text/html")

/**
 * Whatever a page, file or MCP route fails with still answers with the one envelope, mapped as an
 * operation's failure is (`answerOfCause`: 503 for the database, 500 with a correlation id otherwise).
 * Every log line of a route names its request (`requestId`, RequestId.ts).
 */
const withEnvelope = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  notFoundPage: Option.Option<Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>>
) =>
  app.pipe(
    // A path the page routes do not take after all (a trailing slash the router does not match, a
    // path parameter over its length): the application's HTML 404 outside /api/, the envelope inside.
    Effect.catchIf(
      (error): error is E & HttpServerError.RouteNotFound => error instanceof HttpServerError.RouteNotFound,
      (error) =>
        Option.isSome(notFoundPage) && !error.request.url.startsWith("/api/") && wantsHtml(error.request.headers["accept"])
          ? Effect.provideService(notFoundPage.value, HttpServerRequest.HttpServerRequest, error.request)
          : Effect.succeed(json(404, envelope(NotFound, "No such page")))
    ),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.map(answerOfCause(cause, {}, { method: request.method, url: request.url }), (answer) => json(answer.status, answer.body))))
  ).pipe((handled) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const requestId = request.headers[requestIdHeader]
      return requestId === undefined ? handled : Effect.annotateLogs(handled, "requestId", requestId)
    })
  )

/**
 * Node's 16 KiB header limit is below the spec's `q` of 4096 characters once percent-encoded
 * (Cyrillic takes 6 bytes a character), so the request line may be up to 64 KiB.
 */
const maxHeaderSize = 64 * 1024

const loopbackHost = /^(?:127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/

/**
 * The development default's public origin is `http://localhost:<port>`; a browser that opens the
 * bound address (`127.0.0.1`, as the log names it) would sign in at an origin the Origin rule
 * refuses, so its page navigations (GET or HEAD, not the API) are sent to localhost, same port and
 * path. API calls at 127.0.0.1 are answered as they are.
 */
const redirectedToLocalhost = (req: IncomingMessage, res: ServerResponse): boolean => {
  if (req.method !== "GET" && req.method !== "HEAD") return false
  if (!loopbackHost.test(req.headers.host ?? "") || (req.url ?? "").startsWith("/api/")) return false
  const navigation = req.headers["sec-fetch-mode"] === "navigate" || (req.headers.accept ?? "").includes("text/html")
  if (!navigation) return false
  res.writeHead(307, { location: `http://localhost:${req.socket.localPort}${req.url ?? "/"}`, "cache-control": "no-store" })
  res.end()
  return true
}

/** Where this host answers on its own machine: the bound address, or loopback for a wildcard one. */
const loopbackOf = (host: string) =>
  host === "" || host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host

/**
 * A GET or HEAD outside /api/ that neither an operation nor a page route takes: a browser's guess
 * (`/tasks/new`), answered with the application's HTML 404 instead of the API's JSON one.
 */
const unknownBrowserPath = (routes: ReturnType<typeof compileRoutes>) => (req: IncomingMessage): boolean => {
  if (req.method !== "GET" && req.method !== "HEAD") return false
  const url = req.url ?? "/"
  const at = url.indexOf("?")
  const path = at < 0 ? url : url.slice(0, at)
  if (path === "/api" || path.startsWith("/api/")) return false
  return routes.match(req.method, path) === undefined && !routes.isOther(req.method, path) && routes.allowedMethods(path).length === 0
}

const listen = (server: Server, port: number, host: string) =>
  Effect.async<void, Error>((resume) => {
    const onError = (error: Error) => resume(Effect.fail(error))
    server.once("error", onError)
    server.listen(port, host, () => {
      server.off("error", onError)
      resume(Effect.void)
    })
  })

/** Stops taking connections, lets requests in flight finish, then closes what is left. */
const close = (server: Server) =>
  Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeIdleConnections()
    const timer = setTimeout(() => server.closeAllConnections(), 5_000)
    timer.unref()
  })

type HandlerSettings = Pick<HttpSettings, "maxBodyBytes" | "publicOrigin" | "trustProxy">

interface Pages<E, R> {
  readonly layer: Layer.Layer<never, E, R>
  readonly routes: ReadonlyArray<{ readonly method: string; readonly path: string }>
}

/**
 * The request handling of the host, without a listener: the `Operations` registry's catalog
 * through the compiled adapter, every other route (pages, file bytes, MCP, documents) through the
 * platform router. Built in the scope of the router layers below (`withRoutes`).
 */
const makeNodeHandler = (settings: HandlerSettings, routesOfPages: ReadonlyArray<{ readonly method: string; readonly path: string }>) =>
  Effect.gen(function*() {
    const extraRoutes = [...documentRoutes, ...routesOfPages]
    // Every answer logged is also counted (Metrics.ts), with or without the log.
    const accessLog = withRequestMetrics(yield* makeAccessLog)
    const handleOperation = yield* makeCompiledApi(settings, extraRoutes, accessLog)
    const router = yield* HttpApiBuilder.Router.router
    const web = yield* Effect.serviceOption(WebApplication)
    const notFoundPage = Option.map(web, (w) =>
      Effect.gen(function*() {
        const app = yield* w.app
        const request = yield* HttpServerRequest.HttpServerRequest
        const page = yield* Effect.promise(() => app.render({ path: new URL(request.url, "http://host").pathname, query: "", acceptLanguage: request.headers["accept-language"] }))
        return HttpServerResponse.html(page.html).pipe(HttpServerResponse.setStatus(404), HttpServerResponse.setHeaders(pageHeadersOf(app)))
      }))
    const fallback = yield* NodeHttpServer.makeHandler(withEnvelope(yield* HttpRouter.toHttpApp(router), notFoundPage))
    const isUnknownBrowserPath = unknownBrowserPath(compileRoutes([...(yield* Operations).entries.values()], extraRoutes))
    const runtime = yield* Effect.runtime<never>()
    const handle = (req: IncomingMessage, res: ServerResponse) => {
      assignRequestId(req, res)
      if (Option.isSome(web) && wantsHtml(req.headers.accept) && isUnknownBrowserPath(req)) {
        const started = performance.now()
        Runtime.runPromise(runtime, web.value.app).then((app) => writeNotFoundPage(app, req, res)).catch(() => {
          if (!res.headersSent) res.writeHead(500, { "cache-control": "no-store" })
          res.end()
        }).finally(() => accessLog.write(req.method ?? "GET", req.url ?? "/", res.statusCode, started, undefined, requestIdOf(req)))
        return
      }
      if (!handleOperation(req, res)) fallback(req, res)
    }
    // `Expect: 100-continue`: an operation decides before the client sends its body (a body over
    // the operation's bound is answered 413, never `100 Continue` first); other routes continue.
    const handleContinue = (req: IncomingMessage, res: ServerResponse) => {
      assignRequestId(req, res)
      if (handleOperation(req, res, true)) return
      res.writeContinue()
      fallback(req, res)
    }
    return { handle, handleContinue, web } as const
  })

/** The router layers a handler is built on: the documents, the given pages, the platform's Node context. */
const withRoutes = <A, E, R, E2, R2>(layer: Layer.Layer<A, E, R>, pages: Pages<E2, R2>) =>
  layer.pipe(
    Layer.provide(DocumentRoutes),
    Layer.provide(pages.layer),
    Layer.provideMerge(HttpApiBuilder.Router.Live),
    Layer.provide(NodeHttpServer.layerContext)
  )

/**
 * Serves the host's handler on one Node listener of its own. It outputs the `HttpServer`, so
 * callers (tests, benchmarks) can read the bound address.
 */
export const makeHttpServer = <E2 = never, R2 = never>(
  settings: Pick<HttpSettings, "maxBodyBytes" | "port" | "host" | "publicOrigin" | "trustProxy" | "connections" | "redirectLoopbackNavigations">,
  pages: Pages<E2, R2> = { layer: Layer.empty as Layer.Layer<never, E2, R2>, routes: [] }
) =>
  withRoutes(
    Layer.scoped(
      HttpServer.HttpServer,
      Effect.gen(function*() {
        const { handle, handleContinue, web } = yield* makeNodeHandler(settings, pages.routes)
        const limits = settings.connections ?? defaultConnectionLimits
        const redirect = settings.redirectLoopbackNavigations === true
        const server = createServer({ maxHeaderSize, ...serverOptions(limits) }, (req, res) => {
          assignRequestId(req, res)
          if (redirect && redirectedToLocalhost(req, res)) return
          handle(req, res)
        })
        server.on("checkContinue", handleContinue)
        applyConnectionLimits(server, limits)
        yield* listen(server, settings.port, settings.host)
        yield* Effect.addFinalizer(() => close(server))
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : settings.port
        // The web application's server-side client reads the API over this listener (pages/WebApp.ts).
        if (Option.isSome(web)) yield* Deferred.succeed(web.value.loopback, `http://${loopbackOf(settings.host)}:${port}`)
        // The bound address first (scripts read the port from it), then where browsers must go: sign-in
        // checks Origin against BIRZHA_PUBLIC_ORIGIN, so another spelling of the host is refused.
        const publicOrigin = redirect ? `http://localhost:${port}` : settings.publicOrigin
        yield* Effect.logInfo(`Listening on http://${settings.host}:${port}; open ${publicOrigin} (sign-in works at this origin only)`)
        return HttpServer.make({
          // Routes are registered through the router above; nothing is served through this.
          serve: () => Effect.void,
          address: { _tag: "TcpAddress", hostname: settings.host, port }
        })
      })
    ),
    pages
  )

/** The pages, file bytes and MCP endpoint served beside the catalog. */
const ServicePages = {
  layer: Layer.mergeAll(WebAppRoutes, FileRoutes, McpRoutes, OAuthRoutes),
  routes: [...webAppRoutes, ...fileRoutes, ...mcpRoutes, ...oauthRoutes]
}

/** The same without the web application, whose pages read the API over the host's own listener (a mounted handler has none). */
export const ServicePagesWithoutWebApp = {
  layer: Layer.mergeAll(FileRoutes, McpRoutes, OAuthRoutes),
  routes: [...fileRoutes, ...mcpRoutes, ...oauthRoutes]
}

/**
 * The registry and the settings the host's routes read. `linkBase` is where the service's
 * addresses start (approval pages, upload addresses, sign-in links): the public origin, followed by
 * the mount path of a mounted handler.
 */
export const hostServices = (settings: Pick<HttpSettings, "publicOrigin" | "trustProxy" | "maxBodyBytes"> & { readonly linkBase: string }) =>
  OperationsLive.pipe(
    Layer.provideMerge(WebhookSettingsLive(settings.linkBase)),
    Layer.provideMerge(Layer.mergeAll(
      Layer.succeed(HostSettings, { publicOrigin: settings.publicOrigin, trustProxy: settings.trustProxy, maxBodyBytes: settings.maxBodyBytes }),
      Layer.succeed(PublicOrigin, settings.linkBase),
      Layer.succeed(SignInConfig, { publicOrigin: settings.linkBase })
    ))
  )

/** The service's HTTP server: the whole catalog. Needs `Readiness`, the database and the domain services. */
export const HttpServerLive = (settings: HttpSettings) =>
  makeHttpServer(settings, ServicePages).pipe(
    Layer.provide(WebApplicationLive),
    Layer.provideMerge(hostServices({ ...settings, linkBase: settings.publicOrigin }))
  )

export { makeNodeHandler, withRoutes }
export { Operations }
