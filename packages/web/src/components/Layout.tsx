import type { ReactNode } from "react"
import type { Texts } from "../i18n.js"
import type { AppState } from "../model.js"

/** `path?query` with `lang` set: every link keeps the page's language. */
export const href = (path: string, language: string, params: Readonly<Record<string, string>> = {}) => {
  const query = new URLSearchParams({ lang: language, ...params })
  return `${path}?${query.toString()}`
}

/** The page shell: skip link, header (brand, sections, sign-in indicator, language switch), main, footer. */
export const Layout = ({ state, texts, children }: { readonly state: AppState; readonly texts: Texts; readonly children: ReactNode }) => {
  const { t, language } = texts
  const other = language === "ru" ? "en" : "ru"
  const switchQuery = new URLSearchParams(state.query)
  switchQuery.set("lang", other)
  const current = (page: AppState["data"]["page"]) => state.data.page === page ? "page" as const : undefined
  return (
    <>
      <a className="skip-link" href="#main">{t("nav.skip")}</a>
      <header className="site-header">
        <div className="site-header__inner">
          <a className="brand" href={href("/", language)}>
            <img src={state.brand.logoUrl} alt="" width={32} height={32} />
            <span>{state.brand.name}</span>
          </a>
          <nav aria-label={t("nav.label")} className="site-nav">
            <ul>
              <li><a href={href("/catalog", language)} aria-current={state.data.page === "catalog" ? "page" : undefined}>{t("nav.catalog")}</a></li>
              {state.session === undefined ? <li><a href="/api/docs">{t("nav.apiDocs")}</a></li> : (
                <>
                  <li><a href={href("/tasks/new", language)} aria-current={current("taskEditor")}>{t("nav.newTask")}</a></li>
                  <li><a href={href("/publications", language)} aria-current={current("myPublications")}>{t("nav.mine")}</a></li>
                  <li><a href={href("/responses", language)} aria-current={current("responses")}>{t("nav.responses")}</a></li>
                  <li><a href={href("/deals", language)} aria-current={current("deals")}>{t("nav.deals")}</a></li>
                  <li><a href={href("/messages", language)} aria-current={current("messages")}>{t("nav.messages")}</a></li>
                  {state.session.moderator === true ? <li><a href={href("/moderation", language)} aria-current={current("moderation")}>{t("nav.moderation")}</a></li> : null}
                </>
              )}
              <li>
                {state.session === undefined
                  ? <a href={href("/sign-in", language)} className="button button--small" aria-current={state.data.page === "signIn" ? "page" : undefined}>{t("nav.signIn")}</a>
                  : <a href={href("/account", language)} className="session" id="session">{t("nav.signedInAs", { name: state.session.name })}</a>}
              </li>
              <li>
                <a href={`${state.path}?${switchQuery.toString()}`} lang={other} hrefLang={other} id="language-switch" aria-label={t("nav.languageLabel")}>
                  {t("nav.language")}
                </a>
              </li>
            </ul>
          </nav>
        </div>
      </header>
      <main id="main" className="site-main" tabIndex={-1}>{children}</main>
      <footer className="site-footer">
        <p>
          <span>© {state.brand.name}</span>
          <a href="/api/docs">{t("footer.api")}</a>
          <a href="https://www.npmjs.com/package/@birzha/client">{t("footer.sdk")}</a>
        </p>
      </footer>
    </>
  )
}
