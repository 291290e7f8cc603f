import { href } from "../../components/Layout.js"
import { CardList } from "../../components/PublicationCard.js"
import type { PageProps } from "../types.js"

export const title = ({ state, texts }: Pick<PageProps<"home">, "state" | "texts">) => texts.t("home.title", { name: state.brand.name })

export default function HomePage({ state, data, texts }: PageProps<"home">) {
  const { t, language } = texts
  return (
    <>
      <section className="hero">
        <h1>{title({ state, texts })}</h1>
        <p className="lead">{t("home.about", { name: state.brand.name })}</p>
        <p className="actions">
          <a className="button" href={href("/catalog", language)}>{t("home.browse")}</a>
          <a className="button button--secondary" href={href("/courses", language)}>{t("homeCourses.browse")}</a>
          <a className="button button--secondary" href={href("/sign-in", language)}>{t("nav.signIn")}</a>
        </p>
        <p className="muted">
          {t("home.developers")} <a href="/api/docs">{t("nav.apiDocs")}</a> · <a href="https://www.npmjs.com/package/@birzha/client">{t("home.sdk")}</a>
        </p>
      </section>
      <section aria-labelledby="home-courses" className="home-courses">
        <h2 id="home-courses">{t("homeCourses.title")}</h2>
        <p>{t("homeCourses.about")} <a href={href("/courses", language)}>{t("homeCourses.link")}</a></p>
      </section>
      <section aria-labelledby="latest">
        <h2 id="latest">{t("home.latest")}</h2>
        <CardList cards={data.latest} texts={texts} />
      </section>
    </>
  )
}
