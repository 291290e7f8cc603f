import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { keyNameOf, operationSummary } from "../../components/format.js"
import type { PageProps } from "../types.js"
import { recordLine } from "../ApprovalPage/approvalView.js"

export const title = ({ texts }: Pick<PageProps<"approvals">, "texts">) => texts.t("approvals.title")

/** The account's prepared commands waiting for its decision, soonest expiry first; none is a calm state, not an error. */
export default function ApprovalsPage({ data, texts }: PageProps<"approvals">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("approvals.title")}</h1>
      {data.items.length === 0
        ? <p id="empty" className="muted">{t("approvals.none")}</p>
        : (
          <ul id="pending" className="rows">
            {data.items.map((command) => {
              const record = recordLine(texts, command)
              return (
                <li key={command.uuid} className="row row--stacked" data-uuid={command.uuid}>
                  <p className="row__title">
                    <a href={href(`/approvals/${command.uuid}`, language)}>{operationSummary(texts, command.operationId, command.summary)}</a>
                    {record === undefined ? null : <span className="record"> — {record.heading === "" ? "" : `${record.heading} `}«{record.title}»</span>}
                  </p>
                  <p className="card__meta">
                    <span>{t("approvals.key", { name: keyNameOf(texts, command.key.name) })}</span>
                    <span>{t("approval.expires")}: <LocalTime value={command.expiresAt} texts={texts} relative /></span>
                  </p>
                </li>
              )
            })}
          </ul>
        )}
      <p><a href={href("/settings/integrations", language)}>{t("account.integrations")}</a></p>
    </div>
  )
}
