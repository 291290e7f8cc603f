import { useState } from "react"
import { AdminTabs } from "../../components/admin.js"
import { keyNameOf, profileTypeLabel } from "../../components/format.js"
import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"adminAccount">, "data" | "texts">) => texts.t("admin.account.title", { email: data.view.account.email })

/**
 * One account as an operator sees it: its roles, profiles, the sessions that still work and its
 * keys (never a secret), and its deletion, with the address typed again.
 */
export default function AdminAccountPage({ data, texts }: PageProps<"adminAccount">) {
  const { t, language } = texts
  const { view } = data
  const hydrated = useHydrated()
  const { busy, message, setMessage, run } = useAction()
  const [deleted, setDeleted] = useState(false)
  const remove = () => {
    const confirmEmail = (document.getElementById("admin-confirm") as HTMLInputElement | null)?.value.trim() ?? ""
    if (confirmEmail.toLowerCase() !== view.account.email) {
      setMessage("admin.account.confirmMismatch")
      document.getElementById("admin-confirm")?.focus()
      return
    }
    void run((api) => api["admin.accounts.delete"]({ payload: { accountUuid: view.account.uuid, confirmEmail } }), () => setDeleted(true))
  }
  return (
    <div>
      <h1 className="wrap">{t("admin.account.title", { email: view.account.email })}</h1>
      <AdminTabs current="accounts" texts={texts} />
      <p className="card__meta">
        <span>{t("admin.accounts.since", { date: texts.date(view.account.createdAt) })}</span>
        {view.account.deletedAt === undefined ? null : <span className="tag tag--muted">{t("admin.accounts.deleted")}</span>}
        {view.roles.map((role) => <span key={role} className="tag">{t(`admin.role.${role}` as MessageKey)}</span>)}
      </p>
      <section aria-labelledby="admin-profiles">
        <h2 id="admin-profiles">{t("admin.account.profiles")}</h2>
        {view.profiles.length === 0 ? <p>{t("admin.account.noProfiles")}</p> : (
          <ul>{view.profiles.map((profile) => <li key={profile.uuid}><a href={href(`/u/${profile.uuid}`, language)}>{profile.name}</a> · {profileTypeLabel(texts, profile.type)}</li>)}</ul>
        )}
      </section>
      <section aria-labelledby="admin-sessions">
        <h2 id="admin-sessions">{t("admin.account.sessions")}</h2>
        {view.sessions.length === 0 ? <p>{t("admin.account.noSessions")}</p> : (
          <ul className="rows" id="admin-session-list">
            {view.sessions.map((session) => (
              <li key={session.uuid} className="row row--stacked">
                <p className="card__meta">
                  <span>{t("admin.account.sessionAs", { name: session.profileName })}</span>
                  <span>{t("admin.account.sessionStarted")} <LocalTime value={session.createdAt} texts={texts} /></span>
                  <span>{t("admin.account.sessionEnds")} <LocalTime value={session.expiresAt} texts={texts} /></span>
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="admin-keys">
        <h2 id="admin-keys">{t("admin.account.keys")}</h2>
        {view.keys.length === 0 ? <p>{t("admin.account.noKeys")}</p> : (
          <ul className="rows" id="admin-key-list">
            {view.keys.map((key) => (
              <li key={key.uuid} className="row row--stacked">
                <p className="row__title wrap">{keyNameOf(texts, key.name)}</p>
                <p className="card__meta">
                  <span className={key.state === "live" ? "tag" : "tag tag--muted"}>{t(`admin.key.${key.state}` as MessageKey)}</span>
                  <span>{t(`admin.key.kind.${key.kind}` as MessageKey)}</span>
                  <span>{t("admin.account.sessionAs", { name: key.profileName })}</span>
                  <span>{[key.httpEnabled ? "HTTP" : undefined, key.mcpEnabled ? "MCP" : undefined].filter(Boolean).join(" · ") || t("admin.key.noAccess")}</span>
                  {key.lastUsedAt === undefined ? null : <span>{t("admin.key.lastUsed")} <LocalTime value={key.lastUsedAt} texts={texts} /></span>}
                </p>
                <p className="muted wrap">{t("admin.key.scopes")}: {key.scopes.length === 0 ? "—" : key.scopes.join(", ")}</p>
              </li>
            ))}
          </ul>
        )}
      </section>
      {view.account.deletedAt !== undefined ? null : (
        <section aria-labelledby="admin-delete" className="narrow-wide">
          <h2 id="admin-delete">{t("admin.account.delete")}</h2>
          {view.self ? <p>{t("admin.account.self")}</p> : deleted ? <p role="status">{t("admin.account.deletedNow")}</p> : (
            <>
              <p>{t("admin.account.deleteHelp")}</p>
              <label htmlFor="admin-confirm">{t("admin.account.confirm")}</label>
              <input id="admin-confirm" type="email" autoComplete="off" maxLength={254} />
              <div className="actions">
                <button type="button" className="button button--danger" disabled={!hydrated || busy} onClick={remove}>{t("admin.account.deleteButton")}</button>
              </div>
              <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
            </>
          )}
        </section>
      )}
    </div>
  )
}
