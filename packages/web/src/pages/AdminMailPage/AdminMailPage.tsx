import { AdminTabs } from "../../components/admin.js"
import { LocalTime } from "../../components/LocalTime.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"adminMail">, "texts">) => texts.t("admin.mail.title")

/**
 * The development mailbox (no BIRZHA_SMTP_URL, the embedded default): what the service would have
 * mailed, newest first, what `birzha mail list` prints. With SMTP configured the page says so.
 */
export default function AdminMailPage({ data, texts }: PageProps<"adminMail">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("admin.mail.title")}</h1>
      <AdminTabs current="mail" texts={texts} />
      {!data.available ? <p>{t("admin.mail.unavailable")}</p> : (
        <>
          <p className="narrow-wide">{t("admin.mail.help")}</p>
          <form method="get" action="/admin/mail" className="narrow-wide">
            <input type="hidden" name="lang" value={language} />
            <label htmlFor="admin-mail-to">{t("admin.mail.to")}</label>
            <input id="admin-mail-to" name="to" type="email" maxLength={254} defaultValue={data.to} autoComplete="off" />
            <div className="actions">
              <button type="submit" className="button">{t("admin.mail.filter")}</button>
            </div>
          </form>
          {data.items.length === 0 ? <p>{t("admin.mail.empty")}</p> : (
            <ul className="rows" id="admin-mail-list">
              {data.items.map((item) => (
                <li key={item.uuid} className="row row--stacked">
                  <p className="row__title wrap">{item.subject}</p>
                  <p className="card__meta">
                    <span className="wrap">{t("admin.mail.sentTo", { email: item.to })}</span>
                    <span><LocalTime value={item.createdAt} texts={texts} /></span>
                  </p>
                  {/* Closed until asked for: a body is written in the recipient's language, not the page's. */}
                  <details>
                    <summary>{t("admin.mail.body")}</summary>
                    <pre className="raw">{item.text}</pre>
                  </details>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </div>
  )
}
