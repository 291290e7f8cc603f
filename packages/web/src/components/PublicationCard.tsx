import type { Texts } from "../i18n.js"
import type { Card } from "../model.js"
import { href } from "./Layout.js"
import { kindLabel, priceOf } from "./format.js"

/** One publication in a list: picture, kind, title (a link), the author by name, price, the start of its text. */
export const PublicationCard = ({ card, texts, showAuthor = true }: { readonly card: Card; readonly texts: Texts; readonly showAuthor?: boolean }) => {
  const { t, language } = texts
  return (
    <li>
      <article className="card" aria-labelledby={`p-${card.uuid}`}>
        {card.picture === undefined ? null : (
          <img className="card__picture" src={`/api/v1/files/${card.picture.id}/content`} alt="" loading="lazy" width={320} height={180} />
        )}
        <div className="card__body">
          <p className="card__meta">
            <span className="tag">{kindLabel(texts, card.kind)}</span>
            {card.category === "" ? null : <span>{card.category}</span>}
            {card.closed ? <span className="tag tag--muted">{t("card.closed")}</span> : null}
          </p>
          <h3 id={`p-${card.uuid}`} className="card__title"><a href={href(`/p/${card.uuid}`, language)}>{card.title}</a></h3>
          {card.price === undefined ? null : <p className="card__price">{priceOf(texts, card.kind, card.price)}</p>}
          <p className="card__excerpt">{card.excerpt}</p>
          {showAuthor && card.authorName !== undefined
            ? <p className="card__author"><a href={href(`/u/${card.authorUuid}`, language)}>{t("card.by", { name: card.authorName })}</a></p>
            : null}
        </div>
      </article>
    </li>
  )
}

export const CardList = ({ cards, texts, showAuthor = true }: { readonly cards: ReadonlyArray<Card>; readonly texts: Texts; readonly showAuthor?: boolean }) =>
  <ul className="cards">{cards.map((card) => <PublicationCard key={card.uuid} card={card} texts={texts} showAuthor={showAuthor} />)}</ul>
