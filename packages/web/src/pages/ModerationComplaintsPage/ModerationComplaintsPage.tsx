import { href } from "../../components/Layout.js"
import { ModerationTabs } from "../../components/Social.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { QueuedComplaint } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"moderationComplaints">, "texts">) => texts.t("modComplaints.title")

/** What an uphold may do to each kind of subject (packages/domain/src/complaints/ComplaintModeration.ts, actionsFor). */
const actionsFor: Readonly<Record<string, ReadonlyArray<string>>> = {
  publication: ["unpublish", "none"],
  message: ["hide_message", "none"],
  profile: ["hide_profile", "none"],
  relation: ["remove_review", "none"]
}

const subjectPath = (kind: string, uuid: string) => kind === "publication" ? `/p/${uuid}` : kind === "profile" ? `/u/${uuid}` : undefined

const Complaint = ({ item, texts }: { readonly item: QueuedComplaint; readonly texts: Texts }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, setMessage, run } = useAction()
  const field = (name: string) => document.getElementById(`${name}-${item.uuid}`) as HTMLTextAreaElement | HTMLSelectElement | null
  const decide = (decision: "uphold" | "dismiss") => {
    const reason = field("reason")?.value.trim() ?? ""
    if (reason === "") {
      setMessage("modComplaints.reasonNeeded")
      field("reason")?.focus()
      return
    }
    const action = decision === "uphold" ? field("action")?.value ?? "none" : "none"
    const review = field("review")?.value ?? ""
    void run((api) =>
      api["moderation.complaints.decide"]({
        payload: {
          requestUuid: requestUuid(), complaintUuid: item.uuid, expectedRevision: item.revision, decision, reason,
          action: action as "none", ...(action === "remove_review" && review !== "" ? { reviewUuid: review } : {})
        }
      })
    )
  }
  const path = subjectPath(item.subjectKind, item.subjectUuid)
  const subject = t(`complaints.subject.${item.subjectKind}` as MessageKey)
  const reviews = item.reviews.filter((review) => review.status === "published")
  return (
    <li className="row row--stacked" data-uuid={item.uuid}>
      <h2 className="row__title">
        {subject}{item.subjectTitle === "" ? null : <>: {path === undefined || item.subjectGone ? item.subjectTitle : <a href={href(path, language)}>{item.subjectTitle}</a>}</>}
      </h2>
      <p className="card__meta">
        <span className={item.status === "open" ? "tag" : "tag tag--muted"}>{t(`complaints.status.${item.status}` as MessageKey)}</span>
        <span>{t("complaints.filed", { date: texts.date(item.createdAt) })}</span>
        {item.otherOpen === 0 ? null : <span>{t("modComplaints.others", { n: item.otherOpen })}</span>}
        {item.subjectGone ? <span>{t("modComplaints.gone")}</span> : null}
      </p>
      {item.subjectText === "" ? null : <p className="muted quote">{item.subjectText.slice(0, 600)}</p>}
      <p><strong>{t("modComplaints.complaint")}:</strong> {item.body}</p>
      {item.decision !== undefined ? (
        <p>
          <strong>{t(`complaints.decision.${item.decision.decision}` as MessageKey)}</strong>
          {item.decision.action === "none" ? null : <> · {t(`complaints.action.${item.decision.action}` as MessageKey)}</>}
          {" · "}{t("complaints.reason")}: {item.decision.reason}
        </p>
      ) : (
        <>
          <label htmlFor={`reason-${item.uuid}`}>{t("modComplaints.reason")}</label>
          <textarea id={`reason-${item.uuid}`} rows={2} maxLength={2000} />
          <label htmlFor={`action-${item.uuid}`}>{t("modComplaints.action")}</label>
          <select id={`action-${item.uuid}`} defaultValue={actionsFor[item.subjectKind]?.[0] ?? "none"}>
            {(actionsFor[item.subjectKind] ?? ["none"]).map((action) => <option key={action} value={action}>{t(`complaints.action.${action}` as MessageKey)}</option>)}
          </select>
          {item.subjectKind !== "relation" || reviews.length === 0 ? null : (
            <>
              <label htmlFor={`review-${item.uuid}`}>{t("modComplaints.review")}</label>
              <select id={`review-${item.uuid}`}>
                {reviews.map((review) => <option key={review.uuid} value={review.uuid}>{`${"★".repeat(review.rating)} ${review.body.slice(0, 80)}`}</option>)}
              </select>
            </>
          )}
          <div className="actions">
            <button type="button" className="button" disabled={!hydrated || busy} onClick={() => decide("uphold")}>{t("modComplaints.uphold")}</button>
            <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide("dismiss")}>{t("modComplaints.dismiss")}</button>
          </div>
        </>
      )}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </li>
  )
}

/** The moderators' queue of complaints, oldest first: the subject as its author saw it, the complaint, and the decision with its reason. */
export default function ModerationComplaintsPage({ data, texts }: PageProps<"moderationComplaints">) {
  const { t, language } = texts
  if (!data.allowed) {
    return <div className="narrow"><h1>{t("modComplaints.title")}</h1><p>{t("moderation.notModerator")}</p></div>
  }
  return (
    <div>
      <h1>{t("modComplaints.title")}</h1>
      <ModerationTabs current="complaints" texts={texts} />
      <nav aria-label={t("modComplaints.filter")} className="filter">
        <ul>
          {["open", "upheld", "dismissed"].map((status) => (
            <li key={status}>
              <a href={href("/moderation/complaints", language, { status })} aria-current={status === data.status ? "page" : undefined}>
                {t(`complaints.status.${status}` as MessageKey)}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {data.items.length === 0 ? <p>{t("modComplaints.empty")}</p> : (
        <ul className="rows">{data.items.map((item) => <Complaint key={item.uuid} item={item} texts={texts} />)}</ul>
      )}
    </div>
  )
}
