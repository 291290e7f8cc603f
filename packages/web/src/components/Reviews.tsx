import type { FormEvent } from "react"
import { href } from "./Layout.js"
import { requestUuid, useAction } from "./useAction.js"
import { useHydrated } from "../hydrated.js"
import type { Texts } from "../i18n.js"
import type { ReviewItem, Reviews } from "../model.js"

/** Five stars, as text for screen readers and as a picture of filled and empty stars for the eye. */
export const Stars = ({ rating, label }: { readonly rating: number; readonly label: string }) => (
  <span className="stars" role="img" aria-label={label}>
    {"★★★★★".slice(0, Math.round(rating))}<span className="stars__empty">{"★★★★★".slice(Math.round(rating))}</span>
  </span>
)

/**
 * The reviewed profile's answer to a published review (reviews.reply, once; at the review's
 * revision it is replaced) and its removal (reviews.reply_remove).
 */
const ReplyForm = ({ review, texts }: { readonly review: ReviewItem; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const id = `reply-${review.uuid}`
  const send = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const body = String(new FormData(event.currentTarget).get("body") ?? "").trim()
    if (body === "") return
    void run((api) =>
      api["reviews.reply"]({
        payload: {
          requestUuid: requestUuid(), reviewUuid: review.uuid, body,
          ...(review.reply === undefined || review.revision === undefined ? {} : { expectedRevision: review.revision })
        }
      })
    )
  }
  const remove = () =>
    void run((api) => api["reviews.reply_remove"]({ payload: { requestUuid: requestUuid(), reviewUuid: review.uuid, expectedRevision: review.revision ?? 0 } }))
  return (
    <details className="review__answer">
      <summary>{t(review.reply === undefined ? "reviewReply.write" : "reviewReply.edit")}</summary>
      <form onSubmit={send} className="stack">
        <label htmlFor={id}>{t("reviewReply.body")}</label>
        <textarea id={id} name="body" rows={3} maxLength={2000} required defaultValue={review.reply ?? ""} />
        <div className="actions">
          <button type="submit" className="button button--small" disabled={!hydrated || busy}>{t("reviewReply.send")}</button>
          {review.reply === undefined
            ? null
            : <button type="button" className="button button--small button--secondary" disabled={!hydrated || busy} onClick={remove}>{t("reviewReply.remove")}</button>}
        </div>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </form>
    </details>
  )
}

/**
 * Published reviews (a specialist's on the profile page, a customer's on the customer page): a
 * sealed one says only that it exists; with `own`, the reviewed profile may answer each.
 */
export const ReviewList = ({ reviews, own, texts }: { readonly reviews: Reviews; readonly own: boolean; readonly texts: Texts }) => {
  const { t, language } = texts
  if (reviews.items.length === 0) return <p>{t("profile.noReviews")}</p>
  return (
    <ul className="reviews">
      {reviews.items.map((review) => (
        <li key={review.uuid} className="review">
          {review.sealed ? <p className="muted">{t("profile.sealed")}</p> : (
            <>
              <p className="review__head">
                {review.rating === undefined ? null : <Stars rating={review.rating} label={t("profile.reviewStars", { rating: review.rating })} />}
                <span>
                  {review.authorUuid === undefined
                    ? t("profile.reviewBy", { name: review.authorName ?? "", date: review.publishedAt === undefined ? "" : texts.date(review.publishedAt) })
                    : (
                      <>
                        <a href={href(`/u/${review.authorUuid}`, language)}>{review.authorName}</a>
                        {review.publishedAt === undefined ? null : `, ${texts.date(review.publishedAt)}`}
                      </>
                    )}
                  {review.customerAlias === undefined ? null : (
                    <>
                      {" · "}
                      <a href={href(`/customers/${review.customerAlias}`, language)} aria-label={t("customer.linkOf", { name: review.authorName ?? review.customerAlias })}>
                        {t("customer.link")}
                      </a>
                    </>
                  )}
                </span>
              </p>
              {review.body === undefined ? null : <p>{review.body}</p>}
              {review.reply === undefined ? null : (
                <blockquote className="review__reply">
                  <p><strong>{t("profile.reply")}</strong></p>
                  <p>{review.reply}</p>
                </blockquote>
              )}
              {own ? <ReplyForm review={review} texts={texts} /> : null}
            </>
          )}
        </li>
      ))}
    </ul>
  )
}

