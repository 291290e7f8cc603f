import { ModerationTabs } from "../../components/Social.js"
import { kindLabel } from "../../components/format.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"moderation">, "texts">) => texts.t("moderation.title")

/** The moderators' queue: each pending publication with approve, return or reject and a reason for its owner. */
export default function ModerationPage({ data, texts }: PageProps<"moderation">) {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  if (!data.allowed) {
    return <div className="narrow"><h1>{t("moderation.title")}</h1><p>{t("moderation.notModerator")}</p></div>
  }
  const decide = (uuid: string, revision: number, decision: "approve" | "return" | "reject") => {
    const reason = (document.getElementById(`reason-${uuid}`) as HTMLTextAreaElement | null)?.value.trim() ?? ""
    void run((api) =>
      api["moderation.decide"]({
        payload: { requestUuid: requestUuid(), publicationUuid: uuid, expectedRevision: revision, decision, ...(reason === "" ? {} : { reason }) }
      })
    )
  }
  return (
    <div>
      <h1>{t("moderation.title")}</h1>
      <ModerationTabs current="publications" texts={texts} />
      {data.items.length === 0 ? <p>{t("moderation.empty")}</p> : (
        <ul className="rows">
          {data.items.map((item) => (
            <li key={item.uuid} className="row row--stacked" data-uuid={item.uuid}>
              <h2 className="row__title">{item.title}</h2>
              <p className="card__meta">
                <span className="tag">{kindLabel(texts, item.kind)}</span>
                <span>{t("moderation.by", { name: item.ownerName })}</span>
                <span>{t("moderation.submitted", { date: texts.date(item.submittedAt) })}</span>
              </p>
              <p className="description">{item.description}</p>
              {item.pictures.length === 0 ? null : (
                <ul className="thumbs" aria-label={t("task.pictures")}>
                  {item.pictures.map((picture, index) => (
                    <li key={index}><figure><img src={picture.src} alt={picture.caption} width={160} height={100} /><figcaption>{picture.caption}</figcaption></figure></li>
                  ))}
                </ul>
              )}
              <label htmlFor={`reason-${item.uuid}`}>{t("moderation.reason")}</label>
              <textarea id={`reason-${item.uuid}`} rows={2} maxLength={2000} />
              <div className="actions">
                <button type="button" className="button" disabled={!hydrated || busy} onClick={() => decide(item.uuid, item.revision, "approve")}>
                  {t("moderation.approve")}
                </button>
                <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide(item.uuid, item.revision, "return")}>
                  {t("moderation.return")}
                </button>
                <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide(item.uuid, item.revision, "reject")}>
                  {t("moderation.reject")}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}
