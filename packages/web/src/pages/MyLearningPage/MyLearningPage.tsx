import { href } from "../../components/Layout.js"
import { labelOf, Progress } from "../../components/learning.js"
import { jobPath } from "../../components/courseAdmin.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

/** The learner's data of one enrollment as a JSON file (learning.exports.enrollment): a job followed on its page. */
const ExportData = ({ enrollment, course, texts }: { readonly enrollment: string; readonly course: string; readonly texts: PageProps<"myLearning">["texts"] }) => {
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  return (
    <>
      <button type="button" className="button button--secondary button--small" disabled={!hydrated || busy}
        onClick={() => void run((api) => api["learning.exports.enrollment"]({ path: { enrollment }, payload: { requestUuid: requestUuid(), format: "json" } }),
          (job) => location.assign(href(jobPath(job.uuid), texts.language)))}>
        {texts.t("authmore.enrollmentExport")}<span className="visually-hidden">: {course}</span>
      </button>
      {message === undefined ? null : <span role="status" className="status">{texts.t(message)}</span>}
    </>
  )
}

export const title = ({ texts }: Pick<PageProps<"myLearning">, "texts">) => texts.t("learning.mine.title")

/** The learner's enrollments: each course's status, progress and the next step with its due date. */
export default function MyLearningPage({ data, texts }: PageProps<"myLearning">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("learning.mine.title")}</h1>
      {data.items.length === 0 ? (
        <p>{t("learning.mine.none")} <a href={href("/courses", language)}>{t("learning.courses.find")}</a></p>
      ) : (
        <ul className="rows">
          {data.items.map((item) => (
            <li key={item.enrollmentUuid} className="row row--stacked" data-uuid={item.enrollmentUuid}>
              <h2 className="row__title"><a href={href(`/learning/${item.enrollmentUuid}`, language)}>{item.courseTitle === "" ? t("learning.course") : item.courseTitle}</a></h2>
              <p className="card__meta">
                <span className="tag">{labelOf(texts, "learning.enrollmentStatus", item.status)}</span>
                <span>{t("learning.stepsDone", { done: item.completedSteps, total: item.totalSteps })}</span>
              </p>
              <Progress texts={texts} percent={item.percent} label={t("learning.progressOf", { course: item.courseTitle })} />
              {item.completedAt === undefined ? null : <p className="notice">{t("learning.completedOn", { date: texts.date(item.completedAt) })}</p>}
              {item.next === undefined ? null : (
                <p>
                  {t("learning.next")}{" "}
                  <a href={href(`/learning/${item.enrollmentUuid}`, language, { step: item.next.nodeKey })}>{item.next.title}</a>
                  {item.next.dueAt === undefined ? null : <> · {t("learning.dueOn", { date: texts.date(item.next.dueAt) })}</>}
                </p>
              )}
              <p className="row__actions">
                <a href={href(`/learning/${item.enrollmentUuid}/calendar`, language)}>{t("learning.calendar")}</a>
                <a href={href(`/courses/${item.courseUuid}`, language)}>{t("learning.coursePage")}</a>
                <ExportData enrollment={item.enrollmentUuid} course={item.courseTitle} texts={texts} />
              </p>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
