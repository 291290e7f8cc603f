import { AdminTabs } from "../../components/admin.js"
import { href } from "../../components/Layout.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"adminAccounts">, "texts">) => texts.t("admin.accounts.title")

/** Accounts found by a part of their address; a plain GET form, so it works before the page's script runs. */
export default function AdminAccountsPage({ data, texts }: PageProps<"adminAccounts">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("admin.accounts.title")}</h1>
      <AdminTabs current="accounts" texts={texts} />
      <form method="get" action="/admin/accounts" className="narrow-wide" role="search">
        <input type="hidden" name="lang" value={language} />
        <label htmlFor="admin-email">{t("admin.accounts.email")}</label>
        <input id="admin-email" name="email" type="search" maxLength={254} defaultValue={data.email} autoComplete="off" />
        <div className="actions">
          <button type="submit" className="button">{t("admin.accounts.find")}</button>
        </div>
      </form>
      {data.email === "" ? <p>{t("admin.accounts.hint")}</p> : data.items.length === 0 ? <p>{t("admin.accounts.none")}</p> : (
        <ul className="rows" aria-label={t("admin.accounts.results")}>
          {data.items.map((item) => (
            <li key={item.uuid} className="row row--stacked">
              <p className="row__title wrap"><a href={href(`/admin/accounts/${item.uuid}`, language)}>{item.email}</a></p>
              <p className="card__meta">
                <span>{t("admin.accounts.since", { date: texts.date(item.createdAt) })}</span>
                {item.deletedAt === undefined ? null : <span className="tag tag--muted">{t("admin.accounts.deleted")}</span>}
              </p>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
