import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"
import { scopeSentence } from "../IntegrationsPage/keyPresets.js"

export const title = ({ texts }: Pick<PageProps<"agents">, "texts">) => texts.t("oauth.agents.title")

/**
 * The agents the person connected by signing in (MCP authorization), beside their keys: who, as
 * which profile, with which scopes, when last used; disconnecting one stops its tokens at once
 * (`agents.revoke`), and what it prepared or started stops with it.
 */
export default function AgentsPage({ data, texts }: PageProps<"agents">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  return (
    <div className="oauth-agents">
      <h1>{t("oauth.agents.title")}</h1>
      <p className="lead">{t("oauth.agents.explain")}</p>
      {data.items.length === 0
        ? <p id="oauth-agents-empty">{t("oauth.agents.none")}</p>
        : (
          <ul className="oauth-agent-list" id="oauth-agents">
            {data.items.map((agent) => (
              <li key={agent.uuid} className="panel" data-agent={agent.uuid}>
                <h2>{agent.client.name}</h2>
                <dl className="facts facts--inline">
                  <div><dt>{t("oauth.agents.profile")}</dt><dd>{agent.profile.name}</dd></div>
                  <div><dt>{t("oauth.agents.connected")}</dt><dd><LocalTime value={agent.connectedAt} texts={texts} /></dd></div>
                  <div>
                    <dt>{t("oauth.agents.lastUsed")}</dt>
                    <dd>{agent.lastUsedAt === undefined ? t("oauth.agents.never") : <LocalTime value={agent.lastUsedAt} texts={texts} />}</dd>
                  </div>
                  {agent.revokedAt === undefined ? null : (
                    <div><dt>{t("oauth.agents.disconnected")}</dt><dd className="agent-revoked"><LocalTime value={agent.revokedAt} texts={texts} /></dd></div>
                  )}
                </dl>
                <details>
                  <summary>{t("oauth.agents.scopes", { count: agent.scopes.length })}</summary>
                  <ul>{agent.scopes.map((scope) => <li key={scope}>{scopeSentence(texts, scope)}</li>)}</ul>
                </details>
                {agent.revokedAt !== undefined ? null : (
                  <button
                    type="button"
                    className="button button--secondary"
                    data-disconnect={agent.uuid}
                    disabled={!hydrated || busy}
                    aria-label={t("oauth.agents.disconnectNamed", { client: agent.client.name })}
                    onClick={() => void run((api) => api["agents.revoke"]({ path: { uuid: agent.uuid } }))}
                  >
                    {t("oauth.agents.disconnect")}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      <p><a href={href("/settings/integrations", language)}>{t("oauth.agents.toKeys")}</a></p>
    </div>
  )
}
