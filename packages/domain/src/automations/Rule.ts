import { Schema } from "effect"
import { AnyJson, DateTime, maxChars, minChars, RequestUuid, strict } from "../kernel/Common.js"
import { EventType } from "../events/EventType.js"

/** The spec's bounds of automation rules (Limits). */
export const automationLimits = {
  rulesPerProfile: 100,
  nameMin: 1,
  nameMax: 160,
  maxRunsPerDayMin: 1,
  maxRunsPerDayMax: 1000,
  conditionDepth: 6,
  groupItemsMin: 1,
  groupItemsMax: 10,
  arrayValuesMin: 1,
  arrayValuesMax: 30,
  executionsReturned: 100,
  titleMin: 3,
  titleMax: 160,
  /** Ours: an event caused by an automation at this depth or deeper triggers nothing. */
  chainDepth: 2,
  /** Ours: executions running at once for one profile. */
  runningPerProfile: 4,
  /** Ours: a rule pauses itself after this many failures in a row. */
  failuresBeforePause: 20
} as const

/** The fields a condition leaf may test (spec). `aggregate.revision` is the one number. */
export const conditionFields = ["type", "aggregate.kind", "aggregate.uuid", "aggregate.revision", "data.status", "data.objectUuid"] as const
export type ConditionField = (typeof conditionFields)[number]
export const ConditionField = Schema.Literal(...conditionFields).annotations({ message: () => `expected one of ${conditionFields.join(", ")}` })

export const conditionOps = ["exists", "eq", "in", "contains", "gte", "lte"] as const
export type ConditionOp = (typeof conditionOps)[number]
export const ConditionOp = Schema.Literal(...conditionOps).annotations({ message: () => `expected one of ${conditionOps.join(", ")}` })

const FiniteNumber = Schema.Number.pipe(Schema.finite())

/** A leaf's value: a string, a number, a boolean, or an array of 1 to 30 strings or numbers (spec). */
export const ConditionValue = Schema.Union(
  Schema.String,
  FiniteNumber,
  Schema.Boolean,
  Schema.Array(Schema.Union(Schema.String, FiniteNumber)).pipe(
    Schema.minItems(automationLimits.arrayValuesMin),
    Schema.maxItems(automationLimits.arrayValuesMax)
  )
)
export type ConditionValue = typeof ConditionValue.Type

/** A condition node: a group (`all` and/or `any`) or a leaf (`field`, `op`, `value`); checked further in Condition.ts. */
export interface Condition {
  readonly all?: ReadonlyArray<Condition> | undefined
  readonly any?: ReadonlyArray<Condition> | undefined
  readonly field?: ConditionField | undefined
  readonly op?: ConditionOp | undefined
  readonly value?: ConditionValue | undefined
}

const Items = Schema.Array(Schema.suspend((): Schema.Schema<Condition> => Condition)).pipe(
  Schema.minItems(automationLimits.groupItemsMin),
  Schema.maxItems(automationLimits.groupItemsMax)
)

export const Condition: Schema.Schema<Condition> = Schema.Struct({
  all: Schema.optional(Items),
  any: Schema.optional(Items),
  field: Schema.optional(ConditionField),
  op: Schema.optional(ConditionOp),
  value: Schema.optional(ConditionValue)
}).annotations({
  identifier: "AutomationCondition",
  description: "A group (all and/or any, 1 to 10 conditions each) or a leaf (field, op, value); nesting depth at most 6",
  ...strict
})

export const RuleName = Schema.String.pipe(minChars(automationLimits.nameMin), maxChars(automationLimits.nameMax))

export const Trigger = Schema.Struct({
  eventType: EventType,
  filter: Schema.optional(Condition)
}).annotations({ identifier: "AutomationTrigger", ...strict })

export const RuleLimits = Schema.Struct({
  maxRunsPerDay: Schema.Int.pipe(Schema.between(automationLimits.maxRunsPerDayMin, automationLimits.maxRunsPerDayMax))
}).annotations({ identifier: "AutomationLimits", ...strict })

/** The operations a `command.execute` action may run (spec): the seven draft saves. */
export const commandOperations = [
  "articles.save",
  "jobs.save",
  "learning.save",
  "portfolio.save",
  "resumes.save",
  "services.save",
  "tasks.save"
] as const
export type CommandOperation = (typeof commandOperations)[number]

export const NotificationAction = Schema.Struct({
  type: Schema.Literal("notification.create")
}).annotations({ identifier: "AutomationNotificationAction", ...strict })

export const WebhookAction = Schema.Struct({
  type: Schema.Literal("webhook.deliver"),
  endpointUuid: Schema.UUID
}).annotations({ identifier: "AutomationWebhookAction", ...strict })

/** `data` of a command: a title of 3 to 160 characters, other properties allowed (checked by the operation's own schema at run time). */
export const CommandData = Schema.Struct(
  { title: Schema.String.pipe(minChars(automationLimits.titleMin), maxChars(automationLimits.titleMax)) },
  Schema.Record({ key: Schema.String, value: AnyJson })
).annotations({ identifier: "AutomationCommandData" })

export const CommandArguments = Schema.Struct({
  data: CommandData,
  publicationUuid: Schema.optional(Schema.UUID),
  expectedRevision: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)))
}).annotations({ identifier: "AutomationCommandArguments", ...strict })

export const CommandAction = Schema.Struct({
  type: Schema.Literal("command.execute"),
  operationId: Schema.Literal(...commandOperations).annotations({ message: () => `expected one of ${commandOperations.join(", ")}` }),
  arguments: CommandArguments
}).annotations({ identifier: "AutomationCommandAction", ...strict })

export const RuleAction = Schema.Union(NotificationAction, WebhookAction, CommandAction)
export type RuleAction = typeof RuleAction.Type

const ruleFields = {
  name: RuleName,
  trigger: Trigger,
  action: RuleAction,
  limits: RuleLimits,
  enabled: Schema.optional(Schema.Boolean)
}

const Revision = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))

/**
 * `automations.create` (spec: no other properties; requestUuid required). The table allows `uuid`
 * and `expectedRevision` here too: a given `uuid` becomes the new rule's; `expectedRevision` is
 * accepted and ignored (docs/decisions.md, Automations).
 */
export const RuleCreate = Schema.Struct({
  requestUuid: RequestUuid,
  uuid: Schema.optional(Schema.UUID),
  expectedRevision: Schema.optional(Revision),
  ...ruleFields
})
  .annotations({ identifier: "AutomationRuleCreate", ...strict })
export type RuleCreate = typeof RuleCreate.Type

/** `automations.update`: full replacement at `expectedRevision`; `uuid` must be the path's. */
export const RuleUpdate = Schema.Struct({
  uuid: Schema.UUID,
  expectedRevision: Revision,
  requestUuid: Schema.optional(RequestUuid),
  ...ruleFields
}).annotations({ identifier: "AutomationRuleUpdate", ...strict })
export type RuleUpdate = typeof RuleUpdate.Type

/** The rule of a dry run: as in create, `requestUuid` not required; a `uuid` of an own rule adds its quota and chain facts. */
export const DryRunRule = Schema.Struct({
  requestUuid: Schema.optional(RequestUuid),
  uuid: Schema.optional(Schema.UUID),
  expectedRevision: Schema.optional(Revision),
  ...ruleFields
})
  .annotations({ identifier: "AutomationDryRunRule", ...strict })

/** The rule as its behaviour reads it. */
export interface RuleBody {
  readonly name: string
  readonly trigger: { readonly eventType: EventType; readonly filter?: Condition | undefined }
  readonly action: RuleAction
  readonly limits: { readonly maxRunsPerDay: number }
  readonly enabled?: boolean | undefined
}

/** A synthetic event of a dry run: `type` required, the rest of the envelope optional. */
export const SyntheticEvent = Schema.Struct({
  uuid: Schema.optional(Schema.UUID),
  type: EventType,
  schemaVersion: Schema.optional(Schema.Int),
  occurredAt: Schema.optional(Schema.String),
  aggregate: Schema.optional(Schema.Struct({
    kind: Schema.optional(Schema.String),
    uuid: Schema.optional(Schema.String),
    revision: Schema.optional(Schema.Number)
  })),
  data: Schema.optional(Schema.Record({ key: Schema.String, value: AnyJson })),
  context: Schema.optional(Schema.Record({ key: Schema.String, value: AnyJson }))
}).annotations({ identifier: "AutomationSyntheticEvent" })

export const DryRunInput = Schema.Struct({
  rule: DryRunRule,
  eventUuid: Schema.optional(Schema.UUID),
  event: Schema.optional(SyntheticEvent)
}).annotations({ identifier: "AutomationDryRun", ...strict })

export const DeleteInput = Schema.Struct({
  uuid: Schema.UUID,
  requestUuid: Schema.optional(RequestUuid)
}).annotations({ identifier: "AutomationRuleDelete", ...strict })

export const RuleState = Schema.Literal("active", "disabled", "suspended", "paused", "deleted")
export const SuspendedReason = Schema.Literal("key_revoked", "key_expired", "grant_missing", "profile_deleted")

/** A rule as its owner sees it. */
export const AutomationRule = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  name: Schema.String,
  trigger: Trigger,
  action: RuleAction,
  limits: RuleLimits,
  enabled: Schema.Boolean,
  state: RuleState,
  suspendedReason: Schema.optional(SuspendedReason),
  createdVia: Schema.Literal("session", "key", "mcp"),
  runsToday: Schema.Int,
  createdAt: DateTime,
  updatedAt: DateTime,
  deletedAt: Schema.optional(DateTime)
}).annotations({ identifier: "AutomationRule" })
export type AutomationRule = typeof AutomationRule.Type

export const AutomationRuleResult = Schema.Struct({ rule: AutomationRule }).annotations({ identifier: "AutomationRuleResult" })
export const AutomationRuleList = Schema.Struct({ items: Schema.Array(AutomationRule) }).annotations({ identifier: "AutomationRuleList" })

export const ExecutionStatus = Schema.Literal("pending", "running", "succeeded", "failed", "cancelled", "skipped_limit", "skipped_chain")
export type ExecutionStatus = typeof ExecutionStatus.Type

export const ExecutionAttempt = Schema.Struct({
  attemptedAt: DateTime,
  durationMs: Schema.Int,
  outcome: Schema.Literal("succeeded", "failed", "retry", "cancelled"),
  error: Schema.optional(Schema.Struct({ status: Schema.Int, code: Schema.String, message: Schema.String }))
}).annotations({ identifier: "AutomationExecutionAttempt" })

export const AutomationExecution = Schema.Struct({
  uuid: Schema.UUID,
  ruleUuid: Schema.UUID,
  ruleRevision: Schema.Int,
  eventUuid: Schema.UUID,
  eventType: Schema.String,
  status: ExecutionStatus,
  cancelReason: Schema.optional(Schema.String),
  chainDepth: Schema.Int,
  requestUuid: Schema.optional(Schema.UUID),
  attempts: Schema.Array(ExecutionAttempt),
  result: Schema.optional(Schema.Record({ key: Schema.String, value: AnyJson })),
  createdAt: DateTime,
  finishedAt: Schema.optional(DateTime)
}).annotations({ identifier: "AutomationExecution" })
export type AutomationExecution = typeof AutomationExecution.Type

export const AutomationExecutionList = Schema.Struct({ items: Schema.Array(AutomationExecution) })
  .annotations({ identifier: "AutomationExecutionList" })

// No identifier: a named query schema loses its parameters in OpenAPI.
export const ExecutionsQuery = Schema.Struct({ requestUuid: Schema.optional(Schema.UUID) })

export const TraceEntry = Schema.Struct({
  path: Schema.String,
  field: Schema.optional(Schema.String),
  op: Schema.optional(Schema.String),
  actual: Schema.optional(AnyJson),
  result: Schema.Boolean
}).annotations({ identifier: "AutomationTraceEntry" })

export const DryRunResult = Schema.Struct({
  matched: Schema.Boolean,
  typeMatches: Schema.Boolean,
  trace: Schema.Array(TraceEntry),
  chainDepth: Schema.Int,
  wouldSkip: Schema.NullOr(Schema.Literal("limit", "chain")),
  usedToday: Schema.Int,
  action: Schema.Struct({
    type: Schema.String,
    valid: Schema.Boolean,
    error: Schema.optional(Schema.String),
    requestUuid: Schema.optional(Schema.UUID),
    endpointState: Schema.optional(Schema.String)
  })
}).annotations({ identifier: "AutomationDryRunResult" })
export type DryRunResult = typeof DryRunResult.Type

export const BacktestInput = Schema.Struct({
  rule: DryRunRule,
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100)))
}).annotations({ identifier: "AutomationBacktest", ...strict })

export const BacktestResult = Schema.Struct({
  /** Events of the trigger's type the profile may see, newest first, that were evaluated. */
  scanned: Schema.Int,
  matched: Schema.Int,
  items: Schema.Array(Schema.Struct({
    eventUuid: Schema.UUID,
    occurredAt: DateTime,
    matched: Schema.Boolean,
    wouldSkip: Schema.NullOr(Schema.Literal("chain"))
  }))
}).annotations({ identifier: "AutomationBacktestResult" })
