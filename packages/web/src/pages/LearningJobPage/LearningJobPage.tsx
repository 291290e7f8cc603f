import { useEffect } from "react"
import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"learningJob">, "data" | "texts">) => labelOf(texts, "authmore.jobKind", data.job.kind)

/** How often a waiting job is read again: the worker usually finishes one in a few seconds. */
const pollMs = 2000

/**
 * One export, import or analytics export of the caller: its state, read again every 2 s while the
 * worker has it (the page loads itself again when it changes), then its file to download or the
 * imported course to open, or the problems that stopped it.
 */
export default function LearningJobPage({ data, texts }: PageProps<"learningJob">) {
  const { t, language } = texts
  const job = data.job
  const waiting = job.status === "queued" || job.status === "running"
  useEffect(() => {
    if (!waiting) return
    const timer = setInterval(() => {
      void import("../../browserApi.js").then(({ api }) => api["learning.exports.get"]({ path: { export: job.uuid } }))
        .then((now) => { if (now.status !== job.status) location.reload() }, () => undefined)
    }, pollMs)
    return () => clearInterval(timer)
  }, [job.uuid, job.status, waiting])
  const back = job.kind === "export_enrollment" ? { path: "/learning", label: t("learning.mine.title") }
    : job.kind === "analytics_export" && job.courseUuid !== undefined ? { path: `/teaching/${job.courseUuid}/exports`, label: t("authmore.exports.title") }
    : job.courseUuid !== undefined ? { path: `/authoring/courses/${job.courseUuid}/admin`, label: t("authmore.job.backAdmin") }
    : { path: "/authoring/library", label: t("authmore.libraryPage.title") }
  return (
    <div className="learning-job">
      <p className="muted"><a href={href(back.path, language)}>{back.label}</a></p>
      <h1>{labelOf(texts, "authmore.jobKind", job.kind)}</h1>
      <p className="card__meta">
        <span className={`tag job-status job-status--${job.status}`}>{labelOf(texts, "authmore.jobStatus", job.status)}</span>
        <span>{t("authmore.job.asked", { date: texts.date(job.createdAt) })}</span>
        {job.finishedAt === undefined ? null : <span>{t("authmore.job.finished", { date: texts.date(job.finishedAt) })}</span>}
      </p>
      <p role="status" aria-live="polite" className="notice">{waiting ? t("authmore.job.waiting") : ""}</p>
      {job.fileUuid === undefined || job.kind === "import" ? null : (
        <>
          <p><a className="button" href={`/api/v1/files/${job.fileUuid}/content`} download>{t("authmore.job.download")}</a></p>
          {job.expiresAt === undefined ? null : <p className="hint">{t("authmore.job.kept", { date: texts.date(job.expiresAt) })}</p>}
        </>
      )}
      {job.resultCourseUuid === undefined ? null : (
        <p><a className="button" href={href(`/authoring/courses/${job.resultCourseUuid}`, language)}>{t("authmore.job.openCourse")}</a></p>
      )}
      {job.issues.length === 0 ? null : (
        <section aria-labelledby="issues">
          <h2 id="issues">{t("authmore.job.issues")}</h2>
          <ul>{job.issues.map((issue, i) => <li key={i}><code>{issue.code}</code> {issue.message}</li>)}</ul>
        </section>
      )}
    </div>
  )
}
