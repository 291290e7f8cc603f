import { href } from "../../components/Layout.js"
import { kindLabel, profileTypeLabel } from "../../components/format.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { FavoriteItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"favorites">, "texts">) => texts.t("favorites.title")

const Favorite = ({ item, texts }: { readonly item: FavoriteItem; readonly texts: PageProps<"favorites">["texts"] }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const remove = () =>
    void run((api) => api["favorites.remove"]({ payload: { requestUuid: requestUuid(), entityKind: item.entityKind, entityUuid: item.entityUuid } }))
  const name = item.title ?? t("favorites.unavailable")
  return (
    <li className="row" data-uuid={item.entityUuid}>
      <div>
        <h2 className="row__title">
          {item.available
            ? <a href={href(item.entityKind === "publication" ? `/p/${item.entityUuid}` : `/u/${item.entityUuid}`, language)}>{name}</a>
            : <span className="muted">{name}</span>}
        </h2>
        <p className="card__meta">
          <span className="tag">
            {item.entityKind === "publication"
              ? (item.publicationKind === undefined ? t("favorites.publication") : kindLabel(texts, item.publicationKind))
              : (item.profileType === undefined ? t("favorites.profile") : profileTypeLabel(texts, item.profileType))}
          </span>
          <span>{t("favorites.added", { date: texts.date(item.createdAt) })}</span>
        </p>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </div>
      <button type="button" className="button button--secondary button--small" disabled={!hydrated || busy} onClick={remove} aria-label={t("favorites.removeOf", { name })}>
        {t("favorites.remove")}
      </button>
    </li>
  )
}

/** What the person keeps: publications and profiles, newest first; one no longer public says so. */
export default function FavoritesPage({ data, texts }: PageProps<"favorites">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("favorites.title")}</h1>
      {data.items.length === 0
        ? <p>{t("favorites.none")} <a href={href("/catalog", language)}>{t("nav.catalog")}</a></p>
        : <ul className="rows">{data.items.map((item) => <Favorite key={item.uuid} item={item} texts={texts} />)}</ul>}
    </div>
  )
}
