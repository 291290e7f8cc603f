import { AdminTabs } from "../../components/admin.js"
import { LocalTime } from "../../components/LocalTime.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { AdminActionItem, AdminRoleHolder } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"adminRoles">, "texts">) => texts.t("admin.roles.title")

type Role = "moderator" | "operator"

const Holders = ({ role, holders, me, texts, revoke, disabled }: {
  readonly role: Role
  readonly holders: ReadonlyArray<AdminRoleHolder>
  readonly me: string
  readonly texts: Texts
  readonly revoke: (role: Role, email: string) => void
  readonly disabled: boolean
}) => {
  const { t } = texts
  return (
    <section aria-labelledby={`admin-${role}s`}>
      <h2 id={`admin-${role}s`}>{t(role === "moderator" ? "admin.roles.moderators" : "admin.roles.operators")}</h2>
      {holders.length === 0 ? <p>{t("admin.roles.nobody")}</p> : (
        <ul className="rows" id={`admin-${role}-list`}>
          {holders.map((holder) => (
            <li key={holder.email} className="row row--stacked" data-email={holder.email}>
              <p className="row__title wrap">{holder.email}</p>
              <p className="card__meta">
                <span className="tag tag--muted">{t(holder.source === "config" ? "admin.roles.byConfig" : "admin.roles.byHand")}</span>
                <span>{t("admin.roles.granted")} <LocalTime value={holder.grantedAt} texts={texts} /></span>
              </p>
              {role === "operator" && holder.email === me ? <p className="muted">{t("admin.roles.yourself")}</p> : (
                <div className="actions">
                  <button
                    type="button"
                    className="button button--secondary"
                    disabled={disabled}
                    aria-label={t("admin.roles.revokeFrom", { email: holder.email })}
                    onClick={() => revoke(role, holder.email)}
                  >
                    {t("admin.roles.revoke")}
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

const actionText = (item: AdminActionItem, texts: Texts) => {
  const { t } = texts
  const role = typeof item.detail["role"] === "string" ? t(`admin.role.${item.detail["role"]}` as MessageKey) : ""
  switch (item.operation) {
    case "admin.roles.grant":
      return t("admin.audit.granted", { role, email: item.target })
    case "admin.roles.revoke":
      return t("admin.audit.revoked", { role, email: item.target })
    case "admin.accounts.delete":
      return t("admin.audit.deleted", { email: String(item.detail["email"] ?? item.target) })
    default:
      return item.operation
  }
}

/** Who holds the moderator and operator roles, granting and revoking them, and the audit trail of the admin area. */
export default function AdminRolesPage({ data, texts }: PageProps<"adminRoles">) {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, setMessage, run } = useAction()
  const grant = () => {
    const email = (document.getElementById("admin-grant-email") as HTMLInputElement | null)?.value.trim() ?? ""
    const role = ((document.getElementById("admin-grant-role") as HTMLSelectElement | null)?.value ?? "moderator") as Role
    if (email === "") {
      setMessage("admin.roles.emailNeeded")
      document.getElementById("admin-grant-email")?.focus()
      return
    }
    void run((api) => api["admin.roles.grant"]({ payload: { role, email } }))
  }
  const revoke = (role: Role, email: string) => void run((api) => api["admin.roles.revoke"]({ payload: { role, email } }))
  return (
    <div>
      <h1>{t("admin.roles.title")}</h1>
      <AdminTabs current="roles" texts={texts} />
      <section aria-labelledby="admin-grant" className="narrow-wide">
        <h2 id="admin-grant">{t("admin.roles.grantTitle")}</h2>
        <p>{t("admin.roles.grantHelp")}</p>
        <label htmlFor="admin-grant-role">{t("admin.roles.role")}</label>
        <select id="admin-grant-role" defaultValue="moderator">
          <option value="moderator">{t("admin.role.moderator")}</option>
          <option value="operator">{t("admin.role.operator")}</option>
        </select>
        <label htmlFor="admin-grant-email">{t("admin.roles.email")}</label>
        <input id="admin-grant-email" type="email" autoComplete="off" maxLength={254} />
        <div className="actions">
          <button type="button" className="button" disabled={!hydrated || busy} onClick={grant}>{t("admin.roles.grant")}</button>
        </div>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </section>
      <Holders role="moderator" holders={data.moderators} me={data.me} texts={texts} revoke={revoke} disabled={!hydrated || busy} />
      <Holders role="operator" holders={data.operators} me={data.me} texts={texts} revoke={revoke} disabled={!hydrated || busy} />
      <section aria-labelledby="admin-audit">
        <h2 id="admin-audit">{t("admin.audit.title")}</h2>
        {data.audit.length === 0 ? <p>{t("admin.audit.empty")}</p> : (
          <ul className="rows" id="admin-audit-list">
            {data.audit.map((item) => (
              <li key={item.uuid} className="row row--stacked">
                <p className="wrap">{actionText(item, texts)}</p>
                <p className="card__meta">
                  <span>{t("admin.audit.by", { email: item.operator })}</span>
                  <span><LocalTime value={item.createdAt} texts={texts} /></span>
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  )
}
