import { labelOf } from "../../components/learning.js"
import { fieldValue, StatusFilter, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { TeachingExtensionView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingExtensions">, "data" | "texts">) => `${texts.t("teaching.extensions.title")} · ${data.course.courseTitle}`

type Texts = PageProps<"teachingExtensions">["texts"]

/** Approve (the requested date, or fewer days) or deny one request, with a word to the learner. */
const Decide = ({ extension, texts }: { readonly extension: TeachingExtensionView; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const id = (name: string) => `${name}-${extension.uuid}`
  const decide = (decision: "approve" | "deny") => {
    const raw = fieldValue(id("days"))
    const days = Number(raw)
    if (decision === "approve" && raw !== "" && (!Number.isInteger(days) || days < 1 || days > 365)) return document.getElementById(id("days"))?.focus()
    void run((api) => api["learning.extensions.decide"]({
      path: { extension: extension.uuid },
      payload: {
        requestUuid: requestUuid(), expectedRevision: extension.revision, decision, comment: fieldValue(id("comment")),
        ...(decision === "approve" && raw !== "" ? { days } : {})
      }
    }))
  }
  return (
    <div className="stack">
      <label htmlFor={id("days")}>{t("teaching.extensions.days")}</label>
      <input id={id("days")} type="number" min={1} max={365} step={1} inputMode="numeric" aria-describedby={id("days-hint")} />
      <p id={id("days-hint")} className="hint">{t("teaching.extensions.daysHint")}</p>
      <label htmlFor={id("comment")}>{t("teaching.extensions.comment")}</label>
      <textarea id={id("comment")} rows={2} maxLength={2000} />
      <p className="row__actions">
        <button type="button" className="button" disabled={!hydrated || busy} onClick={() => decide("approve")}>
          {t("teaching.extensions.approve")}<span className="visually-hidden">: {extension.learner}</span>
        </button>
        <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide("deny")}>
          {t("teaching.extensions.deny")}<span className="visually-hidden">: {extension.learner}</span>
        </button>
      </p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}

/** The course's extension requests: who asks for how long and why; pending ones approved or denied here. */
export default function TeachingExtensionsPage({ data, texts }: PageProps<"teachingExtensions">) {
  const { t } = texts
  const course = data.course
  return (
    <div>
      <TeachingHeader course={course} texts={texts} current="extensions">{t("teaching.extensions.title")}: {course.courseTitle}</TeachingHeader>
      <StatusFilter texts={texts} path={`/teaching/${course.courseUuid}/extensions`} statuses={["requested", "approved", "denied", "expired"]}
        current={data.status} prefix="learning.extensionStatus" label={t("teaching.extensions.filter")} />
      {data.items.length === 0 ? <p>{t("teaching.extensions.none")}</p> : (
        <ul className="rows extension-requests">
          {data.items.map((extension) => (
            <li key={extension.uuid} className="row row--stacked" data-uuid={extension.uuid}>
              <h2 className="row__title">{extension.learner} · {extension.stepTitle ?? t("learning.extension.wholeRun")}</h2>
              <p className="card__meta">
                <span className="tag extension-status">{labelOf(texts, "learning.extensionStatus", extension.status)}</span>
                {extension.autoApproved ? <span>{t("teaching.extensions.auto")}</span> : null}
              </p>
              <p>{t("learning.extension.dates", { from: texts.date(extension.originalDueAt), to: texts.date(extension.requestedDueAt) })}</p>
              {extension.grantedDueAt === undefined ? null : <p>{t("learning.extension.granted", { date: texts.date(extension.grantedDueAt) })}</p>}
              <blockquote className="reply">{extension.reason}</blockquote>
              {extension.comment === "" ? null : <p>{t("learning.feedback")} {extension.comment}</p>}
              {extension.status === "requested" ? <Decide extension={extension} texts={texts} /> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
