import { envelope, NotFound } from "@birzha/domain"
import { ownProfiles, ServerSecret } from "@birzha/domain/server"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { assets } from "./Assets.js"
import { escapeHtml, languageOf, textsOf } from "./Language.js"
import { pageActor, toSignIn } from "./PageSession.js"
import { layout, pageSecurityHeaders } from "./Layout.js"

/** Routes of the pages a person uses in a browser, beside the API (listed for the route table's 405s). */
export const pageRoutes = [
  { method: "GET", path: "/account" },
  { method: "GET", path: "/assets/{name}" }
] as const

const notFound = () => HttpServerResponse.unsafeJson(envelope(NotFound, "No such asset"), { status: 404 })

const html = (body: string) => HttpServerResponse.html(body).pipe(HttpServerResponse.setHeaders(pageSecurityHeaders))

const pageOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const language = languageOf(request.url, request.headers["accept-language"])
  return { request, language, texts: textsOf(language) }
})

const scriptMessages = (t: ReturnType<typeof textsOf>) => ({
  invalidEmail: t.invalidEmail,
  invalidCode: t.invalidCode,
  invalidLink: t.invalidLink,
  rateLimited: t.rateLimited,
  unavailable: t.unavailable,
  failed: t.failed,
  accountGone: t.accountGone,
  linkMissing: t.linkMissing
})

const accountPage = (sql: SqlClient.SqlClient, secret: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const { language, request, texts: t } = yield* pageOf
    const actor = yield* pageActor(request).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(ServerSecret, secret)
    )
    if (Option.isNone(actor)) {
      return toSignIn(language)
    }
    const { profiles } = yield* ownProfiles(actor.value).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    const items = profiles.map((p) =>
      `<li><span>${escapeHtml(p.name)} · ${escapeHtml(p.type)}${p.current ? ` · <strong>${t.acting}</strong>` : ""}</span>${
        p.current ? "" : `<button type="button" data-profile-uuid="${escapeHtml(p.uuid)}">${t.switchTo}</button>`
      }</li>`
    ).join("\n")
    return html(layout({
      language,
      texts: t,
      title: t.accountTitle,
      path: "/account",
      script: "account.js",
      messages: scriptMessages(t),
      body: `<p>${t.signedInAs} <strong id="signed-in-email">${escapeHtml(actor.value.email)}</strong></p>
<h2>${t.profiles}</h2>
<ul class="profiles">
${items}
</ul>
<p><a href="/approvals?lang=${language}">${t.approvals}</a></p>
<p><a href="/settings/integrations?lang=${language}">${t.integrations}</a></p>
<button type="button" id="sign-out">${t.signOut}</button>
<p id="status" role="status" aria-live="polite"></p>`
    }))
  })

/**
 * The account page (sign-in and the emailed link's page are the web application's, packages/web)
 * and the older pages' scripts and stylesheet.
 */
export const PageRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    yield* router.get("/account", accountPage(sql, secret))
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
