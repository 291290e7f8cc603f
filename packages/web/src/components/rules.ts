import type { MessageKey, Texts } from "../i18n.js"
import type { RuleActionView } from "../model.js"

// What the automation rule pages (pages/RulesPage, pages/RulePage) say of rules alike.

/** An event type as this application names it (`event.<type>`, as the event log says it), else the type itself. */
export const eventTypeLabel = (texts: Texts, type: string) => {
  const key = `event.${type}` as MessageKey
  const said = texts.t(key)
  return said === key ? type : said
}

const states = new Set(["active", "disabled", "suspended", "paused", "deleted"])

/** A rule's state in words (AutomationRule's `state` in packages/domain/src/automations/Rule.ts). */
export const ruleStateKey = (state: string): MessageKey => (states.has(state) ? `rules.state.${state}` : "rules.state.disabled") as MessageKey

/** The action in a few words. */
export const actionLabel = (texts: Texts, action: RuleActionView) => {
  switch (action.type) {
    case "notification.create":
      return texts.t("rules.action.notification")
    case "webhook.deliver":
      return texts.t("rules.action.webhook")
    case "command.execute":
      return `${texts.t("rules.action.command")} (${action.operationId})`
  }
}

const executionStatuses = new Set(["pending", "running", "succeeded", "failed", "cancelled", "skipped_limit", "skipped_chain"])

/** An execution's status in words (ExecutionStatus in packages/domain/src/automations/Rule.ts). */
export const executionStatusKey = (status: string): MessageKey =>
  (executionStatuses.has(status) ? `rules.execution.${status}` : "rules.execution.pending") as MessageKey
