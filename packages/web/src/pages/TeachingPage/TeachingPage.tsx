import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"teaching">, "texts">) => texts.t("teaching.title")

/** Every course the caller teaches, with their roles and how much waits for them there. */
export default function TeachingPage({ data, texts }: PageProps<"teaching">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("teaching.title")}</h1>
      <p className="lead">{t("teaching.lead")}</p>
      {data.courses.length === 0 ? <p>{t("teaching.none")}</p> : (
        <ul className="rows teaching-courses">
          {data.courses.map((course) => (
            <li key={course.courseUuid} className="row row--stacked" data-uuid={course.courseUuid}>
              <h2 className="row__title"><a href={href(`/teaching/${course.courseUuid}`, language)}>{course.courseTitle}</a></h2>
              <p className="card__meta">
                <span className="tag">{labelOf(texts, "teaching.courseStatus", course.courseStatus)}</span>
                <span>{course.roles.map((role) => labelOf(texts, "teaching.role", role)).join(", ")}</span>
                <span className="todo">{t("teaching.todo", { n: course.todo })}</span>
              </p>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
