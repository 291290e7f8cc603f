import type { ReactNode } from "react"
import type { MessageKey, Texts } from "../i18n.js"
import type { TeachingHead } from "../model.js"
import { href } from "./Layout.js"
import { labelOf } from "./learning.js"

/** A course's teaching sections and the right each needs (docs/web.md, "Teaching pages"): a section the caller's rights do not open is not offered. */
export const teachingSections = [
  { section: "", label: "teaching.nav.dashboard", needs: [] },
  { section: "reviews", label: "teaching.nav.reviews", needs: ["review", "grades_release"] },
  { section: "appeals", label: "teaching.nav.appeals", needs: ["appeals_resolve"] },
  { section: "extensions", label: "teaching.nav.extensions", needs: ["dates_grant"] },
  { section: "roster", label: "teaching.nav.roster", needs: ["roster_manage"] },
  { section: "regrades", label: "teaching.nav.regrades", needs: ["grades_adjust"] },
  { section: "incidents", label: "teaching.nav.incidents", needs: ["runs_manage"] },
  { section: "analytics", label: "teaching.nav.analytics", needs: ["analytics_read"] }
] as const satisfies ReadonlyArray<{ readonly section: string; readonly label: MessageKey; readonly needs: ReadonlyArray<string> }>

export type TeachingSection = typeof teachingSections[number]["section"]

/** Whether the caller's rights on the course include one of `needs` (none needed: always). */
export const may = (course: TeachingHead, ...needs: ReadonlyArray<string>) => needs.length === 0 || needs.some((right) => course.rights.includes(right))

export const sectionPath = (course: string, section: TeachingSection) => section === "" ? `/teaching/${course}` : `/teaching/${course}/${section}`

/** The head of every course page of the teaching area: the course, the caller's roles and the sections their rights open. */
export const TeachingHeader = ({ course, texts, current, children }: {
  readonly course: TeachingHead
  readonly texts: Texts
  readonly current: TeachingSection
  readonly children?: ReactNode
}) => {
  const { t, language } = texts
  return (
    <>
      <p className="card__meta">
        <a href={href("/teaching", language)}>{t("teaching.title")}</a>
        <span>{t("teaching.yourRoles")} {course.roles.map((role) => labelOf(texts, "teaching.role", role)).join(", ")}</span>
      </p>
      <h1>{children}</h1>
      <nav className="tabs" aria-label={t("teaching.nav.label")}>
        <ul>
          {teachingSections.filter((entry) => may(course, ...entry.needs)).map((entry) => (
            <li key={entry.section}>
              <a href={href(sectionPath(course.courseUuid, entry.section), language)} aria-current={entry.section === current ? "page" : undefined}>{t(entry.label)}</a>
            </li>
          ))}
        </ul>
      </nav>
    </>
  )
}

/** A list's status filter as links (the page reloads with `?status=`). */
export const StatusFilter = ({ texts, path, statuses, current, prefix, label }: {
  readonly texts: Texts
  readonly path: string
  readonly statuses: ReadonlyArray<string>
  readonly current: string
  readonly prefix: string
  readonly label: string
}) => {
  const { t, language } = texts
  return (
    <nav className="filter" aria-label={label}>
      <ul>
        <li><a href={href(path, language)} aria-current={current === "" ? "page" : undefined}>{t("teaching.filter.all")}</a></li>
        {statuses.map((status) => (
          <li key={status}><a href={href(path, language, { status })} aria-current={current === status ? "page" : undefined}>{labelOf(texts, prefix, status)}</a></li>
        ))}
      </ul>
    </nav>
  )
}

/** The value of a form's field by id, trimmed (the pages' forms are plain, read on submit). */
export const fieldValue = (id: string) =>
  ((document.getElementById(id) as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | null)?.value ?? "").trim()
