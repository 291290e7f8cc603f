import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidRule } from "./AutomationErrors.js"
import {
  AutomationExecutionList,
  AutomationRuleList,
  AutomationRuleResult,
  BacktestInput,
  BacktestResult,
  DeleteInput,
  DryRunInput,
  DryRunResult,
  ExecutionsQuery,
  RuleCreate,
  RuleUpdate
} from "./Rule.js"
import { Forbidden, NotFound, RequestConflict, RevisionConflict, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"

const RulePath = Schema.Struct({ uuid: Schema.UUID })

/** Every violation of a rule body answers `invalid_rule`, naming the path in the rule. */
const invalidInput = { "*": InvalidRule }

const read = ["automations:read"]
const write = ["automations:write"]

/**
 * Automation rules: a trigger (event type and condition), one
 * of three actions and a daily limit. Rules run in the worker on sequenced events; their
 * executions are listed per rule. All need a session or a key with the automations scopes.
 */
export const AutomationsApi = HttpApiGroup.make("automations", { topLevel: true })
  .add(
    authenticated("GET", "automations.list", "/api/v1/automations", {
      scopes: read,
      summary: "The acting profile's rules (deleted ones excluded), oldest first"
    }).addSuccess(AutomationRuleList)
  )
  .add(
    authenticated("POST", "automations.create", "/api/v1/automations", {
      scopes: write,
      invalidInput,
      summary: "Create a rule; idempotent by requestUuid; at most 100 rules per profile"
    }, [wire(InvalidRule), wire(Forbidden), wire(RequestConflict)]).setPayload(RuleCreate).addSuccess(AutomationRuleResult)
  )
  .add(
    authenticated("PATCH", "automations.update", "/api/v1/automations/:uuid", {
      scopes: write,
      invalidInput,
      summary: "Replace a rule at expectedRevision; pending executions of the old revision are cancelled"
    }, [wire(InvalidRule), wire(NotFound), wire(RevisionConflict), wire(RequestConflict)])
      .setPath(RulePath)
      .setPayload(RuleUpdate)
      .addSuccess(AutomationRuleResult)
  )
  .add(
    authenticated("DELETE", "automations.delete", "/api/v1/automations/:uuid", {
      scopes: write,
      invalidInput,
      summary: "Soft-delete a rule (body uuid equal to the path's); pending executions are cancelled, history is kept"
    }, [wire(InvalidRule), wire(NotFound), wire(RequestConflict)])
      .setPath(RulePath)
      .setPayload(DeleteInput)
      .addSuccess(AutomationRuleResult)
  )
  .add(
    authenticated("POST", "automations.dry_run", "/api/v1/automations/dry-run", {
      scopes: write,
      invalidInput,
      summary: "Evaluate a rule against a visible event (eventUuid) or a synthetic one (event): a per-node trace, no effects"
    }, [wire(InvalidRule), wire(NotFound)]).setPayload(DryRunInput).addSuccess(DryRunResult)
  )
  .add(
    authenticated("GET", "automations.executions", "/api/v1/automations/:uuid/executions", {
      scopes: read,
      summary: "The latest 100 executions of a rule (deleted rules too), newest first; optional requestUuid"
    }, [wire(NotFound)])
      .setPath(RulePath)
      .setUrlParams(ExecutionsQuery)
      .addSuccess(AutomationExecutionList)
  )
  .add(
    authenticated("POST", "automations.backtest", "/api/v1/automations/backtest", {
      extension: true,
      scopes: read,
      invalidInput,
      summary: "Which of the latest visible events of the trigger's type (up to limit, 100 by default) a rule would have matched; no effects"
    }, [wire(InvalidRule)]).setPayload(BacktestInput).addSuccess(BacktestResult)
  )
  .annotate(OpenApi.Description, "Automation rules: a trigger, a condition, one of three actions, a daily limit")
