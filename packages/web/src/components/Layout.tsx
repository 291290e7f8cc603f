import { type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from "react"
import type { Texts } from "../i18n.js"
import type { AppState } from "../model.js"

/** `path?query` with `lang` set: every link keeps the page's language. */
export const href = (path: string, language: string, params: Readonly<Record<string, string>> = {}) => {
  const query = new URLSearchParams({ lang: language, ...params })
  return `${path}?${query.toString()}`
}

type PageName = AppState["data"]["page"]

interface NavLink {
  readonly path: string
  readonly label: string
  readonly pages: ReadonlyArray<PageName>
}

/** A bell, drawn (no icon font, nothing the CSP would have to allow). */
const Bell = () => (
  <svg aria-hidden="true" focusable="false" width="22" height="22" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
    <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
    <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
  </svg>
)

/**
 * The menu's disclosure (`<details>`: it opens and closes without the page's script and with the
 * keyboard); once the script runs, Escape and a click elsewhere close it too.
 */
const useMenu = () => {
  const menu = useRef<HTMLDetailsElement>(null)
  useEffect(() => {
    const close = (event: MouseEvent) => {
      const element = menu.current
      if (element !== null && element.open && !element.contains(event.target as Node)) element.open = false
    }
    document.addEventListener("click", close)
    return () => document.removeEventListener("click", close)
  }, [])
  const onKeyDown = (event: KeyboardEvent<HTMLDetailsElement>) => {
    const element = menu.current
    if (event.key === "Escape" && element !== null && element.open) {
      element.open = false
      element.querySelector("summary")?.focus()
    }
  }
  return { menu, onKeyDown }
}

/** How often a signed-in page reads the unread count again while the tab is visible. */
const unreadPollMs = 30_000

/**
 * The notifications' unread count, as the server rendered it and then read again every 30 s
 * while the tab is visible (and at once when it becomes visible again), through the browser's
 * client (loaded on demand, as the pages' commands load it): a hidden tab makes no calls, and a
 * failed read keeps the last count. Anonymous pages never poll.
 */
const useUnread = (signedIn: boolean, initial: number) => {
  const [unread, setUnread] = useState(initial)
  useEffect(() => {
    if (!signedIn) return
    let stopped = false
    let last = Date.now()
    const read = async () => {
      last = Date.now()
      try {
        const { api } = await import("../browserApi.js")
        const page = await api["learning.notifications.list"]({ urlParams: { unread: "true", limit: 100 } })
        if (!stopped) setUnread(page.items.length)
      } catch {
        // The badge keeps its last count; the next tick tries again.
      }
    }
    const tick = () => {
      if (document.visibilityState === "visible") void read()
    }
    const timer = setInterval(tick, unreadPollMs)
    const onVisible = () => {
      if (document.visibilityState === "visible" && Date.now() - last >= unreadPollMs) void read()
    }
    document.addEventListener("visibilitychange", onVisible)
    return () => {
      stopped = true
      clearInterval(timer)
      document.removeEventListener("visibilitychange", onVisible)
    }
  }, [signedIn])
  return unread
}

/**
 * The page shell: skip link, header, main, footer. The header shows the sections in one row at a
 * wide width; at a narrow one they fold into the menu beside the notifications' badge (the same
 * links, rendered in both places, one of them hidden by the stylesheet).
 */
export const Layout = ({ state, texts, children }: { readonly state: AppState; readonly texts: Texts; readonly children: ReactNode }) => {
  const { t, language } = texts
  const { menu, onKeyDown } = useMenu()
  const other = language === "ru" ? "en" : "ru"
  const switchQuery = new URLSearchParams(state.query)
  switchQuery.set("lang", other)
  const session = state.session
  const current = (link: NavLink) => link.pages.includes(state.data.page) ? "page" as const : undefined
  const sections: ReadonlyArray<NavLink> = [
    { path: "/catalog", label: t("nav.catalog"), pages: ["catalog"] },
    { path: "/courses", label: t("header.courses"), pages: ["courses", "course"] },
    ...(session === undefined ? [{ path: "/api/docs", label: t("nav.apiDocs"), pages: [] }] : [
      { path: "/tasks/new", label: t("nav.newTask"), pages: ["taskEditor"] },
      { path: "/publications", label: t("nav.mine"), pages: ["myPublications"] },
      { path: "/responses", label: t("nav.responses"), pages: ["responses"] },
      { path: "/deals", label: t("nav.deals"), pages: ["deals"] },
      { path: "/messages", label: t("nav.messages"), pages: ["messages", "thread"] },
      ...(session.moderator === true
        ? [{ path: "/moderation", label: t("nav.moderation"), pages: ["moderation", "moderationComplaints", "moderationReviews"] as const }]
        : [])
    ] satisfies ReadonlyArray<NavLink>)
  ]
  const personal: ReadonlyArray<NavLink> = session === undefined
    ? []
    : [
      // The learner's area, beside the person's own lists (the sections' row is full at 1280 px).
      { path: "/learning", label: t("header.learning"), pages: ["myLearning", "player", "learningCalendar"] },
      { path: "/authoring", label: t("authoring.nav"), pages: ["authoring", "courseEditor", "courseRuns", "courseStaff"] },
      { path: "/teaching", label: t("teaching.nav"), pages: ["teaching", "teachingCourse", "teachingReviews", "reviewWorkspace", "teachingAppeals", "teachingExtensions", "teachingRoster", "teachingRegrade", "teachingAnalytics", "teachingIncidents"] },
      { path: "/favorites", label: t("nav.favorites"), pages: ["favorites"] },
      { path: "/complaints", label: t("nav.complaints"), pages: ["complaints"] },
      { path: "/settings/profile", label: t("nav.settings"), pages: ["profileSettings"] },
      ...(session.operator === true
        ? [{ path: "/admin", label: t("admin.nav"), pages: ["adminHealth", "adminAccounts", "adminAccount", "adminRoles", "adminMail"] as const }]
        : [])
    ]
  const link = (item: NavLink) => (
    <li key={item.path}>
      <a href={item.path.startsWith("/api/") ? item.path : href(item.path, language)} aria-current={current(item)}>{item.label}</a>
    </li>
  )
  const languageLink = (id: string) => (
    <a href={`${state.path}?${switchQuery.toString()}`} lang={other} hrefLang={other} id={id} aria-label={t("nav.languageLabel")}>
      {t("nav.language")}
    </a>
  )
  const unread = useUnread(session !== undefined, session?.unread ?? 0)
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
            <ul>{sections.map(link)}</ul>
          </nav>
          <div className="site-tools">
            {session === undefined
              ? <a href={href("/sign-in", language)} className="button button--small" aria-current={state.data.page === "signIn" ? "page" : undefined}>{t("nav.signIn")}</a>
              : (
                <a
                  href={href("/notifications", language)}
                  className="bell"
                  id="notifications-link"
                  aria-current={state.data.page === "notifications" ? "page" : undefined}
                >
                  <Bell />
                  <span className="visually-hidden">{unread === 0 ? t("nav.notifications") : t("nav.notificationsUnread", { n: unread })}</span>
                  {unread === 0 ? null : <span className="badge" aria-hidden="true" id="unread-badge">{unread >= 100 ? "99+" : texts.number(unread)}</span>}
                </a>
              )}
            <details className={session === undefined ? "site-menu site-menu--narrow" : "site-menu"} ref={menu} onKeyDown={onKeyDown}>
              <summary>
                <span className="site-menu__narrow">{t("nav.menu")}</span>
                {session === undefined ? null : <span className="site-menu__wide">{session.name}</span>}
              </summary>
              <div className="site-menu__panel">
                <nav aria-label={t("nav.menuLabel")}>
                  <ul className="site-menu__sections">{sections.map(link)}</ul>
                  <ul>
                    {session === undefined ? null : (
                      <li><a href={href("/account", language)} className="session" id="session" aria-current={state.data.page === "account" ? "page" : undefined}>{t("nav.signedInAs", { name: session.name })}</a></li>
                    )}
                    {personal.map(link)}
                    <li className="site-menu__language">{languageLink("language-switch-menu")}</li>
                  </ul>
                </nav>
              </div>
            </details>
            <span className="site-tools__language">{languageLink("language-switch")}</span>
          </div>
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
