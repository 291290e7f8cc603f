import { useState } from "react"
import type { MessageKey, Texts } from "../i18n.js"
import type { AuthoringCourseHead } from "../model.js"
import { href } from "./Layout.js"
import { labelOf } from "./learning.js"

type Api = typeof import("../browserApi.js")["api"]

/** The refusals the author's pages explain in their own words; any other goes through `messageOf` (browserApi.ts). */
const authoringMessages: Readonly<Record<string, MessageKey>> = {
  checker_not_ready: "authoring.error.checkerNotReady",
  course_invalid: "authoring.error.courseInvalid",
  plan_stale: "authoring.error.planStale",
  plan_expired: "authoring.error.planExpired",
  invalid_request: "authoring.error.invalid",
  not_found: "authoring.error.notFound"
}

/**
 * An author's command (the one `useAction` of components/useAction.ts, with the learning
 * refusals named): the browser's client calls the API; a refusal becomes the status message.
 */
export const useAuthoringAction = () => {
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<MessageKey | undefined>(undefined)
  const run = async <A,>(call: (api: Api) => Promise<A>, then: (value: A) => void | Promise<void> = () => location.reload()) => {
    setBusy(true)
    setMessage(undefined)
    const { api, messageOf } = await import("../browserApi.js")
    try {
      await then(await call(api))
    } catch (error) {
      const code = (error as { readonly code?: unknown }).code
      setMessage(typeof code === "string" && code in authoringMessages && code !== "revision_conflict" ? authoringMessages[code]! : messageOf(error))
    } finally {
      setBusy(false)
    }
  }
  return { busy, message, setMessage, run }
}

/** The status line under a form: the refusal or what was done, read out as it changes. */
export const Status = ({ texts, message, done }: { readonly texts: Texts; readonly message: MessageKey | undefined; readonly done?: MessageKey | undefined }) => (
  <p role="status" aria-live="polite" className={message === undefined ? "notice" : "status"}>
    {message !== undefined ? texts.t(message) : done !== undefined ? texts.t(done) : ""}
  </p>
)

/** A course's author pages: its heading, state and the tabs between the editor, the runs and the staff. */
export const CourseHead = ({ texts, course, current }: { readonly texts: Texts; readonly course: AuthoringCourseHead; readonly current: "editor" | "runs" | "staff" | "admin" }) => {
  const { t, language } = texts
  const tabs = [
    { key: "editor", path: `/authoring/courses/${course.uuid}`, label: t("authoring.tab.editor") },
    { key: "runs", path: `/authoring/courses/${course.uuid}/runs`, label: t("authoring.tab.runs") },
    { key: "staff", path: `/authoring/courses/${course.uuid}/staff`, label: t("authoring.tab.staff") },
    { key: "admin", path: `/authoring/courses/${course.uuid}/admin`, label: t("authmore.tab.admin") }
  ] as const
  return (
    <>
      <p className="muted"><a href={href("/authoring", language)}>{t("authoring.title")}</a></p>
      <h1>{course.title}</h1>
      <p className="card__meta">
        <span className="tag">{labelOf(texts, "authoring.courseStatus", course.status)}</span>
        <span>{course.latestVersion === 0 ? t("authoring.neverPublished") : t("authoring.latestVersion", { n: course.latestVersion })}</span>
        {course.latestVersion === 0 ? null : <a href={href(`/courses/${course.uuid}`, language)}>{t("authoring.publicPage")}</a>}
      </p>
      <nav className="tabs" aria-label={t("authoring.tabs")}>
        <ul>
          {tabs.map((tab) => (
            <li key={tab.key}><a href={href(tab.path, language)} aria-current={tab.key === current ? "page" : undefined}>{tab.label}</a></li>
          ))}
        </ul>
      </nav>
    </>
  )
}

/** A number typed into a field: an integer, or undefined when the field is empty or not a number. */
export const intOf = (value: string): number | undefined => {
  const trimmed = value.trim()
  if (trimmed === "") return undefined
  const n = Number(trimmed)
  return Number.isFinite(n) ? Math.trunc(n) : undefined
}

/** Lines of a text area, trimmed, without the empty ones. */
export const linesOf = (value: string): Array<string> => value.split("\n").map((line) => line.trim()).filter((line) => line !== "")

export { requestUuid } from "./useAction.js"

/** A date field's value (`YYYY-MM-DD`) as the instant it starts in UTC, as the API takes dates. */
export const dayStart = (day: string) => new Date(`${day}T00:00:00.000Z`)

/** An instant as a date field's value (`YYYY-MM-DD`, UTC). */
export const dayOf = (at: Date) => at.toISOString().slice(0, 10)
