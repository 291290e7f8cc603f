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
import { Authentication } from "../kernel/Authentication.js"
import { operation } from "../kernel/Operation.js"

const RulePath = Schema.Struct({ uuid: Schema.UUID })

/** Every violation of a rule body answers `invalid_rule`, naming the path in the rule. */
const invalidInput = { "*": InvalidRule }

/**
 * Automation rules: a trigger (event type and condition), one
 * of three actions and a daily limit. Rules run in the worker on sequenced events; their
 * executions are listed per rule. All need a session or a key with the automations scopes.
 */
export const AutomationsApi = HttpApiGroup.make("automations", { topLevel: true })
  .add(
    operation("GET", "automations.list", "/api/v1/automations", {
      scopes: ["automations:read"],
      summary: "The acting profile's rules (deleted ones excluded), oldest first"
    }).middleware(Authentication).addSuccess(AutomationRuleList)
  )
  .add(
    operation("POST", "automations.create", "/api/v1/automations", {
      scopes: ["automations:write"],
      invalidInput,
      summary: "Create a rule; idempotent by requestUuid; at most 100 rules per profile"
    })
      .middleware(Authentication)
      .setPayload(RuleCreate)
      .addSuccess(AutomationRuleResult)
      .addError(wire(InvalidRule))
      .addError(wire(Forbidden))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("PATCH", "automations.update", "/api/v1/automations/:uuid", {
      scopes: ["automations:write"],
      invalidInput,
      summary: "Replace a rule at expectedRevision; pending executions of the old revision are cancelled"
    })
      .middleware(Authentication)
      .setPath(RulePath)
      .setPayload(RuleUpdate)
      .addSuccess(AutomationRuleResult)
      .addError(wire(InvalidRule))
      .addError(wire(NotFound))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("DELETE", "automations.delete", "/api/v1/automations/:uuid", {
      scopes: ["automations:write"],
      invalidInput,
      summary: "Soft-delete a rule (body uuid equal to the path's); pending executions are cancelled, history is kept"
    })
      .middleware(Authentication)
      .setPath(RulePath)
      .setPayload(DeleteInput)
      .addSuccess(AutomationRuleResult)
      .addError(wire(InvalidRule))
      .addError(wire(NotFound))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "automations.dry_run", "/api/v1/automations/dry-run", {
      scopes: ["automations:write"],
      invalidInput,
      summary: "Evaluate a rule against a visible event (eventUuid) or a synthetic one (event): a per-node trace, no effects"
    })
      .middleware(Authentication)
      .setPayload(DryRunInput)
      .addSuccess(DryRunResult)
      .addError(wire(InvalidRule))
      .addError(wire(NotFound))
  )
  .add(
    operation("GET", "automations.executions", "/api/v1/automations/:uuid/executions", {
      scopes: ["automations:read"],
      summary: "The latest 100 executions of a rule (deleted rules too), newest first; optional requestUuid"
    })
      .middleware(Authentication)
      .setPath(RulePath)
      .setUrlParams(ExecutionsQuery)
      .addSuccess(AutomationExecutionList)
      .addError(wire(NotFound))
  )
  .add(
    operation("POST", "automations.backtest", "/api/v1/automations/backtest", {
      extension: true,
      scopes: ["automations:read"],
      invalidInput,
      summary: "Which of the latest visible events of the trigger's type (up to limit, 100 by default) a rule would have matched; no effects"
    })
      .middleware(Authentication)
      .setPayload(BacktestInput)
      .addSuccess(BacktestResult)
      .addError(wire(InvalidRule))
  )
  .annotate(OpenApi.Description, "Automation rules: a trigger, a condition, one of three actions, a daily limit")
