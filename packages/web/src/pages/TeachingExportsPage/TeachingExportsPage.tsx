import { useState } from "react"
import { jobPath } from "../../components/courseAdmin.js"
import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { may, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingExports">, "data" | "texts">) => `${texts.t("authmore.exports.title")} · ${data.course.courseTitle}`

const kinds = ["grades", "progress", "activity"] as const

/**
 * The teachers' exports: a CSV per learner of the grades, the progress (the roster with each
 * learner's state and steps) or the activity, for the course or one run; learners are pseudonyms
 * unless the caller holds pii_read and asks for names. Each export is a job followed on its page.
 */
export default function TeachingExportsPage({ data, texts }: PageProps<"teachingExports">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const course = data.course
  const [kind, setKind] = useState<typeof kinds[number]>("grades")
  const [runUuid, setRunUuid] = useState("")
  const [names, setNames] = useState(false)
  const named = may(course, "pii_read")
  return (
    <div>
      <TeachingHeader course={course} texts={texts} current="analytics">{t("authmore.exports.title")}: {course.courseTitle}</TeachingHeader>
      <p className="hint">{t("authmore.exports.hint")}</p>
      <form className="stack narrow" onSubmit={(event) => {
        event.preventDefault()
        void run((api) => api["learning.analytics.export"]({
          path: { course: course.courseUuid },
          payload: { requestUuid: requestUuid(), kind, pseudonymize: !(named && names), ...(runUuid === "" ? {} : { runUuid }) }
        }), (job) => location.assign(href(jobPath(job.uuid), language)))
      }}>
        <fieldset className="stack">
          <legend>{t("authmore.exports.kind")}</legend>
          {kinds.map((k) => (
            <label className="check" key={k}><input type="radio" id={`export-${k}`} name="kind" value={k} checked={kind === k} onChange={() => setKind(k)} /> <span className="check__text">{labelOf(texts, "authmore.exportKind", k)}</span></label>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor="export-run">{t("authmore.exports.run")}</label>
          <select id="export-run" value={runUuid} onChange={(event) => setRunUuid(event.target.value)}>
            <option value="">{t("authmore.exports.allRuns")}</option>
            {data.runs.map((r) => <option key={r.uuid} value={r.uuid}>{r.title}</option>)}
          </select>
        </div>
        {named ? (
          <label className="check"><input type="checkbox" id="export-names" checked={names} onChange={(event) => setNames(event.target.checked)} /> <span className="check__text">{t("authmore.exports.names")}</span></label>
        ) : <p className="hint">{t("authmore.exports.pseudonyms")}</p>}
        <p><button type="submit" className="button" disabled={!hydrated || busy}>{t("authmore.exports.make")}</button></p>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </form>
    </div>
  )
}
