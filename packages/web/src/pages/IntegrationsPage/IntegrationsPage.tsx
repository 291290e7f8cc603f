import { type FormEvent, useState } from "react"
import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { keyNameOf, profileTypeLabel } from "../../components/format.js"
import { requestUuid } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { KeyView } from "../../model.js"
import type { PageProps } from "../types.js"
import { groupLabel, type PresetId, presets, presetScopes, scopeGroups, scopeSentence } from "./keyPresets.js"

export const title = ({ texts }: Pick<PageProps<"integrations">, "texts">) => texts.t("integrations.title")

type Api = typeof import("../../browserApi.js")["api"]

const scopesOf = (form: HTMLFormElement) => new FormData(form).getAll("scope").map(String)
const checked = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.checked === true
const valueOf = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null)?.value ?? ""

/**
 * The grantable scopes grouped by area, each said in a sentence with its exact name beside it.
 * Controlled (`onToggle`) in the new-key form, where presets tick the boxes; plain form fields in a
 * listed key's form.
 */
const ScopeGroups = ({ texts, scopes, chosen, disabled, prefix, onToggle }: {
  readonly texts: Texts
  readonly scopes: ReadonlyArray<string>
  readonly chosen: ReadonlyArray<string>
  readonly disabled: boolean
  readonly prefix: string
  readonly onToggle?: (scope: string, on: boolean) => void
}) => (
  <div className="scope-groups">
    {scopeGroups(scopes).map((group) => (
      <fieldset key={group.id} className="scope-group">
        <legend>{groupLabel(texts, group.id)}</legend>
        <ul className="scope-list">
          {group.scopes.map((scope) => (
            <li key={scope} className="check">
              <input
                type="checkbox"
                id={`${prefix}-${scope}`}
                name="scope"
                value={scope}
                disabled={disabled}
                {...(onToggle === undefined
                  ? { defaultChecked: chosen.includes(scope) }
                  : { checked: chosen.includes(scope), onChange: (event) => onToggle(scope, event.currentTarget.checked) })}
              />{" "}
              <label htmlFor={`${prefix}-${scope}`}>{scopeSentence(texts, scope)} <code className="scope-name">{scope}</code></label>
            </li>
          ))}
        </ul>
      </fieldset>
    ))}
  </div>
)

const statusKey = (key: KeyView): MessageKey => `integrations.status.${key.status}` as MessageKey
const kindKey = (key: KeyView): MessageKey =>
  key.kind === "personal" ? "integrations.kind.personal" : key.kind === "company" ? "integrations.kind.company" : "integrations.kind.application"

/**
 * The owner's integration keys: list, change, reissue, revoke, and a new key. A secret exists only
 * in the create or reissue answer: the browser shows it once and keeps it nowhere; the server
 * never renders it.
 */
export default function IntegrationsPage({ data, texts }: PageProps<"integrations">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<MessageKey | undefined>(undefined)
  const [recent, setRecent] = useState(data.recentSignIn)
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [copied, setCopied] = useState<MessageKey | undefined>(undefined)
  const grantable = data.scopes.map((scope) => scope.name)
  const [preset, setPreset] = useState<PresetId>("read")
  const [chosen, setChosen] = useState<ReadonlyArray<string>>(() => presetScopes(presets[0]!, grantable))
  const [httpOn, setHttpOn] = useState(presets[0]!.httpEnabled)
  const [mcpOn, setMcpOn] = useState(presets[0]!.mcpEnabled)
  const [customOpen, setCustomOpen] = useState(false)

  const pick = (id: PresetId) => {
    const picked = presets.find((p) => p.id === id)!
    setPreset(id)
    if (id === "custom") {
      setCustomOpen(true)
      return
    }
    setChosen(presetScopes(picked, grantable))
    setHttpOn(picked.httpEnabled)
    setMcpOn(picked.mcpEnabled)
  }
  const toggle = (scope: string, on: boolean) => {
    setPreset("custom")
    setChosen((now) => on ? [...now.filter((s) => s !== scope), scope] : now.filter((s) => s !== scope))
  }
  const copy = (value: string) => {
    setCopied(undefined)
    void (navigator.clipboard?.writeText(value) ?? Promise.reject(new Error("no clipboard")))
      .then(() => setCopied("keys.copied"), () => setCopied("keys.copyFailed"))
  }

  const act = async <A,>(call: (api: Api) => Promise<A>, then: (value: A) => void) => {
    setBusy(true)
    setMessage(undefined)
    const { api, messageOf } = await import("../../browserApi.js")
    try {
      then(await call(api))
    } catch (error) {
      const code = (error as { readonly code?: unknown }).code
      if (code === "reauthentication_required") setRecent(false)
      else setMessage(code === "invalid_scope" ? "integrations.invalidScope" : code === "revision_conflict" ? "integrations.conflict" : messageOf(error))
    } finally {
      setBusy(false)
    }
  }

  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = event.currentTarget
    void act((api) =>
      api["keys.create"]({
        payload: {
          requestUuid: requestUuid(),
          name: valueOf(form, "name"),
          profileUuid: valueOf(form, "profileUuid"),
          scopes: chosen,
          httpEnabled: httpOn,
          mcpEnabled: mcpOn,
          lifetimeDays: Number(valueOf(form, "lifetimeDays"))
        }
      }), (answer) => setSecret(answer.secret))
  }

  const save = (key: KeyView) => (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = event.currentTarget
    void act((api) =>
      api["keys.update"]({
        path: { uuid: key.uuid },
        payload: {
          requestUuid: requestUuid(),
          expectedRevision: key.revision,
          name: valueOf(form, "name"),
          scopes: scopesOf(form),
          httpEnabled: checked(form, "httpEnabled"),
          mcpEnabled: checked(form, "mcpEnabled")
        }
      }), () => location.reload())
  }

  const reissue = (key: KeyView) => {
    if (key.status !== "not_issued" && !confirm(t("integrations.confirmReissue"))) return
    void act((api) => api["keys.reissue"]({ path: { uuid: key.uuid } }), (answer) => setSecret(answer.secret))
  }

  const revoke = (key: KeyView) => {
    if (!confirm(t("integrations.confirmRevoke"))) return
    void act((api) => api["keys.revoke"]({ path: { uuid: key.uuid } }), () => location.reload())
  }

  if (secret !== undefined) {
    return (
      <div className="narrow-wide">
        <h1>{t("integrations.title")}</h1>
        <section id="secret-box" className="panel" aria-labelledby="secret-heading">
          <h2 id="secret-heading">{t("integrations.secretTitle")}</h2>
          <p id="shown-once"><strong>{t("keys.shownOnce")}</strong></p>
          <p>{t("integrations.secretExplain")}</p>
          <p><code id="secret-value" className="wrap secret">{secret}</code></p>
          <div className="actions">
            <button type="button" id="secret-copy" className="button button--secondary" onClick={() => copy(secret)}>{t("integrations.copy")}</button>
            <button
              type="button"
              id="secret-done"
              className="button"
              onClick={() => {
                setSecret(undefined)
                location.reload()
              }}
            >
              {t("integrations.secretDone")}
            </button>
          </div>
          <p id="copy-status" role="status" aria-live="polite" className="muted">{copied === undefined ? "" : t(copied)}</p>
        </section>
      </div>
    )
  }

  return (
    <div className="narrow-wide">
      <h1>{t("integrations.title")}</h1>
      <p className="lead">{t("integrations.intro")}</p>
      <p>{t("integrations.signedInAs")} <strong>{data.email}</strong></p>
      <p><a href={href("/approvals", language)}>{t("account.approvals")}</a> · <a href={href("/settings/events", language)}>{t("eventLog.title")}</a> · <a href={href("/settings/webhooks", language)}>{t("hooks.title")}</a> · <a href={href("/settings/agents", language)}>{t("oauth.agents.link")}</a> · <a href={href("/settings/rules", language)}>{t("account.rules")}</a></p>
      {recent ? null : (
        <p id="reauth" className="panel">{t("integrations.reauth")} <a href={href("/sign-in", language)}>{t("integrations.reauthLink")}</a></p>
      )}
      <h2>{t("integrations.keys")}</h2>
      <ul className="rows keys">
        {data.keys.map((key) => {
          const live = key.status !== "revoked"
          return (
            <li key={key.uuid} className="row row--stacked">
              <form className="key" data-key-uuid={key.uuid} data-status={key.status} onSubmit={save(key)}>
                <fieldset disabled={!live} className="stack">
                  <legend>{keyNameOf(texts, key.name)} · {t(kindKey(key))} · {key.profileName}</legend>
                  <p className="facts-line muted">
                    <span>{t(statusKey(key))}</span>
                    {key.secretHint === undefined ? null : <> · <code>{key.secretHint}</code></>}
                    {key.expiresAt === undefined || !live ? null : <> · {t("integrations.expires")} <LocalTime value={key.expiresAt} texts={texts} /></>}
                    {key.lastUsedAt === undefined ? null : <> · {t("integrations.lastUsed")} <LocalTime value={key.lastUsedAt} texts={texts} /></>}
                  </p>
                  <label htmlFor={`name-${key.uuid}`}>{t("integrations.name")}</label>
                  <input id={`name-${key.uuid}`} name="name" defaultValue={keyNameOf(texts, key.name)} maxLength={data.limits.nameMaxLength} required />
                  <details className="scopes">
                    <summary>{t("integrations.permissions", { n: key.scopes.length })}</summary>
                    <ScopeGroups texts={texts} scopes={grantable} chosen={key.scopes} disabled={!live} prefix={key.uuid} />
                  </details>
                  <span className="check"><input type="checkbox" id={`http-${key.uuid}`} name="httpEnabled" defaultChecked={key.httpEnabled} /> <label htmlFor={`http-${key.uuid}`}>{t("integrations.http")}</label></span>
                  <span className="check"><input type="checkbox" id={`mcp-${key.uuid}`} name="mcpEnabled" defaultChecked={key.mcpEnabled} /> <label htmlFor={`mcp-${key.uuid}`}>{t("integrations.mcp")}</label></span>
                  {live
                    ? (
                      <div className="actions">
                        <button type="submit" className="button" disabled={!hydrated || busy}>{t("integrations.save")}</button>
                        {recent
                          ? (
                            <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => reissue(key)}>
                              {t(key.status === "not_issued" ? "keys.issue" : "integrations.reissue")}
                            </button>
                          )
                          : null}
                        <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => revoke(key)}>{t("integrations.revoke")}</button>
                      </div>
                    )
                    : null}
                </fieldset>
              </form>
            </li>
          )
        })}
      </ul>
      <h2>{t("integrations.newKey")}</h2>
      {recent
        ? (
          <form id="create-form" className="stack panel" onSubmit={create}>
            <label htmlFor="new-name">{t("integrations.name")}</label>
            <input id="new-name" name="name" maxLength={data.limits.nameMaxLength} required />
            <label htmlFor="new-profile">{t("integrations.profile")}</label>
            <select id="new-profile" name="profileUuid" defaultValue={data.profiles.find((p) => p.current)?.uuid}>
              {data.profiles.map((p) => <option key={p.uuid} value={p.uuid}>{p.name} · {profileTypeLabel(texts, p.type)}</option>)}
            </select>
            <fieldset id="presets" className="presets">
              <legend>{t("keys.access")}</legend>
              <p className="hint">{t("keys.accessHelp")}</p>
              {presets.map((p) => (
                <div key={p.id} className="preset check">
                  <input type="radio" id={`preset-${p.id}`} name="preset" value={p.id} checked={preset === p.id} onChange={() => pick(p.id)} aria-describedby={`preset-${p.id}-help`} />
                  <label htmlFor={`preset-${p.id}`}>{t(`keys.preset.${p.id}` as MessageKey)}</label>
                  <small id={`preset-${p.id}-help`} className="muted">{t(`keys.preset.${p.id}.help` as MessageKey)}</small>
                </div>
              ))}
            </fieldset>
            <details className="scopes" id="custom-scopes" open={customOpen}>
              <summary onClick={(event) => { event.preventDefault(); setCustomOpen(!customOpen) }}>{t("keys.custom", { n: chosen.length })}</summary>
              <ScopeGroups texts={texts} scopes={grantable} chosen={chosen} disabled={false} prefix="new" onToggle={toggle} />
            </details>
            <span className="check"><input type="checkbox" id="new-http" name="httpEnabled" checked={httpOn} onChange={(event) => setHttpOn(event.currentTarget.checked)} /> <label htmlFor="new-http">{t("integrations.http")}</label></span>
            <span className="check"><input type="checkbox" id="new-mcp" name="mcpEnabled" checked={mcpOn} onChange={(event) => setMcpOn(event.currentTarget.checked)} /> <label htmlFor="new-mcp">{t("integrations.mcp")}</label></span>
            <label htmlFor="new-lifetime">{t("integrations.lifetime", { max: data.limits.lifetimeDaysMax })}</label>
            <input id="new-lifetime" name="lifetimeDays" type="number" min={1} max={data.limits.lifetimeDaysMax} defaultValue={data.limits.lifetimeDaysDefault} required />
            <button type="submit" className="button" disabled={!hydrated || busy}>{t("integrations.create")}</button>
          </form>
        )
        : <p className="muted">{t("integrations.createAfterSignIn")}</p>}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
