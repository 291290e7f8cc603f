import { href } from "../../components/Layout.js"
import { labelOf, points } from "../../components/learning.js"
import { fieldValue, may, StatusFilter, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { TeachingAppealView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingAppeals">, "data" | "texts">) => `${texts.t("teaching.appeals.title")} · ${data.course.courseTitle}`

type Texts = PageProps<"teachingAppeals">["texts"]

/** The decision on one appeal: keep the grade, adjust the points, replace it by one of the options the API offers, or regrade. */
const Resolve = ({ appeal, texts }: { readonly appeal: TeachingAppealView; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const id = (name: string) => `${name}-${appeal.uuid}`
  const decide = () => {
    const outcome = (document.querySelector<HTMLInputElement>(`input[name="${id("outcome")}"]:checked`)?.value ?? "") as "uphold" | "adjust" | "replace" | "regrade" | ""
    if (outcome === "") return document.querySelector<HTMLInputElement>(`input[name="${id("outcome")}"]`)?.focus()
    const raw = fieldValue(id("points"))
    const value = Number(raw)
    if (outcome === "adjust" && (raw === "" || !Number.isFinite(value) || value < 0)) return document.getElementById(id("points"))?.focus()
    const replacementKey = document.querySelector<HTMLInputElement>(`input[name="${id("replacement")}"]:checked`)?.value
    if (outcome === "replace" && replacementKey === undefined) return document.querySelector<HTMLInputElement>(`input[name="${id("replacement")}"]`)?.focus()
    void run((api) => api["learning.appeals.decide"]({
      path: { appeal: appeal.uuid },
      payload: {
        requestUuid: requestUuid(), expectedRevision: appeal.revision, outcome, comment: fieldValue(id("comment")),
        ...(outcome === "adjust" ? { points: value } : {}), ...(outcome === "replace" && replacementKey !== undefined ? { replacementKey } : {})
      }
    }))
  }
  const outcomes = ["uphold", "adjust", ...(appeal.options.length > 0 ? ["replace" as const] : []), "regrade"] as const
  return (
    <fieldset className="stack appeal-decision">
      <legend>{t("teaching.appeals.decide")}<span className="visually-hidden">: {appeal.learner}, {appeal.stepTitle}</span></legend>
      {outcomes.map((outcome) => (
        <label key={outcome} className="check">
          <input type="radio" name={id("outcome")} value={outcome} />
          {labelOf(texts, "teaching.appealOutcome", outcome)}
        </label>
      ))}
      <label htmlFor={id("points")}>{t("teaching.appeals.newPoints")}</label>
      <input id={id("points")} type="number" min={0} step="any" inputMode="decimal" defaultValue={appeal.requestedPoints ?? ""} />
      {appeal.options.length === 0 ? null : (
        <fieldset>
          <legend>{t("teaching.appeals.replacements")}</legend>
          {appeal.options.map((option) => (
            <label key={option.key} className="check">
              <input type="radio" name={id("replacement")} value={option.key} />
              {/* The option's explanation is the API's English text: the page says it in its own words. */}
              <span className="check__text">{labelOf(texts, "teaching.replacement", option.kind)}: {t("teaching.pointsN", { n: points(texts, option.points) })}</span>
            </label>
          ))}
        </fieldset>
      )}
      <label htmlFor={id("comment")}>{t("teaching.appeals.comment")}</label>
      <textarea id={id("comment")} rows={2} maxLength={2000} />
      <p><button type="button" className="button" disabled={!hydrated || busy} onClick={decide}>{t("teaching.appeals.send")}</button></p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </fieldset>
  )
}

/** The course's appeals: the learner's reason and requested points, the grade appealed, and the decision with its options. */
export default function TeachingAppealsPage({ data, texts }: PageProps<"teachingAppeals">) {
  const { t, language } = texts
  const course = data.course
  const path = `/teaching/${course.courseUuid}/appeals`
  return (
    <div>
      <TeachingHeader course={course} texts={texts} current="appeals">{t("teaching.appeals.title")}: {course.courseTitle}</TeachingHeader>
      <StatusFilter texts={texts} path={path} statuses={["open", "escalated", "resolved", "closed"]} current={data.status} prefix="teaching.appealStatus" label={t("teaching.appeals.filter")} />
      {data.items.length === 0 ? <p>{t("teaching.appeals.none")}</p> : (
        <ul className="rows appeals">
          {data.items.map((appeal) => (
            <li key={appeal.uuid} className="row row--stacked" data-uuid={appeal.uuid}>
              <h2 className="row__title">{appeal.stepTitle} · {appeal.learner}</h2>
              <p className="card__meta">
                <span className="tag appeal-status">{labelOf(texts, "teaching.appealStatus", appeal.status)}</span>
                <time dateTime={appeal.createdAt}>{texts.date(appeal.createdAt)}</time>
                <a href={href(`/teaching/${course.courseUuid}/reviews/${appeal.submissionUuid}`, language)}>{t("teaching.appeals.submission")}</a>
              </p>
              <p>
                {t("teaching.appeals.grade", { n: points(texts, appeal.initialPoints) })}
                {appeal.requestedPoints === undefined ? null : <> · {t("teaching.appeals.requested", { n: points(texts, appeal.requestedPoints) })}</>}
              </p>
              <blockquote className="reply">{appeal.reason}</blockquote>
              {appeal.outcome === undefined ? null : (
                <p className="notice appeal-result">
                  {labelOf(texts, "teaching.appealOutcome", appeal.outcome)}
                  {appeal.resolvedPoints === undefined ? null : <>: {t("teaching.appeals.change", { from: points(texts, appeal.initialPoints), to: points(texts, appeal.resolvedPoints) })}</>}
                  {appeal.comment === "" ? null : <> · {appeal.comment}</>}
                </p>
              )}
              {appeal.status === "open" && may(course, "appeals_resolve") || appeal.status === "escalated" && may(course, "grades_adjust")
                ? <Resolve appeal={appeal} texts={texts} />
                : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
