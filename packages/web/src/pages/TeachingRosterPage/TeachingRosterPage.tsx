import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { fieldValue, may, StatusFilter, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { RosterItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingRoster">, "data" | "texts">) => `${texts.t("teaching.roster.title")} · ${data.course.courseTitle}`

type Texts = PageProps<"teachingRoster">["texts"]

/** The decision on a request to join: approve, waitlist (a request only) or reject, with a reason. */
const Decide = ({ item, texts }: { readonly item: RosterItem; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const reasonId = `reason-${item.uuid}`
  const decide = (decision: "approve" | "reject" | "waitlist") => {
    const reason = fieldValue(reasonId)
    void run((api) => api["learning.enrollments.decide"]({
      path: { enrollment: item.uuid },
      payload: { requestUuid: requestUuid(), expectedRevision: item.revision, decision, ...(reason === "" ? {} : { reason }) }
    }))
  }
  return (
    <div className="stack">
      <label htmlFor={reasonId}>{t("teaching.roster.reason")}</label>
      <textarea id={reasonId} rows={2} maxLength={1000} />
      <p className="row__actions">
        <button type="button" className="button" disabled={!hydrated || busy} onClick={() => decide("approve")}>
          {t("teaching.roster.approve")}<span className="visually-hidden">: {item.learner}</span>
        </button>
        {item.status === "requested" ? (
          <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide("waitlist")}>
            {t("teaching.roster.waitlist")}<span className="visually-hidden">: {item.learner}</span>
          </button>
        ) : null}
        <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide("reject")}>
          {t("teaching.roster.reject")}<span className="visually-hidden">: {item.learner}</span>
        </button>
      </p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}

/** The course's learners: status, run, progress; requests to join with their answers and the decision on them. */
export default function TeachingRosterPage({ data, texts }: PageProps<"teachingRoster">) {
  const { t } = texts
  const course = data.course
  const decides = may(course, "roster_manage")
  return (
    <div>
      <TeachingHeader course={course} texts={texts} current="roster">{t("teaching.roster.title")}: {course.courseTitle}</TeachingHeader>
      {decides ? <p><a href={href(`/teaching/${course.courseUuid}/groups`, texts.language)}>{t("authmore.groups.link")}</a></p> : null}
      <StatusFilter texts={texts} path={`/teaching/${course.courseUuid}/roster`} statuses={["requested", "waitlisted", "active", "paused", "completed", "withdrawn"]}
        current={data.status} prefix="learning.enrollmentStatus" label={t("teaching.roster.filter")} />
      {data.items.length === 0 ? <p>{t("teaching.roster.none")}</p> : (
        <ul className="rows roster">
          {data.items.map((item) => (
            <li key={item.uuid} className="row row--stacked" data-uuid={item.uuid}>
              <h2 className="row__title">{item.learner}</h2>
              <p className="card__meta">
                <span className="tag enrollment-status">{labelOf(texts, "learning.enrollmentStatus", item.status)}</span>
                {item.runTitle === "" ? null : <span>{item.runTitle}</span>}
                {item.completedSteps === undefined || item.totalSteps === undefined ? null : <span>{t("learning.stepsDone", { done: item.completedSteps, total: item.totalSteps })}</span>}
                {item.waitlistPosition === undefined ? null : <span>{t("teaching.roster.position", { n: item.waitlistPosition })}</span>}
              </p>
              {item.application === undefined || item.application.length === 0 ? null : (
                <dl className="facts">
                  {item.application.map((entry) => <div key={entry.question}><dt>{entry.question}</dt><dd>{entry.answer}</dd></div>)}
                </dl>
              )}
              {decides && (item.status === "requested" || item.status === "waitlisted") ? <Decide item={item} texts={texts} /> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
