import { href } from "../../components/Layout.js"
import { actionLabel, eventTypeLabel, ruleStateKey } from "../../components/rules.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"rules">, "texts">) => texts.t("rules.title")

/**
 * The acting profile's automation rules (automations.list): each with its trigger, action, state
 * and how much of its daily limit today used; a rule's own page builds, tries and watches it.
 */
export default function RulesPage({ data, texts }: PageProps<"rules">) {
  const { t, language } = texts
  return (
    <div className="narrow-wide">
      <h1>{t("rules.title")}</h1>
      <p className="lead">{t("rules.intro")}</p>
      <p><a id="new-rule" className="button" href={href("/settings/rules/new", language)}>{t("rules.new")}</a></p>
      {data.rules.length === 0
        ? <p id="no-rules" className="muted">{t("rules.none")}</p>
        : (
          <ul id="rules" className="rows">
            {data.rules.map((rule) => (
              <li key={rule.uuid} className="row row--stacked rule-row" data-uuid={rule.uuid} data-state={rule.state}>
                <p className="row__title"><a href={href(`/settings/rules/${rule.uuid}`, language)}>{rule.name}</a></p>
                <p className="card__meta">
                  <span className={rule.state === "active" ? "tag" : "tag tag--muted"}>{t(ruleStateKey(rule.state))}</span>
                  <span>{t("rules.when")} {eventTypeLabel(texts, rule.trigger.eventType)}</span>
                  <span>{t("rules.then")} {actionLabel(texts, rule.action)}</span>
                  <span>{t("rules.usedToday", { used: rule.runsToday, max: rule.limits.maxRunsPerDay })}</span>
                </p>
              </li>
            ))}
          </ul>
        )}
      <p><a href={href("/settings/integrations", language)}>{t("account.integrations")}</a> · <a href={href("/settings/events", language)}>{t("eventLog.title")}</a></p>
    </div>
  )
}
