import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Config, Context, Deferred, Effect, Layer, Option } from "effect"
import { readFile } from "node:fs/promises"
import type { IncomingMessage, ServerResponse } from "node:http"
import { join } from "node:path"
import { seeOther } from "./PageSession.js"

/**
 * Every page runs only the service's own scripts and styles (nothing inline, nothing from
 * elsewhere), may not be framed, and is never cached: the pages that change things (approvals
 * above all) are among them.
 */
export const pageSecurityHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/** What the host uses of `@birzha/web/server` (its built render function, see packages/web). */
interface WebModule {
  readonly createWebApp: (options: { readonly apiBaseUrl: string; readonly theme?: unknown }) => WebApp
}

/** A page's read that failed (its page answered 503), as the application describes it: no header, body or query in it. */
export interface FailedRead {
  readonly operation: string
  readonly kind: string
  readonly message: string
}

/**
 * One warning line for a page answered 503 by a failed read: which operation, how it failed and
 * the page's path (not its query). The application hands the failure over and the host logs it:
 * the application's module may hold its own copy of `effect`, whose logger is not the host's.
 */
export const logFailedRead = (path: string, failed: FailedRead) =>
  Effect.logWarning("page read failed").pipe(
    Effect.annotateLogs({ page: path, operation: failed.operation, failure: failed.kind, cause: failed.message })
  )

export interface WebApp {
  readonly render: (request: {
    readonly path: string
    readonly query: string
    readonly acceptLanguage?: string | undefined
    readonly cookie?: string | undefined
  }) => Promise<{ readonly status: number; readonly html: string; readonly location?: string; readonly failedRead?: FailedRead }>
  readonly clientDir: string
  readonly themeCss: string
  readonly themeProblems: ReadonlyArray<string>
  /** The hashes of the pages' inline `<style>` (`'sha256-…'`), which their CSP's `style-src` allows. */
  readonly styleSources?: ReadonlyArray<string>
}

/**
 * The web application's pages (packages/web), rendered on the server by its own build: the one
 * list the router serves them from and the route table (405 on another method) shows.
 */
const pageRoutes = [
  { method: "GET", path: "/" },
  { method: "GET", path: "/catalog" },
  { method: "GET", path: "/p/{uuid}" },
  { method: "GET", path: "/u/{uuid}" },
  { method: "GET", path: "/customers/{alias}" },
  { method: "GET", path: "/sign-in" },
  { method: "GET", path: "/auth/link" },
  { method: "GET", path: "/account" },
  { method: "GET", path: "/tasks/new" },
  { method: "GET", path: "/tasks/{uuid}/edit" },
  { method: "GET", path: "/publications" },
  { method: "GET", path: "/moderation" },
  { method: "GET", path: "/responses" },
  { method: "GET", path: "/deals" },
  { method: "GET", path: "/messages" },
  { method: "GET", path: "/messages/{uuid}" },
  { method: "GET", path: "/settings" },
  { method: "GET", path: "/settings/profile" },
  { method: "GET", path: "/jobs/new" },
  { method: "GET", path: "/jobs/{uuid}/edit" },
  { method: "GET", path: "/services/new" },
  { method: "GET", path: "/services/{uuid}/edit" },
  { method: "GET", path: "/portfolio/new" },
  { method: "GET", path: "/portfolio/{uuid}/edit" },
  { method: "GET", path: "/articles/new" },
  { method: "GET", path: "/articles/{uuid}/edit" },
  { method: "GET", path: "/resumes/new" },
  { method: "GET", path: "/resumes/{uuid}/edit" },
  { method: "GET", path: "/trainings/new" },
  { method: "GET", path: "/trainings/{uuid}/edit" },
  // The training editor's former addresses: 303 to /trainings (packages/web/src/server/loaders.ts).
  { method: "GET", path: "/learning/new" },
  { method: "GET", path: "/learning/{uuid}/edit" },
  { method: "GET", path: "/settings/integrations" },
  { method: "GET", path: "/settings/events" },
  { method: "GET", path: "/settings/webhooks" },
  { method: "GET", path: "/settings/webhooks/{uuid}" },
  { method: "GET", path: "/settings/rules" },
  { method: "GET", path: "/settings/rules/new" },
  { method: "GET", path: "/settings/rules/{uuid}" },
  { method: "GET", path: "/approvals" },
  { method: "GET", path: "/approvals/{uuid}" },
  { method: "GET", path: "/oauth/consent/{uuid}" },
  { method: "GET", path: "/settings/agents" },
  { method: "GET", path: "/webhooks/{uuid}/approve" },
  { method: "GET", path: "/favorites" },
  { method: "GET", path: "/complaints" },
  { method: "GET", path: "/notifications" },
  { method: "GET", path: "/moderation/complaints" },
  { method: "GET", path: "/moderation/reviews" },
  { method: "GET", path: "/courses" },
  { method: "GET", path: "/courses/{uuid}" },
  { method: "GET", path: "/learning" },
  { method: "GET", path: "/learning/{uuid}" },
  { method: "GET", path: "/learning/{uuid}/calendar" },
  { method: "GET", path: "/learning/staff-invitations/{uuid}" },
  { method: "GET", path: "/authoring" },
  { method: "GET", path: "/authoring/courses/{uuid}" },
  { method: "GET", path: "/authoring/courses/{uuid}/runs" },
  { method: "GET", path: "/authoring/courses/{uuid}/staff" },
  { method: "GET", path: "/teaching" },
  { method: "GET", path: "/teaching/{uuid}" },
  { method: "GET", path: "/teaching/{uuid}/reviews" },
  { method: "GET", path: "/teaching/{uuid}/reviews/{submission}" },
  { method: "GET", path: "/teaching/{uuid}/appeals" },
  { method: "GET", path: "/teaching/{uuid}/extensions" },
  { method: "GET", path: "/teaching/{uuid}/roster" },
  { method: "GET", path: "/teaching/{uuid}/regrades" },
  { method: "GET", path: "/teaching/{uuid}/analytics" },
  { method: "GET", path: "/teaching/{uuid}/incidents" },
  { method: "GET", path: "/admin" },
  { method: "GET", path: "/admin/accounts" },
  { method: "GET", path: "/admin/accounts/{uuid}" },
  { method: "GET", path: "/admin/roles" },
  { method: "GET", path: "/authoring/library" },
  { method: "GET", path: "/authoring/courses/{uuid}/admin" },
  { method: "GET", path: "/teaching/{uuid}/groups" },
  { method: "GET", path: "/teaching/{uuid}/exports" },
  { method: "GET", path: "/learning/jobs/{uuid}" },
  { method: "GET", path: "/admin/mail" },
] as const

/** The pages and the files of the application's build. */
export const webAppRoutes = [
  ...pageRoutes,
  { method: "GET", path: "/app/{name}" },
  { method: "GET", path: "/app/assets/{name}" },
  { method: "GET", path: "/favicon.ico" }
] as const

/**
 * The web application of this host: its render function once the host listens (its client reads
 * the API over the host's own listener, whose port is known only then), and where that is.
 */
export class WebApplication extends Context.Tag("@birzha/http-host/WebApplication")<WebApplication, {
  /** Completed by the host once it listens: the base URL its own API answers at, on the loopback interface. */
  readonly loopback: Deferred.Deferred<string>
  readonly app: Effect.Effect<WebApp>
}>() {}

// A specifier the bundler of the `birzha` command does not follow: the module must stay the web
// package's own file, which finds its browser build beside it (packages/cli/tsup.config.ts).
const webModule = "@birzha/web/server"

/** The operator's theme (README.md, Configuration): a JSON file's path in BIRZHA_WEB_THEME. */
const themeFile = Config.option(Config.string("BIRZHA_WEB_THEME"))

export const WebApplicationLive = Layer.effect(
  WebApplication,
  Effect.gen(function*() {
    const loopback = yield* Deferred.make<string>()
    const file = yield* themeFile
    const theme = Option.isNone(file) ? undefined : yield* Effect.tryPromise({
      try: async () => JSON.parse(await readFile(file.value, "utf8")) as unknown,
      catch: (cause) => new Error(`BIRZHA_WEB_THEME: cannot read ${file.value} as JSON (${String(cause)})`)
    }).pipe(Effect.orDie)
    const notBuilt = (cause: unknown) =>
      new Error(`the web application is not built (${String(cause)}): run npx -y pnpm@10.34.9 build:js, or npx -y pnpm@10.34.9 start`)
    // At start only where the module is: loading its server renderer (React, the pages, their
    // client and translations) is left to the first page, so a host that serves the API alone
    // does not hold it (bench/README.md, `memory`). A missing build still stops the start.
    // (`import.meta.resolve` is Node's; a test runner's module loader may not have it.)
    if (typeof import.meta.resolve === "function") {
      yield* Effect.try({ try: () => import.meta.resolve(webModule), catch: notBuilt }).pipe(Effect.orDie)
    }
    const app = yield* Effect.cached(
      Effect.gen(function*() {
        const module = yield* Effect.tryPromise({
          try: () => import(/* @vite-ignore */ webModule) as Promise<WebModule>,
          catch: notBuilt
        }).pipe(Effect.orDie)
        const apiBaseUrl = yield* Deferred.await(loopback)
        const made = module.createWebApp({ apiBaseUrl, theme })
        for (const problem of made.themeProblems) yield* Effect.logWarning(`BIRZHA_WEB_THEME: ${problem}; its default is used`)
        return made
      })
    )
    return { loopback, app }
  })
)

const headersByApp = new WeakMap<WebApp, Readonly<Record<string, string>>>()

/**
 * The application's pages' headers: the security headers, with the hashes of the pages' one
 * inline `<style>` in `style-src` (nothing else inline is allowed; no `unsafe-inline`).
 */
export const pageHeadersOf = (app: WebApp): Readonly<Record<string, string>> => {
  const known = headersByApp.get(app)
  if (known !== undefined) return known
  const sources = (app.styleSources ?? []).filter((source) => /^'sha256-[A-Za-z0-9+/]+=*'$/.test(source))
  const headers = sources.length === 0 ? { ...pageSecurityHeaders } : {
    ...pageSecurityHeaders,
    "content-security-policy": pageSecurityHeaders["content-security-policy"].replace("style-src 'self'", `style-src 'self' ${sources.join(" ")}`)
  }
  headersByApp.set(app, headers)
  return headers
}

/** The request as the application's render function takes it. */
const pageRequest = (url: string, headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) => {
  const at = url.indexOf("?")
  const first = (value: string | ReadonlyArray<string> | undefined) => typeof value === "string" ? value : value?.[0]
  return {
    path: at < 0 ? url : url.slice(0, at),
    query: at < 0 ? "" : url.slice(at + 1),
    acceptLanguage: first(headers["accept-language"]),
    cookie: first(headers["cookie"])
  }
}

/**
 * The HTML 404 page for a browser path nothing serves (the application has no page there either),
 * answered straight on the Node response.
 */
export const writeNotFoundPage = (app: WebApp, req: IncomingMessage, res: ServerResponse): Promise<void> =>
  app.render(pageRequest(req.url ?? "/", req.headers)).then(
    (page) => {
      res.writeHead(404, { ...pageHeadersOf(app), "content-type": "text/html; charset=utf-8" })
      res.end(req.method === "HEAD" ? undefined : page.html)
    },
    () => {
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" })
      res.end()
    }
  )

const contentTypes: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2"
}

/** A file name of the build: letters, digits, `-`, `_` and one extension; nothing that climbs out of the folder. */
const fileName = /^[A-Za-z0-9_-]{1,120}\.[a-z0-9]{1,8}$/

const notFoundText = () =>
  HttpServerResponse.text("Not found", { status: 404, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } })

/**
 * A file of the browser build: hashed names (under `assets/`) cached for a year as immutable; the
 * others (favicon, logo) for five minutes.
 */
const buildFile = (app: WebApp, name: string, immutable: boolean) =>
  Effect.gen(function*() {
    const dot = name.lastIndexOf(".")
    const type = contentTypes[name.slice(dot)]
    if (!fileName.test(name) || type === undefined) return notFoundText()
    const body = yield* Effect.tryPromise(() => readFile(join(app.clientDir, immutable ? "assets" : "", name))).pipe(Effect.option)
    if (Option.isNone(body)) return notFoundText()
    return HttpServerResponse.uint8Array(body.value, {
      contentType: type,
      headers: {
        "cache-control": immutable ? "public, max-age=31536000, immutable" : "public, max-age=300",
        "x-content-type-options": "nosniff"
      }
    })
  })

/** The application's pages and the files of its browser build. */
export const WebAppRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const web = yield* WebApplication
    const page = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const app = yield* web.app
      const asked = pageRequest(request.url, request.headers)
      const rendered = yield* Effect.promise(() => app.render(asked))
      if (rendered.failedRead !== undefined) yield* logFailedRead(asked.path, rendered.failedRead)
      if (rendered.location !== undefined) return seeOther(rendered.location)
      return HttpServerResponse.html(rendered.html).pipe(
        HttpServerResponse.setStatus(rendered.status),
        HttpServerResponse.setHeaders(pageHeadersOf(app))
      )
    })
    const lastSegment = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const path = new URL(request.url, "http://host").pathname
      return path.slice(path.lastIndexOf("/") + 1)
    })
    // Each page's path in the router's syntax: `{uuid}` as `:uuid`.
    for (const route of pageRoutes) yield* router.get(route.path.replace(/\{(\w+)\}/g, ":$1") as `/${string}`, page)
    yield* router.get(
      "/app/:name",
      Effect.gen(function*() {
        const app = yield* web.app
        const name = yield* lastSegment
        if (name === "theme.css") {
          return HttpServerResponse.text(app.themeCss, {
            contentType: "text/css; charset=utf-8",
            headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
          })
        }
        return yield* buildFile(app, name, false)
      })
    )
    yield* router.get("/app/assets/:name", Effect.flatMap(Effect.all([web.app, lastSegment]), ([app, name]) => buildFile(app, name, true)))
    yield* router.get("/favicon.ico", Effect.flatMap(web.app, (app) => buildFile(app, "favicon.svg", false)))
  })
)
