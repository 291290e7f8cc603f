import { useState } from "react"
import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"
import { groupLabel, scopeGroups, scopeSentence } from "../IntegrationsPage/keyPresets.js"

export const title = ({ texts }: Pick<PageProps<"oauthConsent">, "texts">) => texts.t("oauth.consent.title")

/**
 * An agent asks to act for the signed-in person (MCP authorization): which client, for which
 * profile, with which scopes in words (grouped as the key presets are), and where the answer goes.
 * The decision is the API's (`oauthRequests.decide`, same origin only); opening the page decides
 * nothing. Allowing or denying sends the browser back to the agent.
 */
export default function OAuthConsentPage({ data, texts }: PageProps<"oauthConsent">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [leaving, setLeaving] = useState(false)
  const request = data.request
  const decide = (decision: "allow" | "deny") =>
    void run(
      (api) => api["oauthRequests.decide"]({ path: { uuid: request.uuid }, payload: { decision } }),
      (answer) => {
        setLeaving(true)
        location.assign(answer.redirectUrl)
      }
    )
  const stateKey = `oauth.consent.state.${request.state}` as MessageKey
  return (
    <div className="oauth-consent">
      <h1>{t("oauth.consent.heading", { client: request.client.name })}</h1>
      <p className="lead">{t("oauth.consent.explain", { client: request.client.name, profile: request.profile.name })}</p>
      <section className="panel" aria-labelledby="oauth-who">
        <h2 id="oauth-who">{t("oauth.consent.who")}</h2>
        <dl className="facts">
          <div><dt>{t("oauth.consent.client")}</dt><dd id="oauth-client-name">{request.client.name}</dd></div>
          <div>
            <dt>{t("oauth.consent.clientId")}</dt>
            <dd><code className="wrap" id="oauth-client-id">{request.client.clientId}</code></dd>
          </div>
          <div>
            <dt>{t("oauth.consent.identity")}</dt>
            <dd id="oauth-client-kind">{t(request.client.kind === "registered" ? "oauth.consent.registered" : "oauth.consent.metadataDocument")}</dd>
          </div>
          <div><dt>{t("oauth.consent.returnsTo")}</dt><dd><code className="wrap" id="oauth-redirect">{request.redirectOrigin}</code></dd></div>
          <div><dt>{t("oauth.consent.profile")}</dt><dd id="oauth-profile">{request.profile.name}</dd></div>
          <div><dt>{t("oauth.consent.account")}</dt><dd id="oauth-account">{data.email}</dd></div>
          <div><dt>{t("oauth.consent.expires")}</dt><dd><LocalTime value={request.expiresAt} texts={texts} relative={request.state === "pending"} id="oauth-expires" /></dd></div>
        </dl>
      </section>
      <section className="panel" aria-labelledby="oauth-scopes">
        <h2 id="oauth-scopes">{t("oauth.consent.scopes")}</h2>
        {scopeGroups(request.scopes).map((group) => (
          <div key={group.id} className="oauth-scope-group">
            <h3>{groupLabel(texts, group.id)}</h3>
            <ul>
              {group.scopes.map((scope) => <li key={scope} data-scope={scope}>{scopeSentence(texts, scope)}</li>)}
            </ul>
          </div>
        ))}
        <p className="muted">{t("oauth.consent.approvals")}</p>
      </section>
      {request.state === "pending" && !leaving
        ? (
          <div className="actions">
            <button type="button" id="oauth-allow" className="button" disabled={!hydrated || busy} onClick={() => decide("allow")}>{t("oauth.consent.allow")}</button>
            <button type="button" id="oauth-deny" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide("deny")}>{t("oauth.consent.deny")}</button>
          </div>
        )
        : <p id="oauth-state">{t(leaving ? "oauth.consent.returning" : stateKey)}</p>}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      <p><a href={href("/settings/agents", language)}>{t("oauth.consent.toAgents")}</a></p>
    </div>
  )
}
