import { href } from "../../components/Layout.js"
import { ReviewList, Stars } from "../../components/Reviews.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"customer">, "data" | "texts">) => texts.t("customer.title", { alias: data.customer.alias })

/**
 * A customer's reputation (customers.get): what specialists wrote about them after deals, under
 * the pseudonymous alias deals and reviews show — never the customer's profile or name.
 */
export default function CustomerPage({ state, data, texts }: PageProps<"customer">) {
  const { t, language } = texts
  const { customer, reviews } = data
  const average = customer.ratingAverage === null ? undefined : Math.round(customer.ratingAverage * 10) / 10
  const own = data.own
  return (
    <>
      <header className="profile-head">
        <div>
          <h1>{t("customer.heading")} <span className="nowrap">{customer.alias}</span></h1>
          <p className="muted">{t("customer.about")}</p>
          {average === undefined ? null : (
            <p className="rating" id="rating">
              <Stars rating={average} label={t("profile.rating", { rating: texts.number(average) })} />
              <span>{texts.number(average)}</span>
              <span className="muted">({t("profile.reviewCount", { n: customer.reviewCount })})</span>
            </p>
          )}
        </div>
      </header>
      <dl className="facts">
        <div><dt>{t("customer.completedDeals")}</dt><dd id="completed-deals">{texts.number(customer.completedDeals)}</dd></div>
        <div><dt>{t("customer.reviewCount")}</dt><dd>{texts.number(customer.reviewCount)}</dd></div>
        <div><dt>{t("customer.since")}</dt><dd>{texts.month(customer.since)}</dd></div>
      </dl>
      <section aria-labelledby="reviews">
        <h2 id="reviews">{t("customer.reviews")}</h2>
        <ReviewList reviews={reviews} own={own} texts={texts} />
        <p className="actions">
          {data.cursor === "" ? null : <a href={href(state.path, language)}>{t("customer.newest")}</a>}
          {data.nextCursor === undefined ? null : (
            <a href={href(state.path, language, { cursor: data.nextCursor })} rel="next">{t("profile.moreReviews")}</a>
          )}
        </p>
      </section>
    </>
  )
}
