import type { FormEvent } from "react"
import { href } from "../../components/Layout.js"
import { CardList } from "../../components/PublicationCard.js"
import { ComplaintForm, FavoriteButton } from "../../components/Social.js"
import { profileTypeLabel } from "../../components/format.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { Texts } from "../../i18n.js"
import type { ReviewItem, Reviews } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data }: Pick<PageProps<"profile">, "data">) => data.profile.name

/** Five stars, as text for screen readers and as a picture of filled and empty stars for the eye. */
const Stars = ({ rating, label }: { readonly rating: number; readonly label: string }) => (
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

const ReviewList = ({ reviews, own, texts }: { readonly reviews: Reviews; readonly own: boolean; readonly texts: Texts }) => {
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

const initials = (name: string) => name.split(/\s+/).filter((w) => w !== "").slice(0, 2).map((w) => w[0]!.toUpperCase()).join("")

export default function ProfilePage({ state, data, texts }: PageProps<"profile">) {
  const { t } = texts
  const { profile, reviews } = data
  const own = state.session?.profileUuid === profile.uuid
  return (
    <>
      <header className="profile-head">
        {profile.avatarUrl === undefined
          ? <span className="avatar avatar--initials" aria-hidden="true">{initials(profile.name)}</span>
          : <img className="avatar" src={profile.avatarUrl} alt={t("profile.avatarAlt", { name: profile.name })} width={96} height={96} />}
        <div>
          <h1>{profile.name}</h1>
          <p className="muted">{profileTypeLabel(texts, profile.type)}</p>
          {reviews === undefined || reviews.average === null ? null : (
            <p className="rating" id="rating">
              <Stars rating={reviews.average} label={t("profile.rating", { rating: texts.number(Math.round(reviews.average * 10) / 10) })} />
              <span>{texts.number(Math.round(reviews.average * 10) / 10)}</span>
              <span className="muted">({t("profile.reviewCount", { n: reviews.count })})</span>
            </p>
          )}
        </div>
      </header>
      {state.session === undefined || own ? null : (
        <div className="profile-actions">
          <FavoriteButton kind="profile" uuid={profile.uuid} favorite={data.favorite === true} texts={texts} />
          <ComplaintForm kind="profile" uuid={profile.uuid} texts={texts} />
        </div>
      )}
      {profile.about === "" ? null : <p className="lead">{profile.about}</p>}
      <dl className="facts">
        {profile.categories.length === 0 ? null : <div><dt>{t("profile.categories")}</dt><dd>{profile.categories.join(", ")}</dd></div>}
        {profile.skills.length === 0 ? null : <div><dt>{t("profile.skills")}</dt><dd>{profile.skills.join(", ")}</dd></div>}
        {profile.contacts === "" ? null : <div><dt>{t("profile.contacts")}</dt><dd>{profile.contacts}</dd></div>}
      </dl>
      <section aria-labelledby="own">
        <h2 id="own">{t("profile.publications")}</h2>
        {data.publications.length === 0 ? <p>{t("profile.noPublications")}</p> : <CardList cards={data.publications} texts={texts} showAuthor={false} />}
      </section>
      {reviews === undefined ? null : (
        <section aria-labelledby="reviews">
          <h2 id="reviews">{t("profile.reviews")}</h2>
          <ReviewList reviews={reviews} own={own} texts={texts} />
        </section>
      )}
    </>
  )
}
