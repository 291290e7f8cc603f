import { href } from "../../components/Layout.js"
import { factsOf, kindLabel } from "../../components/format.js"
import type { PageProps } from "../types.js"

export const title = ({ data }: Pick<PageProps<"publication">, "data">) => data.publication.title

export default function PublicationPage({ state, data, texts }: PageProps<"publication">) {
  const { t, language } = texts
  const p = data.publication
  const facts = factsOf(texts, p.kind, p.details)
  const paragraphs = p.description.split(/\n{2,}/).filter((part) => part.trim() !== "")
  return (
    <article className="publication">
      <p className="card__meta">
        <span className="tag">{kindLabel(texts, p.kind)}</span>
        {p.category === "" ? null : <span>{t("publication.category")}: {p.category}</span>}
        {p.closed ? <span className="tag tag--muted">{t("publication.closed")}</span> : null}
      </p>
      <h1>{p.title}</h1>
      {data.author === undefined ? null : (
        <p className="byline">
          {t("publication.author")}: <a href={href(`/u/${data.author.uuid}`, language)} id="author">{data.author.name}</a>
          {p.createdAt === undefined ? null : <span className="muted"> · {t("publication.published", { date: texts.date(p.createdAt) })}</span>}
        </p>
      )}
      <div className="publication__layout">
        <div className="publication__main">
          {p.pictures.length === 0 ? null : (
            <section aria-label={t("publication.pictures")} className="gallery">
              {p.pictures.map((picture) => (
                <figure key={picture.id}>
                  <img src={`/api/v1/files/${picture.id}/content`} alt={picture.alt} loading="lazy" width={640} height={400} />
                  {picture.caption === "" ? null : <figcaption>{picture.caption}</figcaption>}
                </figure>
              ))}
            </section>
          )}
          <div className="description">{paragraphs.map((part, i) => <p key={i}>{part}</p>)}</div>
        </div>
        <aside className="publication__aside">
          {facts.length === 0 ? null : (
            <section aria-labelledby="details" className="panel">
              <h2 id="details">{t("publication.details")}</h2>
              <dl className="facts">
                {facts.map((fact) => (
                  <div key={fact.label}>
                    <dt>{t(fact.label)}</dt>
                    <dd>
                      {typeof fact.value === "string"
                        ? (fact.href === undefined ? fact.value : <a href={fact.href} rel="nofollow noopener">{fact.value}</a>)
                        : <ul>{fact.value.map((item) => <li key={item}>{item}</li>)}</ul>}
                    </dd>
                  </div>
                ))}
              </dl>
            </section>
          )}
          {state.session === undefined
            ? (
              <p className="panel">
                <a href={href("/sign-in", language, { next: `/p/${p.uuid}?lang=${language}` })}>{t("publication.signInToRespond")}</a>
              </p>
            )
            : null}
        </aside>
      </div>
    </article>
  )
}
