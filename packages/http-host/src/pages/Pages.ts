import { envelope, NotFound } from "@birzha/domain"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { assets } from "./Assets.js"

/** The older pages' scripts and stylesheet (listed for the route table's 405s). */
export const pageRoutes = [
  { method: "GET", path: "/assets/{name}" }
] as const

const notFound = () => HttpServerResponse.unsafeJson(envelope(NotFound, "No such asset"), { status: 404 })

/**
 * The scripts and stylesheet of the pages still written here (integrations, approvals); the
 * others are the web application's (packages/web, pages/WebApp.ts).
 */
export const PageRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    yield* router.get(
      "/assets/:name",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const name = decodeURIComponent(new URL(request.url, "http://host").pathname.slice("/assets/".length))
        const asset = Object.hasOwn(assets, name) ? assets[name] : undefined
        if (asset === undefined) return notFound()
        return HttpServerResponse.text(asset.body, {
          contentType: asset.contentType,
          headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
        })
      }).pipe(Effect.catchAllDefect(() => Effect.succeed(notFound())))
    )
  })
)
