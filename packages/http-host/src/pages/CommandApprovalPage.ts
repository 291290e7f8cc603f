import { catalog, type CatalogEntry, kindList } from "@birzha/domain"
import {
  approvalOf,
  type CommandRow,
  commandOfAccount,
  commandStateOf,
  decideCommand,
  findOwnPublication,
  getPublication,
  pendingCommandsOfAccount,
  ServerSecret
} from "@birzha/domain/internal"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { HostSettings } from "../HostSettings.js"
import { escapeHtml, type Language, languageOf, textsOf } from "./Language.js"
import { pageActor, pathUuid, seeOther, toSignIn } from "./PageSession.js"
import { layout, pageSecurityHeaders } from "./Layout.js"

/** The owner's page for a command a bearer client prepared (spec: approval flow for bearer clients). */
export const commandPageRoutes = [
  { method: "GET", path: "/approvals" },
  { method: "GET", path: "/approvals/{uuid}" },
  { method: "POST", path: "/approvals/{uuid}" }
] as const

const texts = {
  ru: {
    title: "Подтверждение действия интеграции",
    explain: "Интеграция просит выполнить от вашего имени действие, которое требует вашего подтверждения. Проверьте параметры: выполнено будет ровно это.",
    what: "Что будет сделано",
    also: "Заодно",
    record: "Запись",
    newDraft: "Новый черновик",
    untitled: "без названия",
    changes: "Изменения черновика",
    field: "Поле",
    now: "Сейчас",
    proposed: "Станет",
    noChanges: "Данные не отличаются от текущего черновика.",
    listTitle: "Ждут вашего подтверждения",
    none: "Нет запросов, ждущих вашего решения.",
    open: "Открыть",
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
    what: "What it does",
    also: "Also",
    record: "Record",
    newDraft: "New draft",
    untitled: "untitled",
    changes: "Changes to the draft",
    field: "Field",
    now: "Now",
    proposed: "Proposed",
    noChanges: "The data does not differ from the current draft.",
    listTitle: "Waiting for your approval",
    none: "Nothing is waiting for your decision.",
    open: "Open",
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

const page = (language: Language, path: string, body: string, status = 200, title: string = texts[language].title) =>
  HttpServerResponse.html(layout({ language, texts: textsOf(language), title, path, body })).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(headers)
  )

const message = (language: Language, path: string, text: string, status: number) =>
  page(language, path, `<p id="status" role="status">${escapeHtml(text)}</p>`, status)

const argumentsOf = (row: CommandRow): Record<string, unknown> => {
  const value: unknown = typeof row.arguments === "string" ? JSON.parse(row.arguments) : row.arguments
  return typeof value === "object" && value !== null ? value as Record<string, unknown> : {}
}

const entries: ReadonlyMap<string, CatalogEntry> = new Map(catalog.map((entry) => [entry.id, entry]))

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
const shown = (value: unknown) => value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value)
const titleOf = (data: Record<string, unknown>): string | undefined => {
  const title = data["title"] ?? data["name"]
  return typeof title === "string" && title.trim() !== "" ? title : undefined
}

/** The publication a command touches, as the owner may see it: its own draft, or another's public version. */
interface Touched {
  readonly kind: keyof ReturnType<typeof textsOf>["kinds"]
  readonly title: string | undefined
  /** The owner's current draft (only for its own publication). */
  readonly draft: Record<string, unknown> | undefined
}

const touchedBy = (row: CommandRow, args: Record<string, unknown>): Effect.Effect<Option.Option<Touched>, SqlError, SqlClient.SqlClient> => {
  const uuid = args["publicationUuid"]
  if (typeof uuid !== "string" || !uuidPattern.test(uuid)) return Effect.succeed(Option.none())
  return Effect.flatMap(findOwnPublication(row.profile_uuid, uuid), (own): Effect.Effect<Option.Option<Touched>, SqlError, SqlClient.SqlClient> =>
    Option.isSome(own)
      ? Effect.succeed(Option.some({ kind: own.value.kind, title: titleOf(own.value.draft), draft: own.value.draft }))
      : Effect.map(getPublication(uuid), Option.map((p): Touched => ({ kind: p.kind, title: titleOf(p.approved), draft: undefined }))))
}

/** The fields a save changes against the current draft (every field for a new draft): name, now, proposed. */
const diffOf = (draft: Record<string, unknown>, data: Record<string, unknown>) =>
  [...new Set([...Object.keys(draft), ...Object.keys(data)])]
    .filter((name) => JSON.stringify(draft[name]) !== JSON.stringify(data[name]))
    .map((name) => ({ name, now: shown(draft[name]), proposed: shown(data[name]) }))

const recordSection = (language: Language, row: CommandRow, args: Record<string, unknown>, touched: Option.Option<Touched>) => {
  const t = texts[language]
  const kinds = textsOf(language).kinds
  const data = isObject(args["data"]) ? args["data"] : undefined
  const kind = Option.match(touched, {
    onNone: () => catalogKindOf(row.operation_id),
    onSome: (found) => found.kind
  })
  const title = (data === undefined ? undefined : titleOf(data)) ?? Option.getOrUndefined(touched)?.title
  const heading = Option.isNone(touched) && data !== undefined ? `${t.newDraft}${kind === undefined ? "" : ` · ${kinds[kind]}`}` : kind === undefined ? "" : kinds[kind]
  const record = Option.isNone(touched) && data === undefined
    ? ""
    : `<h2>${t.record}</h2>
<p id="record">${escapeHtml(heading)}${heading === "" ? "" : ": "}«<span id="record-title">${escapeHtml(title ?? t.untitled)}</span>»</p>`
  if (data === undefined) return record
  const draft = Option.getOrUndefined(touched)?.draft ?? {}
  const changes = diffOf(draft, data)
  const table = changes.length === 0
    ? `<p id="changes">${t.noChanges}</p>`
    : `<table id="changes">
<caption>${t.changes}</caption>
<thead><tr><th scope="col">${t.field}</th><th scope="col">${t.now}</th><th scope="col">${t.proposed}</th></tr></thead>
<tbody>
${changes.map((c) => `<tr><th scope="row"><code>${escapeHtml(c.name)}</code></th><td><del>${escapeHtml(c.now)}</del></td><td><ins>${escapeHtml(c.proposed)}</ins></td></tr>`).join("\n")}
</tbody>
</table>`
  return `${record}\n${table}`
}

/** The kind an owner command acts on (`tasks.save` → task), from the kinds table's command prefixes. */
const catalogKindOf = (operationId: string): Touched["kind"] | undefined =>
  kindList.find((kind) => kind.command === operationId.split(".")[0])?.kind

const commandPage = (language: Language, row: CommandRow, touched: Option.Option<Touched>) => {
  const t = texts[language]
  const path = `/approvals/${row.uuid}`
  const state = commandStateOf(row)
  const args = argumentsOf(row)
  const entry = entries.get(row.operation_id)
  const widened = entry === undefined ? [] : approvalOf(entry, args, entries).widened
  const readable = Object.entries(args).map(([name, value]) =>
    `<dt><code>${escapeHtml(name)}</code></dt><dd><code>${escapeHtml(shown(value))}</code></dd>`
  ).join("\n")
  const facts = `<p>${t.explain}</p>
<h2>${t.what}</h2>
<p id="operation-summary">${escapeHtml(entry?.summary ?? row.operation_id)}</p>
${widened.map((other) => `<p class="also">${t.also}: ${escapeHtml(other.summary)} (<code>${escapeHtml(other.id)}</code>)</p>`).join("\n")}
${recordSection(language, row, args, touched)}
<dl>
<dt>${t.operation}</dt><dd><code id="operation-id">${escapeHtml(row.operation_id)}</code></dd>
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

/** `/approvals`: the account's commands waiting for a decision, each with what it does, its record and expiry. */
const listPage = (language: Language, rows: ReadonlyArray<readonly [CommandRow, Option.Option<Touched>]>) => {
  const t = texts[language]
  const kinds = textsOf(language).kinds
  const items = rows.map(([row, touched]) => {
    const args = argumentsOf(row)
    const data = isObject(args["data"]) ? args["data"] : undefined
    const title = (data === undefined ? undefined : titleOf(data)) ?? Option.getOrUndefined(touched)?.title
    const kind = Option.getOrUndefined(touched)?.kind ?? catalogKindOf(row.operation_id)
    const record = title === undefined ? "" : ` — ${kind === undefined ? "" : `${kinds[kind]} `}«${escapeHtml(title)}»`
    return `<li><a href="/approvals/${row.uuid}?lang=${language}">${escapeHtml(entries.get(row.operation_id)?.summary ?? row.operation_id)}</a>${record}
<br><span>${t.expires}: <time datetime="${row.expires_at.toISOString()}">${escapeHtml(row.expires_at.toISOString())}</time></span></li>`
  })
  const body = rows.length === 0 ? `<p id="status" role="status">${t.none}</p>` : `<ul id="pending">\n${items.join("\n")}\n</ul>`
  return page(language, "/approvals", body, 200, t.listTitle)
}

/** GET shows the exact command to the key's own account; POST (its buttons, same origin only) approves or denies it. */
export const CommandPageRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const { publicOrigin } = yield* HostSettings
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
      "/approvals",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const language = languageOf(request.url, request.headers["accept-language"])
        const actor = yield* withServices(pageActor(request))
        if (Option.isNone(actor)) return toSignIn(language, "/approvals")
        const rows = yield* withServices(pendingCommandsOfAccount(actor.value.accountUuid))
        const touched = yield* withServices(Effect.forEach(rows, (row) => Effect.map(touchedBy(row, argumentsOf(row)), (found) => [row, found] as const)))
        return listPage(language, touched)
      }).pipe(Effect.orDie)
    )

    yield* router.get(
      "/approvals/:uuid",
      Effect.gen(function*() {
        const { actor, language, path, uuid } = yield* context
        if (Option.isNone(actor)) {
          // Back to this approval once signed in (a path of this site, checked again by the sign-in page).
          return toSignIn(language, uuidPattern.test(uuid) ? path : undefined)
        }
        const row = uuidPattern.test(uuid) ? yield* withServices(commandOfAccount(actor.value.accountUuid, uuid)) : Option.none()
        if (Option.isNone(row)) return message(language, path, texts[language].notFound, 404)
        const touched = yield* withServices(touchedBy(row.value, argumentsOf(row.value)))
        return commandPage(language, row.value, touched)
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
