import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { may, StatusFilter, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { ReviewQueueItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingReviews">, "data" | "texts">) => `${texts.t("teaching.reviews.title")} · ${data.course.courseTitle}`

type Texts = PageProps<"teachingReviews">["texts"]

/** One waiting review: the step, the learner, who holds it and until when; a pooled one can be claimed here, then opens in the workspace. */
const QueueRow = ({ item, course, texts, canClaim, me }: {
  readonly item: ReviewQueueItem
  readonly course: string
  readonly texts: Texts
  readonly canClaim: boolean
  readonly me: string | undefined
}) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const workspace = href(`/teaching/${course}/reviews/${item.submissionUuid}`, language)
  const claim = () =>
    void run((api) => api["learning.reviews.claim"]({ path: { submission: item.submissionUuid }, payload: { requestUuid: requestUuid() } }), () => location.assign(workspace))
  return (
    <li className="row row--stacked" data-submission={item.submissionUuid}>
      <h2 className="row__title"><a href={workspace}>{item.stepTitle}</a></h2>
      <p className="card__meta">
        <span className="tag">{labelOf(texts, "teaching.assignmentStatus", item.status)}</span>
        {item.overdue ? <span className="tag tag--warning">{t("teaching.reviews.overdue")}</span> : null}
        {item.issue === undefined ? null : <span className="tag tag--warning">{labelOf(texts, "teaching.issue", item.issue)}</span>}
        <span>{t("teaching.learnerIs", { name: item.learner })}</span>
        {item.reviewerName === undefined ? null : <span>{item.reviewerProfileUuid !== undefined && item.reviewerProfileUuid === me ? t("teaching.reviews.heldByMe") : t("teaching.reviews.heldBy", { name: item.reviewerName })}</span>}
        {item.dueAt === undefined ? null : <span>{t("teaching.reviews.dueAt", { date: texts.date(item.dueAt) })}</span>}
      </p>
      {item.status === "pooled" && item.kind === "staff" && canClaim ? (
        <p className="row__actions">
          <button type="button" className="button button--small" disabled={!hydrated || busy} onClick={claim}>
            {t("teaching.reviews.claim")}<span className="visually-hidden">: {item.stepTitle}, {item.learner}</span>
          </button>
          <span role="status" className="status">{message === undefined ? "" : t(message)}</span>
        </p>
      ) : null}
    </li>
  )
}

/** The review queue: pooled, claimed, overdue and flagged reviews of the course in the caller's scope. */
export default function TeachingReviewsPage({ data, texts, state }: PageProps<"teachingReviews">) {
  const { t, language } = texts
  const path = `/teaching/${data.course.courseUuid}/reviews`
  const canClaim = may(data.course, "review")
  return (
    <div>
      <TeachingHeader course={data.course} texts={texts} current="reviews">{t("teaching.reviews.title")}: {data.course.courseTitle}</TeachingHeader>
      <StatusFilter texts={texts} path={path} statuses={["pooled", "claimed", "overdue", "issue"]} current={data.status === "mine" ? "" : data.status}
        prefix="teaching.queueFilter" label={t("teaching.reviews.filter")} />
      <p><a href={href(path, language, { status: "claimed", mine: "true" })} aria-current={data.status === "mine" ? "page" : undefined}>{t("teaching.reviews.mine")}</a></p>
      {data.items.length === 0 ? <p>{t("teaching.reviews.none")}</p> : (
        <ul className="rows review-queue">
          {data.items.map((item) => <QueueRow key={item.uuid} item={item} course={data.course.courseUuid} texts={texts} canClaim={canClaim} me={state.session?.profileUuid} />)}
        </ul>
      )}
      {data.nextCursor === undefined ? null : (
        <p className="pager"><a href={href(path, language, { ...(data.status === "" || data.status === "mine" ? {} : { status: data.status }), cursor: data.nextCursor })}>{t("teaching.more")}</a></p>
      )}
    </div>
  )
}
