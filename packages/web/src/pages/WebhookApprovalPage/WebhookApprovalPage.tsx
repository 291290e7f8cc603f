import { useState } from "react"
import { href } from "../../components/Layout.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"webhookApproval">, "texts">) => texts.t("webhookApproval.title")

const states = new Set(["prepared", "awaiting_test", "active", "paused", "disabled"])

/**
 * The owner approves a webhook's exact URL (`webhooks.approve`, same origin only, at the revision
 * shown): the URL first, the button right below it. Opening the page approves nothing.
 */
export default function WebhookApprovalPage({ data, texts }: PageProps<"webhookApproval">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [endpoint, setEndpoint] = useState(data.endpoint)
  const approve = () =>
    void run(
      (api) => api["webhooks.approve"]({ path: { uuid: endpoint.uuid }, payload: { url: endpoint.url, expectedRevision: endpoint.revision } }),
      (answer) => setEndpoint({ ...endpoint, revision: answer.endpoint.revision, state: answer.endpoint.state, approved: answer.endpoint.approvedAt !== undefined })
    )
  const stateKey = (states.has(endpoint.state) ? `webhookApproval.state.${endpoint.state}` : "webhookApproval.state.prepared") as MessageKey
  return (
    <div className="narrow-wide">
      <h1>{t("webhookApproval.title")}</h1>
      <p className="lead">{t("webhookApproval.explain")}</p>
      <section className="panel" aria-labelledby="url-heading">
        <h2 id="url-heading">{t("webhookApproval.url")}</h2>
        <p><code id="webhook-url" className="wrap">{endpoint.url}</code></p>
        {endpoint.approved
          ? <p id="approved">{t("webhookApproval.approved")} <a href={href(`/settings/webhooks/${endpoint.uuid}`, language)}>{t("hooks.backToWebhook")}</a></p>
          : (
            <div className="actions">
              <button type="button" id="approve" className="button" disabled={!hydrated || busy} onClick={approve}>{t("webhookApproval.approve")}</button>
            </div>
          )}
        <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </section>
      <dl className="facts">
        <div><dt>{t("webhookApproval.events")}</dt><dd>{endpoint.eventTypes.map((type, index) => <span key={type}>{index === 0 ? "" : ", "}<code>{type}</code></span>)}</dd></div>
        <div><dt>{t("webhookApproval.payload")}</dt><dd>{t(endpoint.payloadMode === "current" ? "webhookApproval.current" : "webhookApproval.reference")}</dd></div>
        <div><dt>{t("webhookApproval.state")}</dt><dd id="webhook-state" data-state={endpoint.state}>{t(stateKey)}</dd></div>
      </dl>
    </div>
  )
}
