import { href } from "../../components/Layout.js"
import { CardList } from "../../components/PublicationCard.js"
import { kindLabel } from "../../components/format.js"
import type { PageProps } from "../types.js"

const kinds = ["task", "service", "portfolio", "article", "vacancy", "resume", "training"] as const

export const title = ({ texts }: Pick<PageProps<"catalog">, "texts">) => texts.t("catalog.title")

/** The search form is a plain GET form: it works the same without JavaScript. */
export default function CatalogPage({ data, texts }: PageProps<"catalog">) {
  const { t, language } = texts
  const kept = {
    ...(data.q === "" ? {} : { q: data.q }),
    ...(data.kind === "" ? {} : { kind: data.kind }),
    ...(data.category === "" ? {} : { category: data.category })
  }
  return (
    <>
      <h1>{t("catalog.title")}</h1>
      <form method="get" action="/catalog" role="search" className="search">
        <input type="hidden" name="lang" value={language} />
        <div className="field field--wide">
          <label htmlFor="q">{t("catalog.search")}</label>
          <input id="q" name="q" type="search" maxLength={4096} defaultValue={data.q} />
        </div>
        <div className="field">
          <label htmlFor="kind">{t("catalog.kind")}</label>
          <select id="kind" name="kind" defaultValue={data.kind}>
            <option value="">{t("catalog.allKinds")}</option>
            {kinds.map((kind) => <option key={kind} value={kind}>{kindLabel(texts, kind)}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="category">{t("catalog.category")}</label>
          <input id="category" name="category" type="text" maxLength={80} defaultValue={data.category} />
        </div>
        <button type="submit" className="button">{t("catalog.find")}</button>
      </form>
      <section aria-labelledby="results">
        <h2 id="results">{t("catalog.results")}</h2>
        {data.items.length === 0 ? <p>{t("catalog.nothing")}</p> : <CardList cards={data.items} texts={texts} />}
        <nav className="pager" aria-label={t("catalog.results")}>
          {data.cursor === "" ? null : <a href={href("/catalog", language, kept)}>{t("catalog.first")}</a>}
          {data.nextCursor === undefined ? null : <a rel="next" className="button button--secondary" href={href("/catalog", language, { ...kept, cursor: data.nextCursor })}>{t("catalog.next")}</a>}
        </nav>
      </section>
    </>
  )
}
