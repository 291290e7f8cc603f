import { AutomationsApi } from "./AutomationsApi.js"
import { implement } from "../operations/Implementation.js"
import { backtest, createRule, deleteRule, dryRun, listExecutions, listRules, updateRule } from "./Automations.js"

/** The automation operations over the automations area's commands. */
export const AutomationsOperations = implement(AutomationsApi)({
  "automations.list": (_, actor) => listRules(actor),
  "automations.create": ({ payload }, actor) => createRule(actor, payload),
  "automations.update": ({ path, payload }, actor) => updateRule(actor, path.uuid, payload),
  "automations.delete": ({ path, payload }, actor) => deleteRule(actor, path.uuid, payload),
  "automations.dry_run": ({ payload }, actor) => dryRun(actor, payload),
  "automations.executions": ({ path, urlParams }, actor) => listExecutions(actor, path.uuid, urlParams),
  "automations.backtest": ({ payload }, actor) => backtest(actor, payload)
})
