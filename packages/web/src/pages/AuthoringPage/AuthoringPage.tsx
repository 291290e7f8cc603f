import { useState } from "react"
import { requestUuid, Status, useAuthoringAction } from "../../components/authoring.js"
import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"authoring">, "texts">) => texts.t("authoring.title")

/**
 * The author's courses, each with its state and open problems, and the approved training
 * publications not yet made courses: one button turns one into a course draft (learning.courses.from_publication).
 */
export default function AuthoringPage({ data, texts }: PageProps<"authoring">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [newTitle, setNewTitle] = useState("")
  const open = (course: { readonly uuid: string }) => {
    location.assign(href(`/authoring/courses/${course.uuid}`, language))
  }
  return (
    <div className="authoring">
      <h1>{t("authoring.title")}</h1>
      <p className="lead">{t("authoring.lead")}</p>
      <p><a href={href("/authoring/library", language)}>{t("authmore.libraryPage.link")}</a></p>
      <section aria-labelledby="trainings">
        <h2 id="trainings">{t("authoring.trainings")}</h2>
        {data.trainings.length === 0 ? (
          <p>{t("authoring.trainings.none")} <a href={href("/learning/new", language)}>{t("authoring.trainings.write")}</a></p>
        ) : (
          <ul className="rows">
            {data.trainings.map((training) => (
              <li key={training.uuid} className="row" data-uuid={training.uuid}>
                <h3 className="row__title"><a href={href(`/p/${training.uuid}`, language)}>{training.title}</a></h3>
                <button
                  type="button"
                  className="button button--small"
                  disabled={!hydrated || busy}
                  aria-label={t("authoring.fromTraining.label", { title: training.title })}
                  onClick={() => void run((api) => api["learning.courses.from_publication"]({ payload: { requestUuid: requestUuid(), publicationUuid: training.uuid } }), open)}
                >
                  {t("authoring.fromTraining")}
                </button>
              </li>
            ))}
          </ul>
        )}
        <Status texts={texts} message={message} />
      </section>
      <section aria-labelledby="courses">
        <h2 id="courses">{t("authoring.courses")}</h2>
        {data.courses.length === 0 ? <p>{t("authoring.courses.none")}</p> : (
          <ul className="rows">
            {data.courses.map((course) => (
              <li key={course.uuid} className="row row--stacked" data-uuid={course.uuid}>
                <h3 className="row__title"><a href={href(`/authoring/courses/${course.uuid}`, language)}>{course.title}</a></h3>
                <p className="card__meta">
                  <span className="tag">{labelOf(texts, "authoring.courseStatus", course.status)}</span>
                  <span>{course.latestVersion === 0 ? t("authoring.neverPublished") : t("authoring.latestVersion", { n: course.latestVersion })}</span>
                  {course.errors === 0 ? null : <span className="tag tag--warning">{t("authoring.errors", { n: course.errors })}</span>}
                  {course.warnings === 0 ? null : <span className="tag tag--muted">{t("authoring.warnings", { n: course.warnings })}</span>}
                  <span>{t("authoring.updatedOn", { date: texts.date(course.updatedAt) })}</span>
                </p>
                <p className="row__actions">
                  <a href={href(`/authoring/courses/${course.uuid}/runs`, language)} aria-label={t("authoring.runsOf", { title: course.title })}>{t("authoring.tab.runs")}</a>
                  <a href={href(`/authoring/courses/${course.uuid}/staff`, language)} aria-label={t("authoring.staffOf", { title: course.title })}>{t("authoring.tab.staff")}</a>
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="new-course">
        <h2 id="new-course">{t("authoring.new")}</h2>
        <form
          className="stack narrow"
          onSubmit={(event) => {
            event.preventDefault()
            if (newTitle.trim() === "") return
            void run((api) => api["learning.courses.create"]({ payload: { requestUuid: requestUuid(), title: newTitle.trim(), kind: "single" } }), open)
          }}
        >
          <div className="field">
            <label htmlFor="new-course-title">{t("authoring.new.title")}</label>
            <input id="new-course-title" value={newTitle} maxLength={160} required onChange={(event) => setNewTitle(event.target.value)} />
          </div>
          <p><button type="submit" className="button button--secondary" disabled={!hydrated || busy}>{t("authoring.new.create")}</button></p>
        </form>
      </section>
    </div>
  )
}
