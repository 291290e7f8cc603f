import { type SessionActor } from "@birzha/domain"
import { WebhookSettings } from "@birzha/domain/internal"
import { approveWebhookEndpoint, type EndpointRow, findOwnEndpoint, ServerSecret } from "@birzha/domain/internal"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { HostSettings } from "../HostSettings.js"
import { escapeHtml, type Language, languageOf, textsOf } from "./Language.js"
import { pageActor, pathUuid, seeOther, toSignIn } from "./PageSession.js"
import { layout, pageSecurityHeaders } from "./Layout.js"

/** The owner's page for approving a webhook's exact URL (spec: prepared → owner approves the exact HTTPS URL). */
export const webhookPageRoutes = [
  { method: "GET", path: "/webhooks/{uuid}/approve" },
  { method: "POST", path: "/webhooks/{uuid}/approve" }
] as const

const texts = {
  ru: {
    title: "Подтверждение адреса вебхука",
    explain: "Биржа будет отправлять подписанные события на этот адрес. Подтвердите, что это ваш адрес и он указан точно.",
    url: "Адрес",
    events: "События",
    payload: "Содержимое",
    reference: "ссылка (objectUuid и status)",
    current: "текущее представление записи",
    approve: "Подтвердить этот адрес",
    approved: "Адрес подтверждён. Теперь отправьте тестовую доставку (webhooks.test): после ответа 2xx вебхук станет активным.",
    state: "Состояние",
    notFound: "Такого вебхука у действующего профиля нет.",
    changed: "Вебхук изменился, пока открыта эта страница. Обновите её и проверьте адрес снова.",
    foreign: "Этот запрос должен прийти со страницы самого сервиса.",
    signIn: "Войдите, чтобы подтвердить адрес."
  },
  en: {
    title: "Approve a webhook URL",
    explain: "Birzha will send signed events to this address. Approve it only if it is yours and exactly right.",
    url: "URL",
    events: "Events",
    payload: "Payload",
    reference: "reference (objectUuid and status)",
    current: "the record's current representation",
    approve: "Approve this URL",
    approved: "The URL is approved. Now send a test delivery (webhooks.test): once it is answered 2xx the webhook is active.",
    state: "State",
    notFound: "The acting profile has no such webhook.",
    changed: "The webhook changed while this page was open. Reload it and check the URL again.",
    foreign: "This request must come from the service's own page.",
    signIn: "Sign in to approve the URL."
  }
} as const

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

// With the pages' usual `no-referrer`, a browser sends `Origin: null` on a form post; `same-origin`
// lets this page's own form carry the real Origin (checked below) and still tells other sites nothing.
const headers = { ...pageSecurityHeaders, "referrer-policy": "same-origin" }

const page = (language: Language, path: string, body: string, status = 200) =>
  HttpServerResponse.html(layout({ language, texts: textsOf(language), title: texts[language].title, path, body })).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(headers)
  )

const message = (language: Language, path: string, text: string, status: number) =>
  page(language, path, `<p id="status" role="status">${escapeHtml(text)}</p>`, status)

const endpointPage = (language: Language, row: EndpointRow) => {
  const t = texts[language]
  const path = `/webhooks/${row.uuid}/approve`
  const facts = `<p>${t.explain}</p>
<dl>
<dt>${t.url}</dt><dd><code id="webhook-url">${escapeHtml(row.url)}</code></dd>
<dt>${t.events}</dt><dd>${row.event_types.map((type) => `<code>${escapeHtml(type)}</code>`).join(", ")}</dd>
<dt>${t.payload}</dt><dd>${row.payload_mode === "current" ? t.current : t.reference}</dd>
<dt>${t.state}</dt><dd id="webhook-state">${escapeHtml(row.state)}</dd>
</dl>`
  const action = row.approved_at === null
    ? `<form method="post" action="${path}?lang=${language}">
<input type="hidden" name="url" value="${escapeHtml(row.url)}">
<input type="hidden" name="expectedRevision" value="${row.revision}">
<button type="submit" id="approve">${t.approve}</button>
</form>`
    : `<p id="status" role="status">${t.approved}</p>`
  return page(language, path, facts + "\n" + action)
}

/** GET shows the endpoint's exact URL and a button; POST (the button, same origin only) approves it. */
export const WebhookPageRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const settings = yield* WebhookSettings
    const { publicOrigin } = yield* HostSettings
    const withServices = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ServerSecret | WebhookSettings>) =>
      effect.pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.provideService(ServerSecret, secret),
        Effect.provideService(WebhookSettings, settings)
      )

    const context = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const language = languageOf(request.url, request.headers["accept-language"])
      const uuid = pathUuid(request.url)
      const actor = yield* withServices(pageActor(request))
      return { request, language, uuid, actor, path: `/webhooks/${uuid}/approve` }
    })

    const ownRow = (actor: SessionActor, uuid: string) =>
      uuidPattern.test(uuid)
        ? withServices(findOwnEndpoint(actor.profileUuid, uuid, { lock: false }))
        : Effect.succeed(Option.none<EndpointRow>())

    yield* router.get(
      "/webhooks/:uuid/approve",
      Effect.gen(function*() {
        const { actor, language, path, uuid } = yield* context
        if (Option.isNone(actor)) {
          return toSignIn(language, path)
        }
        const row = yield* ownRow(actor.value, uuid)
        return Option.isNone(row) ? message(language, path, texts[language].notFound, 404) : endpointPage(language, row.value)
      })
    )

    yield* router.post(
      "/webhooks/:uuid/approve",
      Effect.gen(function*() {
        const { actor, language, path, request, uuid } = yield* context
        const t = texts[language]
        // A form of another site could post here with the owner's cookie: only our own page may.
        if (request.headers["origin"] !== publicOrigin) return message(language, path, t.foreign, 403)
        if (Option.isNone(actor)) return message(language, path, t.signIn, 401)
        if (!uuidPattern.test(uuid)) return message(language, path, t.notFound, 404)
        const form = yield* request.urlParamsBody.pipe(Effect.orElseSucceed(() => UrlParams.empty))
        const url = Option.getOrElse(UrlParams.getFirst(form, "url"), () => "")
        const expectedRevision = Number(Option.getOrElse(UrlParams.getFirst(form, "expectedRevision"), () => ""))
        if (!Number.isInteger(expectedRevision) || expectedRevision < 1) return message(language, path, t.changed, 409)
        return yield* withServices(approveWebhookEndpoint(actor.value, uuid, { url, expectedRevision })).pipe(
          Effect.as(seeOther(`${path}?lang=${language}`)),
          Effect.catchTags({
            NotFound: () => Effect.succeed(message(language, path, t.notFound, 404)),
            RevisionConflict: () => Effect.succeed(message(language, path, t.changed, 409)),
            InvalidState: () => Effect.succeed(message(language, path, t.changed, 409))
          })
        )
      })
    )
  })
)
