import { href } from "../../components/Layout.js"
import { ModerationTabs } from "../../components/Social.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { ModeratedReviewItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"moderationReviews">, "texts">) => texts.t("modReviews.title")

const Review = ({ item, texts }: { readonly item: ModeratedReviewItem; readonly texts: Texts }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, setMessage, run } = useAction()
  const decision = item.status === "published" ? "remove" as const : item.status === "removed" ? "restore" as const : undefined
  const decide = () => {
    const box = document.getElementById(`reason-${item.uuid}`) as HTMLTextAreaElement | null
    const reason = box?.value.trim() ?? ""
    if (decision === undefined) return
    if (reason === "") {
      setMessage("modComplaints.reasonNeeded")
      box?.focus()
      return
    }
    void run((api) =>
      api["moderation.reviews.decide"]({ payload: { requestUuid: requestUuid(), reviewUuid: item.uuid, expectedRevision: item.revision, decision, reason } })
    )
  }
  return (
    <li className="row row--stacked" data-uuid={item.uuid}>
      <h2 className="row__title">
        {t("modReviews.by", { name: item.authorName })}
        {item.rating === undefined ? null : <span className="stars" role="img" aria-label={t("profile.reviewStars", { rating: item.rating })}> {"★".repeat(item.rating)}</span>}
      </h2>
      <p className="card__meta">
        <span className={item.status === "published" ? "tag" : "tag tag--muted"}>{t(`modReviews.status.${item.status}` as MessageKey)}</span>
        <span>{t(`modReviews.role.${item.subjectRole}` as MessageKey)}</span>
        <a href={href(`/u/${item.subjectProfileUuid}`, language)}>{t("modReviews.subject")}</a>
        <span>{texts.date(item.createdAt)}</span>
        {item.openComplaints === 0 ? null : <span className="tag tag--warning">{t("modReviews.complaints", { n: item.openComplaints })}</span>}
      </p>
      {item.body === "" ? null : <p className="quote">{item.body}</p>}
      {item.moderationReason === undefined ? null : <p>{t("complaints.reason")}: {item.moderationReason}</p>}
      {decision === undefined ? null : (
        <>
          <label htmlFor={`reason-${item.uuid}`}>{t("modReviews.reason")}</label>
          <textarea id={`reason-${item.uuid}`} rows={2} maxLength={2000} />
          <div className="actions">
            <button type="button" className={decision === "remove" ? "button button--secondary" : "button"} disabled={!hydrated || busy} onClick={decide}>
              {t(decision === "remove" ? "modReviews.remove" : "modReviews.restore")}
            </button>
          </div>
        </>
      )}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </li>
  )
}

/** The moderators' reviews: published ones (those with complaints about their deal marked), removed ones to restore, sealed ones. */
export default function ModerationReviewsPage({ data, texts }: PageProps<"moderationReviews">) {
  const { t, language } = texts
  if (!data.allowed) {
    return <div className="narrow"><h1>{t("modReviews.title")}</h1><p>{t("moderation.notModerator")}</p></div>
  }
  return (
    <div>
      <h1>{t("modReviews.title")}</h1>
      <ModerationTabs current="reviews" texts={texts} />
      <nav aria-label={t("modComplaints.filter")} className="filter">
        <ul>
          {["published", "removed", "submitted"].map((status) => (
            <li key={status}>
              <a href={href("/moderation/reviews", language, { status })} aria-current={status === data.status ? "page" : undefined}>
                {t(`modReviews.status.${status}` as MessageKey)}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {data.items.length === 0 ? <p>{t("modReviews.empty")}</p> : (
        <ul className="rows">{data.items.map((item) => <Review key={item.uuid} item={item} texts={texts} />)}</ul>
      )}
    </div>
  )
}
