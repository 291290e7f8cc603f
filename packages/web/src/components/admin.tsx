import type { Texts } from "../i18n.js"
import { href } from "./Layout.js"

/** The admin area's sections, one link each (health, accounts, roles, the development mailbox). */
export const AdminTabs = ({ current, texts }: { readonly current: "health" | "accounts" | "roles" | "mail"; readonly texts: Texts }) => {
  const { t, language } = texts
  const tabs = [
    { key: "health", path: "/admin", label: t("admin.tabs.health") },
    { key: "accounts", path: "/admin/accounts", label: t("admin.tabs.accounts") },
    { key: "roles", path: "/admin/roles", label: t("admin.tabs.roles") },
    { key: "mail", path: "/admin/mail", label: t("admin.tabs.mail") }
  ] as const
  return (
    <nav aria-label={t("admin.tabs.label")} className="tabs">
      <ul>
        {tabs.map((tab) => (
          <li key={tab.key}><a href={href(tab.path, language)} aria-current={tab.key === current ? "page" : undefined}>{tab.label}</a></li>
        ))}
      </ul>
    </nav>
  )
}

/** One figure of the health view: its name and value, marked when it needs attention. */
export const Figure = ({ label, value, alert = false }: { readonly label: string; readonly value: string | number; readonly alert?: boolean }) => (
  <div className={alert ? "admin-figure admin-figure--alert" : "admin-figure"}>
    <dt>{label}</dt>
    <dd>{value}</dd>
  </div>
)
