import { href } from "../../components/Layout.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"complaints">, "texts">) => texts.t("complaints.title")

/** Where a complaint's subject is, when it has a page of its own. */
const subjectPath = (kind: string, uuid: string) => kind === "publication" ? `/p/${uuid}` : kind === "profile" ? `/u/${uuid}` : undefined

/** The person's complaints, newest first: what about, what they wrote, the status and the moderator's decision with its reason. */
export default function ComplaintsPage({ data, texts }: PageProps<"complaints">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("complaints.title")}</h1>
      <p className="lead">{t("complaints.lead")}</p>
      {data.items.length === 0 ? <p>{t("complaints.none")}</p> : (
        <ul className="rows">
          {data.items.map((item) => {
            const path = subjectPath(item.subjectKind, item.subjectUuid)
            const subject = t(`complaints.subject.${item.subjectKind}` as MessageKey)
            return (
              <li key={item.uuid} className="row row--stacked" data-uuid={item.uuid}>
                <h2 className="row__title">
                  {item.subjectTitle === undefined || path === undefined
                    ? subject
                    : <>{subject}: <a href={href(path, language)}>{item.subjectTitle}</a></>}
                </h2>
                <p className="card__meta">
                  <span className={item.status === "open" ? "tag" : "tag tag--muted"}>{t(`complaints.status.${item.status}` as MessageKey)}</span>
                  <span>{t("complaints.filed", { date: texts.date(item.createdAt) })}</span>
                </p>
                <p className="quote">{item.body}</p>
                {item.decision === undefined ? null : (
                  <div className="decision">
                    <p>
                      <strong>{t(`complaints.decision.${item.decision.decision}` as MessageKey)}</strong>
                      {item.decision.action === "none" ? null : <> · {t(`complaints.action.${item.decision.action}` as MessageKey)}</>}
                      <span className="muted"> · {texts.date(item.decision.decidedAt)}</span>
                    </p>
                    <p>{t("complaints.reason")}: {item.decision.reason}</p>
                  </div>
                )}
              </li>
            )
          })}
        </ul>
      )}
    </div>
  )
}
