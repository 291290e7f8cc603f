import { href } from "../../components/Layout.js"
import { sectionPath, TeachingHeader } from "../../components/teaching.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingCourse">, "data" | "texts">) => `${texts.t("teaching.dashboard")} · ${data.course.courseTitle}`

/** Each to-do count of the dashboard and the list that shows its records (none: the list is not a page of this area). */
const countLinks: ReadonlyArray<{ readonly name: string; readonly section?: "reviews" | "appeals" | "extensions"; readonly params?: Readonly<Record<string, string>> }> = [
  { name: "reviewsToClaim", section: "reviews", params: { status: "pooled" } },
  { name: "reviewsClaimed", section: "reviews", params: { status: "claimed", mine: "true" } },
  { name: "appealsOpen", section: "appeals", params: { status: "open" } },
  { name: "extensionsPending", section: "extensions", params: { status: "requested" } },
  { name: "threadsUnanswered" },
  { name: "incidentsOpen" },
  { name: "checkersSuspended" },
  { name: "checkersFailing" }
]

/** One course's teaching dashboard: the to-do counts the caller's rights give, each leading to its list. */
export default function TeachingCoursePage({ data, texts }: PageProps<"teachingCourse">) {
  const { t, language } = texts
  const course = data.course
  const shown = countLinks.filter((entry) => course.counts[entry.name] !== undefined)
  return (
    <div>
      <TeachingHeader course={course} texts={texts} current="">{t("teaching.dashboard")}: {course.courseTitle}</TeachingHeader>
      {shown.length === 0 ? <p>{t("teaching.nothingToDo")}</p> : (
        <ul className="rows teaching-counts">
          {shown.map((entry) => {
            const n = course.counts[entry.name]!
            const label = t(`teaching.count.${entry.name}` as MessageKey, { n })
            return (
              <li key={entry.name} className="row" data-count={entry.name}>
                {entry.section === undefined
                  ? <span>{label}</span>
                  : <a href={href(sectionPath(course.courseUuid, entry.section), language, entry.params)}>{label}</a>}
              </li>
            )
          })}
        </ul>
      )}
      <p className="muted">{t("teaching.todo", { n: course.todo })}</p>
    </div>
  )
}
