import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import type { PageProps } from "../types.js"

const levels = ["beginner", "intermediate", "advanced"] as const

export const title = ({ texts }: Pick<PageProps<"courses">, "texts">) => texts.t("learning.courses.title")

/** The learning catalog: published, listed courses; the search is a plain GET form, working without JavaScript. */
export default function CoursesPage({ data, texts }: PageProps<"courses">) {
  const { t, language } = texts
  const kept = { ...(data.q === "" ? {} : { q: data.q }), ...(data.level === "" ? {} : { level: data.level }) }
  return (
    <>
      <h1>{t("learning.courses.title")}</h1>
      <p className="lead">{t("learning.courses.lead")}</p>
      <form method="get" action="/courses" role="search" className="search search--courses">
        <input type="hidden" name="lang" value={language} />
        <div className="field">
          <label htmlFor="q">{t("learning.courses.search")}</label>
          <input id="q" name="q" type="search" maxLength={200} defaultValue={data.q} />
        </div>
        <div className="field">
          <label htmlFor="level">{t("learning.courses.level")}</label>
          <select id="level" name="level" defaultValue={data.level}>
            <option value="">{t("learning.courses.allLevels")}</option>
            {levels.map((level) => <option key={level} value={level}>{labelOf(texts, "value.level", level)}</option>)}
          </select>
        </div>
        <button type="submit" className="button">{t("catalog.find")}</button>
      </form>
      <section aria-labelledby="course-results">
        <h2 id="course-results">{t("learning.courses.results")}</h2>
        {data.items.length === 0 ? <p>{t("learning.courses.none")}</p> : (
          <ul className="cards">
            {data.items.map((course) => (
              <li key={course.uuid}>
                <article className="card">
                  <div className="card__body">
                    <p className="card__meta">
                      <span className="tag">{t("learning.course")}</span>
                      {course.level === undefined ? null : <span>{labelOf(texts, "value.level", course.level)}</span>}
                      {course.format === undefined ? null : <span>{labelOf(texts, "value.format", course.format)}</span>}
                    </p>
                    <h3 className="card__title"><a href={href(`/courses/${course.uuid}`, language)}>{course.title}</a></h3>
                    {course.summary === "" ? null : <p className="card__excerpt">{course.summary}</p>}
                    {course.durationHours === undefined ? null : <p className="card__author">{t("value.hours", { n: course.durationHours })}</p>}
                  </div>
                </article>
              </li>
            ))}
          </ul>
        )}
        <nav className="pager" aria-label={t("learning.courses.results")}>
          {data.cursor === "" ? null : <a href={href("/courses", language, kept)}>{t("catalog.first")}</a>}
          {data.nextCursor === undefined ? null : <a rel="next" className="button button--secondary" href={href("/courses", language, { ...kept, cursor: data.nextCursor })}>{t("catalog.next")}</a>}
        </nav>
      </section>
    </>
  )
}
