import { type Key, keyLimits, scopeCatalog } from "@birzha/domain"
import { listKeys, ownProfiles, ServerSecret, signedInRecently } from "@birzha/domain/internal"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { escapeHtml, type Language, languageOf, textsOf } from "./Language.js"
import { pageActor, toSignIn } from "./PageSession.js"
import { layout, pageSecurityHeaders } from "./Layout.js"

/** The integrations settings page (spec: keys are obtained and their permissions chosen there). */
export const integrationsRoutes = [{ method: "GET", path: "/settings/integrations" }] as const

const texts = {
  ru: {
    title: "Интеграции",
    intro: "Ключи дают программам и агентам доступ к вашему профилю через HTTP API или MCP. Ключ действует от имени одного профиля и только с выбранными разрешениями. Управлять ключами, модерировать и менять профиль сессии ключом нельзя.",
    signedInAs: "Вы вошли как",
    reauth: "Секрет ключа показывается только в течение 10 минут после входа. Чтобы создать ключ или показать новый секрет, войдите ещё раз.",
    reauthLink: "Войти ещё раз",
    secretTitle: "Новый секрет ключа",
    secretExplain: "Скопируйте его сейчас: он показан один раз и больше не будет виден. Передавайте его только в заголовке Authorization: Bearer.",
    secretDone: "Я сохранил секрет",
    keys: "Ключи",
    kindPersonal: "личный",
    kindApplication: "приложение",
    kindCompany: "компания",
    statusNotIssued: "секрет ещё не выдан",
    statusActive: "действует",
    statusExpired: "истёк",
    statusRevoked: "отозван",
    expires: "до",
    lastUsed: "использован",
    name: "Название",
    permissions: "Разрешения",
    http: "HTTP API",
    mcp: "MCP",
    save: "Сохранить",
    show: "Показать секрет",
    reissue: "Выпустить новый секрет",
    revoke: "Отозвать",
    newKey: "Новый ключ",
    profile: "Профиль",
    lifetime: "Срок действия, дней (1–365)",
    create: "Создать ключ",
    confirmRevoke: "Отозвать ключ? Он сразу перестанет работать.",
    confirmReissue: "Выпустить новый секрет? Прежний сразу перестанет работать.",
    saved: "Сохранено.",
    invalidScope: "Такое разрешение нельзя выдать ключу.",
    conflict: "Ключ изменился в другом окне. Обновите страницу.",
    failed: "Не получилось. Попробуйте ещё раз.",
    unavailable: "Сервис временно недоступен. Попробуйте позже."
  },
  en: {
    title: "Integrations",
    intro: "Keys give programs and agents access to your profile through the HTTP API or MCP. A key acts as one profile with the permissions you choose only. A key can never manage keys, moderate or switch a session's profile.",
    signedInAs: "Signed in as",
    reauth: "A key's secret is shown only within 10 minutes of signing in. To create a key or show a new secret, sign in again.",
    reauthLink: "Sign in again",
    secretTitle: "New key secret",
    secretExplain: "Copy it now: it is shown once and never again. Send it only in the Authorization: Bearer header.",
    secretDone: "I have saved the secret",
    keys: "Keys",
    kindPersonal: "personal",
    kindApplication: "application",
    kindCompany: "company",
    statusNotIssued: "no secret issued yet",
    statusActive: "active",
    statusExpired: "expired",
    statusRevoked: "revoked",
    expires: "until",
    lastUsed: "last used",
    name: "Name",
    permissions: "Permissions",
    http: "HTTP API",
    mcp: "MCP",
    save: "Save",
    show: "Show secret",
    reissue: "Issue a new secret",
    revoke: "Revoke",
    newKey: "New key",
    profile: "Profile",
    lifetime: "Lifetime in days (1–365)",
    create: "Create key",
    confirmRevoke: "Revoke this key? It stops working at once.",
    confirmReissue: "Issue a new secret? The previous one stops working at once.",
    saved: "Saved.",
    invalidScope: "A key cannot be given this permission.",
    conflict: "The key was changed elsewhere. Reload the page.",
    failed: "That did not work. Please try again.",
    unavailable: "The service is temporarily unavailable. Try again later."
  }
} as const

type PageTexts = (typeof texts)[Language]

const utc = (date: Date) => date.toISOString().slice(0, 16).replace("T", " ") + " UTC"

const kindLabel = (t: PageTexts, key: Key) =>
  key.kind === "personal" ? t.kindPersonal : key.kind === "company" ? t.kindCompany : t.kindApplication

const statusLabel = (t: PageTexts, key: Key) =>
  ({ not_issued: t.statusNotIssued, active: t.statusActive, expired: t.statusExpired, revoked: t.statusRevoked })[key.status]

const grantable = scopeCatalog.filter((scope) => scope.grantable)

/** The permission checkboxes: every scope a key may hold, with the operations it opens. */
const scopeBoxes = (t: PageTexts, chosen: ReadonlyArray<string>, disabled: boolean) =>
  `<details><summary>${t.permissions} (${chosen.length})</summary>
<ul class="scopes">
${
    grantable.map((scope) =>
      `<li><label><input type="checkbox" name="scope" value="${escapeHtml(scope.name)}"${chosen.includes(scope.name) ? " checked" : ""}${
        disabled ? " disabled" : ""
      }> <code>${escapeHtml(scope.name)}</code></label> <small>${escapeHtml(scope.operations.join(", "))}</small></li>`
    ).join("\n")
  }
</ul>
</details>`

const keyItem = (t: PageTexts, key: Key, recent: boolean) => {
  const live = key.status !== "revoked"
  const facts = [
    statusLabel(t, key),
    key.secretHint === undefined ? "" : `<code>${escapeHtml(key.secretHint)}</code>`,
    key.expiresAt === undefined || !live ? "" : `${t.expires} ${utc(key.expiresAt)}`,
    key.lastUsedAt === undefined ? "" : `${t.lastUsed} ${utc(key.lastUsedAt)}`
  ].filter((part) => part !== "").join(" · ")
  const secretButton = !live
    ? ""
    : recent
    ? `<button type="button" data-action="reissue"${key.status === "not_issued" ? "" : " data-confirm=\"1\""}>${
      key.status === "not_issued" ? t.show : t.reissue
    }</button>`
    : ""
  return `<li>
<form class="key" data-key-uuid="${escapeHtml(key.uuid)}" data-revision="${key.revision}" data-status="${key.status}">
<fieldset${live ? "" : " disabled"}>
<legend>${escapeHtml(key.name)} · ${kindLabel(t, key)} · ${escapeHtml(key.profile.name)}</legend>
<p class="facts">${facts}</p>
<label>${t.name} <input name="name" value="${escapeHtml(key.name)}" maxlength="${keyLimits.nameMaxLength}" required></label>
${scopeBoxes(t, key.scopes, !live)}
<label><input type="checkbox" name="httpEnabled"${key.httpEnabled ? " checked" : ""}> ${t.http}</label>
<label><input type="checkbox" name="mcpEnabled"${key.mcpEnabled ? " checked" : ""}> ${t.mcp}</label>
${live ? `<div class="actions"><button type="submit">${t.save}</button>${secretButton}<button type="button" data-action="revoke">${t.revoke}</button></div>` : ""}
</fieldset>
</form>
</li>`
}

const integrationsPage = (sql: SqlClient.SqlClient, secret: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const language = languageOf(request.url, request.headers["accept-language"])
    const t = texts[language]
    const found = yield* pageActor(request).pipe(Effect.provideService(ServerSecret, secret))
    if (Option.isNone(found)) {
      return toSignIn(language, "/settings/integrations")
    }
    const actor = found.value
    const recent = yield* signedInRecently(actor)
    const { items } = yield* listKeys(actor)
    const { profiles } = yield* ownProfiles(actor)
    const signInAgain = `/sign-in?lang=${language}`
    const body = `<p>${t.intro}</p>
<p>${t.signedInAs} <strong>${escapeHtml(actor.email)}</strong></p>
<p id="reauth"${recent ? " hidden" : ""}>${t.reauth} <a href="${signInAgain}">${t.reauthLink}</a></p>
<section id="secret-box" hidden>
<h2>${t.secretTitle}</h2>
<p>${t.secretExplain}</p>
<p><code id="secret-value"></code></p>
<button type="button" id="secret-done">${t.secretDone}</button>
</section>
<h2>${t.keys}</h2>
<ul class="keys">
${items.map((key) => keyItem(t, key, recent)).join("\n")}
</ul>
<h2>${t.newKey}</h2>
<form id="create-form"${recent ? "" : " hidden"}>
<label>${t.name} <input name="name" maxlength="${keyLimits.nameMaxLength}" required></label>
<label>${t.profile} <select name="profileUuid">${
      profiles.map((p) => `<option value="${escapeHtml(p.uuid)}"${p.current ? " selected" : ""}>${escapeHtml(p.name)} · ${escapeHtml(p.type)}</option>`).join("")
    }</select></label>
${scopeBoxes(t, [], false)}
<label><input type="checkbox" name="httpEnabled" checked> ${t.http}</label>
<label><input type="checkbox" name="mcpEnabled"> ${t.mcp}</label>
<label>${t.lifetime} <input name="lifetimeDays" type="number" min="1" max="${keyLimits.lifetimeDaysMax}" value="${keyLimits.lifetimeDaysDefault}" required></label>
<button type="submit">${t.create}</button>
</form>
<p id="status" role="status" aria-live="polite"></p>`
    return HttpServerResponse.html(layout({
      language,
      texts: textsOf(language),
      title: t.title,
      path: "/settings/integrations",
      script: "integrations.js",
      messages: {
        confirmRevoke: t.confirmRevoke,
        confirmReissue: t.confirmReissue,
        saved: t.saved,
        invalidScope: t.invalidScope,
        conflict: t.conflict,
        failed: t.failed,
        unavailable: t.unavailable
      },
      body
    })).pipe(HttpServerResponse.setHeaders(pageSecurityHeaders))
  }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

export const IntegrationsRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    yield* router.get("/settings/integrations", integrationsPage(sql, secret))
  })
)
