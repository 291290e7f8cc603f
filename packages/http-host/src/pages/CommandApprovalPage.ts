import { openApiDocument } from "@birzha/domain"
import { type CommandRow, commandOfAccount, commandStateOf, decideCommand, ServerSecret } from "@birzha/domain/server"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { HostSettings } from "../HostSettings.js"
import { escapeHtml, type Language, languageOf, textsOf } from "./Language.js"
import { pageActor, pathUuid, seeOther, toSignIn } from "./PageSession.js"
import { layout, pageSecurityHeaders } from "./Layout.js"

/** The owner's page for a command a bearer client prepared (spec: approval flow for bearer clients). */
export const commandPageRoutes = [
  { method: "GET", path: "/approvals/{uuid}" },
  { method: "POST", path: "/approvals/{uuid}" }
] as const

const texts = {
  ru: {
    title: "Подтверждение действия интеграции",
    explain: "Интеграция просит выполнить от вашего имени действие, которое требует вашего подтверждения. Проверьте параметры: выполнено будет ровно это.",
    operation: "Операция",
    parameters: "Параметры",
    raw: "Как JSON",
    expires: "Действует до",
    state: "Состояние",
    approve: "Подтвердить",
    deny: "Отклонить",
    states: {
      pending: "ждёт вашего решения",
      approved: "подтверждено; интеграция может выполнить действие",
      denied: "отклонено",
      running: "выполняется",
      committed: "выполнено",
      failed: "выполнено с ошибкой",
      expired: "срок истёк",
      revoked: "ключ интеграции отозван"
    },
    notFound: "Такого запроса у вашей учётной записи нет.",
    foreign: "Этот запрос должен прийти со страницы самого сервиса.",
    signIn: "Войдите, чтобы принять решение."
  },
  en: {
    title: "Approve an integration's action",
    explain: "An integration asks to do something on your behalf that needs your approval. Check the parameters: exactly this will run.",
    operation: "Operation",
    parameters: "Parameters",
    raw: "As JSON",
    expires: "Valid until",
    state: "State",
    approve: "Approve",
    deny: "Deny",
    states: {
      pending: "waiting for your decision",
      approved: "approved; the integration may now run it",
      denied: "denied",
      running: "running",
      committed: "done",
      failed: "ran and failed",
      expired: "expired",
      revoked: "the integration's key was revoked"
    },
    notFound: "Your account has no such request.",
    foreign: "This request must come from the service's own page.",
    signIn: "Sign in to decide."
  }
} as const

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

// `same-origin` lets the page's own form carry its real Origin (checked on POST); see WebhookApprovalPage.
const headers = { ...pageSecurityHeaders, "referrer-policy": "same-origin", "cache-control": "no-store" }

const page = (language: Language, path: string, body: string, status = 200) =>
  HttpServerResponse.html(layout({ language, texts: textsOf(language), title: texts[language].title, path, body })).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(headers)
  )

const message = (language: Language, path: string, text: string, status: number) =>
  page(language, path, `<p id="status" role="status">${escapeHtml(text)}</p>`, status)

const argumentsOf = (row: CommandRow): Record<string, unknown> => {
  const value: unknown = typeof row.arguments === "string" ? JSON.parse(row.arguments) : row.arguments
  return typeof value === "object" && value !== null ? value as Record<string, unknown> : {}
}

/** Each operation's summary, from the same document the API publishes. */
const summaries = (): ReadonlyMap<string, string> => {
  const out = new Map<string, string>()
  for (const item of Object.values(openApiDocument().paths)) {
    for (const op of Object.values(item)) {
      if (op.operationId !== undefined && op.summary !== undefined) out.set(op.operationId, op.summary)
    }
  }
  return out
}

const commandPage = (language: Language, row: CommandRow, summaryOf: ReadonlyMap<string, string>) => {
  const t = texts[language]
  const path = `/approvals/${row.uuid}`
  const state = commandStateOf(row)
  const args = argumentsOf(row)
  const summary = summaryOf.get(row.operation_id)
  const readable = Object.entries(args).map(([name, value]) =>
    `<dt><code>${escapeHtml(name)}</code></dt><dd><code>${escapeHtml(typeof value === "string" ? value : JSON.stringify(value))}</code></dd>`
  ).join("\n")
  const facts = `<p>${t.explain}</p>
<dl>
<dt>${t.operation}</dt><dd><code id="operation-id">${escapeHtml(row.operation_id)}</code>${summary === undefined ? "" : ` — ${escapeHtml(summary)}`}</dd>
<dt>${t.expires}</dt><dd><time datetime="${row.expires_at.toISOString()}">${escapeHtml(row.expires_at.toISOString())}</time></dd>
<dt>${t.state}</dt><dd id="command-state" data-state="${state}">${t.states[state]}</dd>
</dl>
<h2>${t.parameters}</h2>
<dl id="parameters">${readable}</dl>
<h2>${t.raw}</h2>
<pre id="raw-arguments">${escapeHtml(JSON.stringify(args, null, 2))}</pre>`
  const action = state === "pending"
    ? `<form method="post" action="${path}?lang=${language}">
<button type="submit" name="decision" value="approve" id="approve">${t.approve}</button>
<button type="submit" name="decision" value="deny" id="deny">${t.deny}</button>
</form>`
    : ""
  return page(language, path, facts + "\n" + action)
}

/** GET shows the exact command to the key's own account; POST (its buttons, same origin only) approves or denies it. */
export const CommandPageRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const { publicOrigin } = yield* HostSettings
    const summaryOf = summaries()
    const withServices = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ServerSecret>) =>
      effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(ServerSecret, secret))

    const context = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const language = languageOf(request.url, request.headers["accept-language"])
      const uuid = pathUuid(request.url)
      const actor = yield* withServices(pageActor(request))
      return { request, language, uuid, actor, path: `/approvals/${uuid}` }
    })

    yield* router.get(
      "/approvals/:uuid",
      Effect.gen(function*() {
        const { actor, language, path, uuid } = yield* context
        if (Option.isNone(actor)) {
          return toSignIn(language)
        }
        const row = uuidPattern.test(uuid) ? yield* withServices(commandOfAccount(actor.value.accountUuid, uuid)) : Option.none()
        return Option.isNone(row) ? message(language, path, texts[language].notFound, 404) : commandPage(language, row.value, summaryOf)
      }).pipe(Effect.orDie)
    )

    yield* router.post(
      "/approvals/:uuid",
      Effect.gen(function*() {
        const { actor, language, path, request, uuid } = yield* context
        const t = texts[language]
        // A form of another site could post here with the owner's cookie: only our own page may.
        if (request.headers["origin"] !== publicOrigin) return message(language, path, t.foreign, 403)
        if (Option.isNone(actor)) return message(language, path, t.signIn, 401)
        if (!uuidPattern.test(uuid)) return message(language, path, t.notFound, 404)
        const form = yield* request.urlParamsBody.pipe(Effect.orElseSucceed(() => UrlParams.empty))
        const decision = Option.getOrElse(UrlParams.getFirst(form, "decision"), () => "")
        if (decision !== "approve" && decision !== "deny") return message(language, path, t.notFound, 400)
        const row = yield* withServices(decideCommand(actor.value.accountUuid, uuid, decision === "approve" ? "approved" : "denied"))
        if (Option.isNone(row)) return message(language, path, t.notFound, 404)
        return seeOther(`${path}?lang=${language}`)
      }).pipe(Effect.orDie)
    )
  })
)
