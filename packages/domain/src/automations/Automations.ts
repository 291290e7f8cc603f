import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import { createHash } from "node:crypto"
import { Forbidden, NotFound, type RequestConflict, type RevisionConflict } from "../kernel/ApiError.js"
import { type Actor, holdsScope } from "../kernel/Authentication.js"
import { getEvent, latestVisibleEvents } from "../events/EventLog.js"
import { InsufficientScope } from "../keys/KeyErrors.js"
import { Operations } from "../operations/Operations.js"
import { idempotent } from "../store/Idempotency.js"
import { requireRevision } from "../store/Revision.js"
import { findOwnEndpoint } from "../webhooks/WebhookEndpointRepository.js"
import { InvalidRule } from "./AutomationErrors.js"
import {
  cancelPendingExecutions,
  countOwnRulesLocked,
  type ExecutionRow,
  findOwnRule,
  insertRule,
  latestExecutions,
  listOwnRules,
  replaceRule,
  ruleExists,
  type RuleRow,
  type RuleValues,
  softDeleteRule,
  usedToday
} from "./AutomationRepository.js"
import { type EventFacts, evaluate, ruleProblem, type TraceNode } from "./Condition.js"
import {
  automationLimits,
  type AutomationExecution,
  type AutomationRule,
  AutomationRuleResult,
  type DryRunResult,
  type RuleAction,
  type RuleBody
} from "./Rule.js"

const optional = <K extends string, V>(key: K, value: V | null | undefined): { readonly [P in K]?: V } =>
  (value === null || value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: V }

/** The owner's view of a rule row. */
export const ruleView = (row: RuleRow): AutomationRule => ({
  uuid: row.uuid,
  revision: row.revision,
  name: row.name,
  trigger: { eventType: row.event_type as AutomationRule["trigger"]["eventType"], ...optional("filter", row.filter as AutomationRule["trigger"]["filter"]) },
  action: row.action as RuleAction,
  limits: { maxRunsPerDay: row.max_runs_per_day },
  enabled: row.enabled,
  state: row.deleted_at !== null
    ? "deleted"
    : row.suspended_reason !== null
    ? "suspended"
    : row.paused_at !== null
    ? "paused"
    : row.enabled
    ? "active"
    : "disabled",
  ...optional("suspendedReason", row.suspended_reason),
  createdVia: row.created_via,
  runsToday: row.runs_today,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  ...optional("deletedAt", row.deleted_at)
})

export const executionView = (row: ExecutionRow): AutomationExecution => ({
  uuid: row.uuid,
  ruleUuid: row.rule_uuid,
  ruleRevision: row.rule_revision,
  eventUuid: row.event_uuid,
  eventType: row.event_type,
  status: row.status,
  ...optional("cancelReason", row.cancel_reason),
  chainDepth: row.chain_depth,
  ...optional("requestUuid", row.request_uuid),
  attempts: (Array.isArray(row.attempts) ? row.attempts : []).map((attempt: Record<string, unknown>) => ({
    ...attempt,
    attemptedAt: new Date(String(attempt["attemptedAt"]))
  })) as unknown as AutomationExecution["attempts"],
  ...optional("result", row.result as AutomationExecution["result"] | null),
  createdAt: row.created_at,
  ...optional("finishedAt", row.finished_at)
})

/** The scope an action needs beside `automations:write`: `<command>:write` for a save, `webhooks:write` for a delivery. */
export const actionScope = (action: RuleAction): string | null =>
  action.type === "command.execute"
    ? `${action.operationId.slice(0, action.operationId.indexOf("."))}:write`
    : action.type === "webhook.deliver"
    ? "webhooks:write"
    : null

const invalid = (path: string, message: string) => new InvalidRule({ message: `${path}: ${message}` })

/**
 * What a rule body must satisfy beyond its schema: the grammar (Condition.ts), a key's scope for
 * the action, and for `webhook.deliver` an active endpoint of the same profile.
 */
const checkRule = (actor: Actor, rule: RuleBody, prefix = "") =>
  Effect.gen(function*() {
    const problem = ruleProblem(rule, prefix)
    if (problem !== undefined) return yield* invalid(problem.path, problem.message)
    const scope = actionScope(rule.action)
    if (scope !== null && !holdsScope(actor, scope)) {
      return yield* new InsufficientScope({ message: `A rule with the action ${rule.action.type} needs the scope ${scope}`, scopes: [scope] })
    }
    if (rule.action.type === "webhook.deliver") {
      const endpoint = yield* findOwnEndpoint(actor.profileUuid, rule.action.endpointUuid, { lock: false })
      if (Option.isNone(endpoint) || endpoint.value.state !== "active") {
        return yield* invalid(`${prefix}action.endpointUuid`, "not an active webhook endpoint of the acting profile")
      }
    }
  })

const valuesOf = (actor: Actor, rule: RuleBody): RuleValues => ({
  name: rule.name,
  eventType: rule.trigger.eventType,
  filter: rule.trigger.filter,
  action: rule.action,
  actionScope: actionScope(rule.action),
  maxRunsPerDay: rule.limits.maxRunsPerDay,
  enabled: rule.enabled ?? true,
  createdVia: actor.via === "key" ? "key" : actor.via === "mcp" ? "mcp" : "session",
  keyUuid: actor.via === "key" || actor.via === "mcp" ? actor.keyUuid : null
})

const notFound = () => new NotFound({ message: "No such automation rule of the acting profile" })

const ownRule = (actor: Actor, uuid: string, options: { readonly lock: boolean; readonly deleted: boolean }) =>
  Effect.flatMap(findOwnRule(actor.profileUuid, uuid, options), Option.match({ onNone: () => Effect.fail(notFound()), onSome: Effect.succeed }))

/** `automations.list`: the acting profile's rules, oldest first (at most 100, one page). */
export const listRules = (actor: Actor) => Effect.map(listOwnRules(actor.profileUuid), (rows) => ({ items: rows.map(ruleView) }))

export interface RuleCreateInput extends RuleBody {
  readonly requestUuid: string
  readonly uuid?: string | undefined
  readonly expectedRevision?: number | undefined
}

/** `automations.create`: idempotent by `requestUuid`; at most 100 live rules per profile (403 beyond). */
export const createRule = (
  actor: Actor,
  input: RuleCreateInput
): Effect.Effect<
  typeof AutomationRuleResult.Type,
  InvalidRule | InsufficientScope | Forbidden | RequestConflict | SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function*() {
    yield* checkRule(actor, input)
    return yield* idempotent(
      { scope: actor.profileUuid, operationId: "automations.create", requestUuid: input.requestUuid, request: input, result: AutomationRuleResult },
      Effect.gen(function*() {
        if ((yield* countOwnRulesLocked(actor.profileUuid)) >= automationLimits.rulesPerProfile) {
          return yield* new Forbidden({ message: `A profile has at most ${automationLimits.rulesPerProfile} automation rules` })
        }
        const uuid = input.uuid ?? crypto.randomUUID()
        if (input.uuid !== undefined && (yield* ruleExists(uuid))) return yield* invalid("uuid", "a rule with this uuid already exists")
        return { rule: ruleView(yield* insertRule(uuid, actor.profileUuid, actor.accountUuid, valuesOf(actor, input))) }
      })
    )
  })

export interface RuleUpdateInput extends RuleBody {
  readonly uuid: string
  readonly expectedRevision: number
  readonly requestUuid?: string | undefined
}

/** Runs a command once per `requestUuid` when one is given; in a plain transaction otherwise. */
const onceIfKeyed = <E, R>(
  actor: Actor,
  operationId: string,
  requestUuid: string | undefined,
  request: unknown,
  effect: Effect.Effect<typeof AutomationRuleResult.Type, E, R>
) =>
  requestUuid === undefined
    ? Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect))
    : idempotent({ scope: actor.profileUuid, operationId, requestUuid, request, result: AutomationRuleResult }, effect)

/**
 * `automations.update`: full replacement at `expectedRevision` (409 if stale). Pending executions
 * of the old revision are cancelled; only events sequenced from now on trigger the new one. The
 * caller becomes the rule's authority (a session's update takes over a key's rule).
 */
export const updateRule = (
  actor: Actor,
  pathUuid: string,
  input: RuleUpdateInput
): Effect.Effect<
  typeof AutomationRuleResult.Type,
  InvalidRule | InsufficientScope | NotFound | RevisionConflict | RequestConflict | SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function*() {
    if (input.uuid !== pathUuid) return yield* invalid("uuid", "must equal the rule's uuid in the path")
    yield* checkRule(actor, input)
    return yield* onceIfKeyed(
      actor,
      "automations.update",
      input.requestUuid,
      input,
      Effect.gen(function*() {
        const current = yield* ownRule(actor, pathUuid, { lock: true, deleted: false })
        yield* requireRevision("automation rule", current.revision, input.expectedRevision)
        yield* cancelPendingExecutions(pathUuid, "rule_updated")
        return { rule: ruleView(yield* replaceRule(pathUuid, valuesOf(actor, input))) }
      })
    )
  })

/**
 * `automations.delete`: soft. Pending executions are cancelled, executions stay readable;
 * deleting again answers the same record. The body's `uuid` must be the path's.
 */
export const deleteRule = (
  actor: Actor,
  pathUuid: string,
  input: { readonly uuid: string; readonly requestUuid?: string | undefined }
): Effect.Effect<typeof AutomationRuleResult.Type, InvalidRule | NotFound | RequestConflict | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (input.uuid !== pathUuid) return yield* invalid("uuid", "must equal the rule's uuid in the path")
    return yield* onceIfKeyed(
      actor,
      "automations.delete",
      input.requestUuid,
      input,
      Effect.gen(function*() {
        const current = yield* ownRule(actor, pathUuid, { lock: true, deleted: true })
        if (current.deleted_at !== null) return { rule: ruleView(current) }
        yield* cancelPendingExecutions(pathUuid, "rule_deleted")
        return { rule: ruleView(yield* softDeleteRule(pathUuid)) }
      })
    )
  })

/** `automations.executions`: the latest 100 of an own rule (deleted rules too), newest first. */
export const listExecutions = (actor: Actor, uuid: string, query: { readonly requestUuid?: string | undefined }) =>
  Effect.gen(function*() {
    yield* ownRule(actor, uuid, { lock: false, deleted: true })
    const rows = yield* latestExecutions(uuid, automationLimits.executionsReturned, query.requestUuid)
    return { items: rows.map(executionView) }
  })

// ---- derived facts shared with the worker ---------------------------------------------------

/** The automations' namespace of derived request uuids (a fixed random uuid). */
const automationNamespace = "4b7f3f0e-9a51-4e8e-9b1f-2a6c0d5e7c31"

/** RFC 4122 version 5 (SHA-1, name-based). */
export const uuidV5 = (namespace: string, name: string): string => {
  const hash = createHash("sha1").update(Buffer.from(namespace.replaceAll("-", ""), "hex")).update(name).digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The `requestUuid` of a rule's command for one event: a retry, or a second worker, saves once. */
export const commandRequestUuid = (ruleUuid: string, eventUuid: string) => uuidV5(automationNamespace, `${ruleUuid}:${eventUuid}`)

/** `context.automation` of an event caused by an automation, if any. */
export const automationCauseOf = (context: unknown): { readonly ruleUuid?: string; readonly depth: number } => {
  const automation = typeof context === "object" && context !== null ? (context as Record<string, unknown>)["automation"] : undefined
  if (typeof automation !== "object" || automation === null) return { depth: 0 }
  const depth = (automation as Record<string, unknown>)["depth"]
  const ruleUuid = (automation as Record<string, unknown>)["ruleUuid"]
  return { depth: typeof depth === "number" ? depth : 0, ...(typeof ruleUuid === "string" ? { ruleUuid } : {}) }
}

/** Whether chain protection stops a rule on an event. */
export const chainStops = (ruleUuid: string | undefined, context: unknown): boolean => {
  const cause = automationCauseOf(context)
  return cause.depth >= automationLimits.chainDepth || (ruleUuid !== undefined && cause.ruleUuid === ruleUuid)
}

/** The command a `command.execute` action runs: its arguments plus the derived `requestUuid`. */
export const commandPayload = (action: Extract<RuleAction, { type: "command.execute" }>, requestUuid: string) => ({
  ...action.arguments,
  requestUuid
})

// ---- dry run --------------------------------------------------------------------------------

export interface DryRunInput {
  readonly rule: RuleBody & { readonly uuid?: string | undefined }
  readonly eventUuid?: string | undefined
  readonly event?: EventFacts & { readonly context?: Readonly<Record<string, unknown>> | undefined } | undefined
}

/**
 * `automations.dry_run`: whether the rule matches a visible event (`eventUuid`) or a synthetic
 * one (`event`), with a trace of every node, whether chain protection or the daily limit would
 * skip it, and whether its action would be valid now. No effect, no execution row, no quota.
 */
export const dryRun = (
  actor: Actor,
  input: DryRunInput
): Effect.Effect<DryRunResult, InvalidRule | InsufficientScope | NotFound | SqlError, SqlClient.SqlClient | Operations> =>
  Effect.gen(function*() {
    if ((input.eventUuid === undefined) === (input.event === undefined)) {
      return yield* invalid(input.event === undefined ? "eventUuid" : "event", "give exactly one of eventUuid and event")
    }
    const rule = input.rule
    const problem = ruleProblem(rule, "rule.")
    if (problem !== undefined) return yield* invalid(problem.path, problem.message)
    let event: EventFacts & { readonly context?: unknown }
    let eventUuid: string | undefined
    if (input.eventUuid !== undefined) {
      const found = yield* getEvent(actor, input.eventUuid)
      if (Option.isNone(found)) return yield* new NotFound({ message: "No such event visible to the acting profile" })
      event = found.value
      eventUuid = found.value.uuid
    } else {
      event = input.event!
    }
    const trace: Array<TraceNode> = []
    const typeMatches = event.type === rule.trigger.eventType
    const filterHolds = rule.trigger.filter === undefined ? true : evaluate(rule.trigger.filter, event, trace)
    const own = rule.uuid === undefined ? Option.none<RuleRow>() : yield* findOwnRule(actor.profileUuid, rule.uuid, { lock: false, deleted: false })
    const used = Option.isSome(own) ? yield* usedToday(own.value.uuid) : 0
    const chainDepth = automationCauseOf(event.context).depth
    const wouldSkip = chainStops(Option.isSome(own) ? own.value.uuid : undefined, event.context)
      ? "chain" as const
      : used >= rule.limits.maxRunsPerDay
      ? "limit" as const
      : null
    return {
      matched: typeMatches && filterHolds,
      typeMatches,
      trace: trace.map((entry) => ({ ...entry, ...(entry.actual === undefined ? {} : { actual: entry.actual }) })),
      chainDepth,
      wouldSkip,
      usedToday: used,
      action: yield* dryRunAction(actor, rule.action, Option.isSome(own) && eventUuid !== undefined ? commandRequestUuid(own.value.uuid, eventUuid) : undefined)
    }
  })

const dryRunAction = (actor: Actor, action: RuleAction, requestUuid: string | undefined) =>
  Effect.gen(function*() {
    switch (action.type) {
      case "notification.create":
        return { type: action.type, valid: true }
      case "webhook.deliver": {
        const endpoint = yield* findOwnEndpoint(actor.profileUuid, action.endpointUuid, { lock: false })
        const state = Option.isNone(endpoint) ? "missing" : endpoint.value.state
        return {
          type: action.type,
          valid: state === "active",
          endpointState: state,
          ...(state === "active" ? {} : { error: "not an active webhook endpoint of the acting profile" })
        }
      }
      case "command.execute": {
        const operations = yield* Operations
        const payload = operations.entries.get(action.operationId)?.schemas.payload
        const decoded = payload === undefined || Option.isNone(payload)
          ? Either.right(undefined)
          : Schema.decodeUnknownEither(Schema.make(payload.value))(commandPayload(action, requestUuid ?? crypto.randomUUID()))
        return {
          type: action.type,
          valid: Either.isRight(decoded),
          ...(Either.isLeft(decoded)
            ? { error: ParseResult.ArrayFormatter.formatErrorSync(decoded.left).slice(0, 5).map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ") }
            : {}),
          ...(requestUuid === undefined ? {} : { requestUuid })
        }
      }
    }
  })

/** Positions a backtest looks back at most. */
export const backtestWindow = 100_000

/**
 * `automations.backtest` (extension): which of the latest events of the trigger's type the profile
 * may see (at most `limit`, 100 by default) the rule would have matched, and which chain
 * protection would have skipped. Like a dry run: no effect, no execution, no quota.
 */
export const backtest = (
  actor: Actor,
  input: { readonly rule: RuleBody & { readonly uuid?: string | undefined }; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const problem = ruleProblem(input.rule, "rule.")
    if (problem !== undefined) return yield* invalid(problem.path, problem.message)
    const events = yield* latestVisibleEvents(actor, input.rule.trigger.eventType, input.limit ?? 100, backtestWindow)
    const filter = input.rule.trigger.filter
    const items = events.map((event) => ({
      eventUuid: event.uuid,
      occurredAt: event.occurredAt,
      matched: filter === undefined || evaluate(filter, event),
      wouldSkip: chainStops(input.rule.uuid, event.context) ? "chain" as const : null
    }))
    return { scanned: items.length, matched: items.filter((item) => item.matched).length, items }
  })
