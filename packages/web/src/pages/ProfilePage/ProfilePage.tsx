import { CardList } from "../../components/PublicationCard.js"
import { ReviewList, Stars } from "../../components/Reviews.js"
import { ComplaintForm, FavoriteButton } from "../../components/Social.js"
import { profileTypeLabel } from "../../components/format.js"
import type { PageProps } from "../types.js"

export const title = ({ data }: Pick<PageProps<"profile">, "data">) => data.profile.name

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
