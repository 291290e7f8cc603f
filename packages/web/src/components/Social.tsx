import { type FormEvent, useState } from "react"
import { useHydrated } from "../hydrated.js"
import type { Texts } from "../i18n.js"
import { href } from "./Layout.js"
import { requestUuid, useAction } from "./useAction.js"

/**
 * Add to or remove from favorites (favorites.set / favorites.remove), a toggle button whose
 * pressed state is whether the entity is kept now; the page need not load again.
 */
export const FavoriteButton = ({ kind, uuid, favorite, texts }: {
  readonly kind: "publication" | "profile"
  readonly uuid: string
  readonly favorite: boolean
  readonly texts: Texts
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [kept, setKept] = useState(favorite)
  const toggle = () =>
    void run(
      (api) => api[kept ? "favorites.remove" : "favorites.set"]({ payload: { requestUuid: requestUuid(), entityKind: kind, entityUuid: uuid } }),
      (change) => setKept(change.favorited)
    )
  return (
    <div className="favorite">
      <button type="button" className="button button--secondary button--small" aria-pressed={kept} disabled={!hydrated || busy} onClick={toggle} id="favorite">
        <span aria-hidden="true">{kept ? "★" : "☆"}</span> {t(kept ? "favorites.inFavorites" : "favorites.add")}
      </button>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}

/**
 * A complaint to the moderators about a publication or a profile (complaints.create): what is
 * wrong, in the person's words. Its decision shows on "My complaints"; the subject is never told.
 */
export const ComplaintForm = ({ kind, uuid, texts }: { readonly kind: "publication" | "profile"; readonly uuid: string; readonly texts: Texts }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [sent, setSent] = useState(false)
  const complain = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const body = String(new FormData(event.currentTarget).get("body") ?? "").trim()
    if (body === "") return
    void run((api) => api["complaints.create"]({ payload: { requestUuid: requestUuid(), subjectKind: kind, subjectUuid: uuid, body } }), () => setSent(true))
  }
  return (
    <details className="complain">
      <summary>{t(kind === "publication" ? "complaint.aboutPublication" : "complaint.aboutProfile")}</summary>
      {sent
        ? <p role="status">{t("complaint.sent")} <a href={href("/complaints", language)}>{t("nav.complaints")}</a></p>
        : (
          <form onSubmit={complain} className="stack">
            <label htmlFor={`complaint-${uuid}`}>{t("complaint.body")}</label>
            <p className="hint" id={`complaint-hint-${uuid}`}>{t("complaint.hint")}</p>
            <textarea id={`complaint-${uuid}`} name="body" rows={3} maxLength={5000} required aria-describedby={`complaint-hint-${uuid}`} />
            <p><button type="submit" className="button button--secondary" disabled={!hydrated || busy}>{t("complaint.send")}</button></p>
            <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
          </form>
        )}
    </details>
  )
}

/** The moderators' three queues, one link each (publications, complaints, reviews). */
export const ModerationTabs = ({ current, texts }: { readonly current: "publications" | "complaints" | "reviews"; readonly texts: Texts }) => {
  const { t, language } = texts
  const tabs = [
    { key: "publications", path: "/moderation", label: t("moderationTabs.publications") },
    { key: "complaints", path: "/moderation/complaints", label: t("moderationTabs.complaints") },
    { key: "reviews", path: "/moderation/reviews", label: t("moderationTabs.reviews") }
  ] as const
  return (
    <nav aria-label={t("moderationTabs.label")} className="tabs">
      <ul>
        {tabs.map((tab) => (
          <li key={tab.key}><a href={href(tab.path, language)} aria-current={tab.key === current ? "page" : undefined}>{tab.label}</a></li>
        ))}
      </ul>
    </nav>
  )
}
