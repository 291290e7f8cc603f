import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Option, Schema } from "effect"
import type { AutomationActor } from "../kernel/Authentication.js"
import { cursorBehind, lockCursorWindow, moveCursor } from "../events/ConsumerCursor.js"
import { eventDescription } from "../events/EventCatalog.js"
import { eventVisibleToColumn } from "../events/EventVisibility.js"
import { eventCauses } from "../events/OutboxEventRepository.js"
import { jobSpan, type TraceCause } from "../kernel/Tracing.js"
import { insertNotification, insertNotifications } from "../notifications/NotificationRepository.js"
import { Operations } from "../operations/Operations.js"
import { currentAutomationCause } from "../store/Outbox.js"
import { Int8Text, rowsDecoder } from "../store/Rows.js"
import { queueEventDelivery } from "../webhooks/WebhookDeliveryRepository.js"
import { findOwnEndpoint } from "../webhooks/WebhookEndpointRepository.js"
import {
  type ClaimedRow,
  claimExecutions,
  countFailure,
  countTodayRuns,
  executionLeaseSeconds,
  findRules,
  insertExecutions,
  lockTodayCounters,
  recordNotified,
  recordOutcomes,
  resetFailureStreaks,
  type RuleRow,
  skipOverLimit,
  suspendedReasonSql
} from "./AutomationRepository.js"
import { actionScope, automationCauseOf, chainStops, commandPayload, commandRequestUuid } from "./Automations.js"
import { evaluate } from "./Condition.js"
import { automationLimits, type Condition, type RuleAction } from "./Rule.js"

/**
 * The automations' worker side: the fan-out turns sequenced events into
 * executions, one per (rule, event); the runner acts on them. Both are safe with several workers
 * and across crashes: the fan-out holds the cursor row for its transaction and inserts with the
 * unique (rule, event) key; the runner leases executions and every action is idempotent (a
 * notification per execution, a delivery per endpoint and event, a save per derived requestUuid).
 * A `notification.create` is only a row of our own database: the fan-out writes it in its own
 * transaction (exactly once, no runner round trips), as the runner would have.
 */

const Candidate = Schema.Struct({
  uuid: Schema.String,
  type: Schema.String,
  position: Int8Text,
  aggregate_kind: Schema.String,
  aggregate_uuid: Schema.String,
  aggregate_revision: Schema.Int,
  data: Schema.Unknown,
  context: Schema.Unknown,
  rule_uuid: Schema.String,
  rule_revision: Schema.Int,
  profile_uuid: Schema.String,
  filter: Schema.Unknown,
  action: Schema.Unknown,
  max_runs_per_day: Schema.Int,
  rule_name: Schema.String,
  consecutive_failures: Schema.Int,
  /** The rule's authority holds (its key, if any, is valid with the grants; its profile exists). */
  authorized: Schema.Boolean
})
const decodeCandidates = rowsDecoder(Candidate)

/** Positions one fan-out transaction covers at most. */
export const fanOutWindow = 500

/**
 * One fan-out batch: the events after the cursor (at most `fanOutWindow` positions), each with
 * the live, enabled rules of its type that started before it and whose profile may see it now.
 * The condition decides; chain protection and the daily limit record skips; the cursor moves in
 * the same transaction. Returns how many positions it covered (0: caught up).
 */
export const fanOutAutomations: Effect.Effect<
  {
    readonly covered: number
    readonly created: number
    /** Of `created`, how many wait for the runner (the others were notifications, written here). */
    readonly queued: number
  },
  SqlError,
  SqlClient.SqlClient
> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The idle poll: one statement, no transaction, while no event waits.
    if (!(yield* cursorBehind("automation_cursor"))) return { covered: 0, created: 0, queued: 0 }
    return yield* sql.withTransaction(Effect.gen(function*() {
      const next = yield* lockCursorWindow("automation_cursor", fanOutWindow)
      if (next === undefined) return { covered: 0, created: 0, queued: 0 }
      const { after, upto } = next
      const candidates = yield* decodeCandidates(yield* sql`
        SELECT e.uuid, e.type, e.position::text AS position, e.aggregate_kind, e.aggregate_uuid, e.aggregate_revision, e.data, e.context,
          r.uuid AS rule_uuid, r.revision AS rule_revision, r.profile_uuid, r.filter, r.action, r.max_runs_per_day,
          r.name AS rule_name, r.consecutive_failures, (${sql.literal(suspendedReasonSql)}) IS NULL AS authorized
        FROM outbox_events e
        JOIN automation_rules r ON r.event_type = e.type AND r.deleted_at IS NULL AND r.enabled AND r.paused_at IS NULL
          AND r.start_position < e.position
        LEFT JOIN api_keys k ON k.uuid = r.key_uuid
        WHERE e.position > ${after.toString()} AND e.position <= ${upto.toString()} AND ${eventVisibleToColumn(sql, "r.profile_uuid")}
        ORDER BY e.position, r.uuid`)
      // Matches, in position order: the condition holds; chain protection decides the status.
      const matches: Array<{
        rule_uuid: string; rule_revision: number; profile_uuid: string; event_uuid: string; event_type: string
        event_position: string; status: "pending" | "skipped_chain"; chain_depth: number; request_uuid: string | null
      }> = []
      const maxRuns = new Map<string, number>()
      const byMatch = new Map<string, typeof candidates[number]>()
      for (const c of candidates) {
        const facts = {
          type: c.type,
          aggregate: { kind: c.aggregate_kind, uuid: c.aggregate_uuid, revision: c.aggregate_revision },
          data: (typeof c.data === "object" && c.data !== null ? c.data : {}) as Readonly<Record<string, unknown>>
        }
        if (c.filter !== null && c.filter !== undefined && !evaluate(c.filter as Condition, facts)) continue
        const action = c.action as RuleAction
        maxRuns.set(c.rule_uuid, c.max_runs_per_day)
        byMatch.set(`${c.rule_uuid} ${c.position}`, c)
        matches.push({
          rule_uuid: c.rule_uuid,
          rule_revision: c.rule_revision,
          profile_uuid: c.profile_uuid,
          event_uuid: c.uuid,
          event_type: c.type,
          event_position: c.position,
          status: chainStops(c.rule_uuid, c.context) ? "skipped_chain" : "pending",
          chain_depth: automationCauseOf(c.context).depth,
          request_uuid: action.type === "command.execute" ? commandRequestUuid(c.rule_uuid, c.uuid) : null
        })
      }
      let created = 0
      let queued = 0
      if (matches.length > 0) {
        // One statement for every match; a row that exists (a batch run again) is left as it is.
        const inserted = yield* insertExecutions(matches)
        // The daily limit: the first of today's remaining slots go to the earliest events.
        const pending = new Map<string, Array<{ uuid: string; position: bigint }>>()
        for (const row of inserted) {
          if (row.status !== "pending") continue
          const list = pending.get(row.rule_uuid) ?? []
          list.push({ uuid: row.uuid, position: BigInt(row.event_position) })
          pending.set(row.rule_uuid, list)
        }
        if (pending.size > 0) {
          // In uuid order, inserted and locked (docs/decisions.md "Lock order").
          const rules = [...pending.keys()].sort()
          const used = yield* lockTodayCounters(rules)
          const usedBy = new Map(used.map((row) => [row.rule_uuid, row.used]))
          const counted: Array<{ rule_uuid: string; n: number }> = []
          const skipped: Array<string> = []
          const local: Array<{ execution: string; c: typeof candidates[number] }> = []
          for (const [rule, list] of pending) {
            list.sort((x, y) => (x.position < y.position ? -1 : x.position > y.position ? 1 : 0))
            const free = Math.max(0, (maxRuns.get(rule) ?? 0) - (usedBy.get(rule) ?? 0))
            const take = Math.min(free, list.length)
            if (take > 0) counted.push({ rule_uuid: rule, n: take })
            for (const execution of list.slice(take)) skipped.push(execution.uuid)
            for (const execution of list.slice(0, take)) {
              const c = byMatch.get(`${rule} ${execution.position}`)
              if (c !== undefined && c.authorized && (c.action as RuleAction).type === "notification.create") local.push({ execution: execution.uuid, c })
            }
            created += take
          }
          yield* countTodayRuns(counted)
          yield* skipOverLimit(skipped)
          yield* notifyNow(local)
          queued = created - local.length
        }
      }
      yield* moveCursor("automation_cursor", upto)
      return { covered: Number(upto - after), created, queued }
    }))
  })

type Claimed = ClaimedRow

export { claimExecutions, executionLeaseSeconds }

/** Waits before the next attempt after a transient failure (ours): immediately, 30 s, 5 min, 30 min, 2 h. */
export const retryDelaysMs = [0, 30_000, 300_000, 1_800_000, 7_200_000] as const

interface Outcome {
  readonly status: "succeeded" | "failed" | "cancelled" | "retry"
  readonly cancelReason?: string
  readonly result?: Readonly<Record<string, unknown>>
  readonly error?: { readonly status: number; readonly code: string; readonly message: string }
}

const cancelled = (reason: string): Outcome => ({ status: "cancelled", cancelReason: reason })

/** Why a claimed execution may no longer act, if so: the rule changed, stopped or lost its authority. */
const stopReason = (rule: RuleRow, execution: Claimed): string | undefined =>
  rule.deleted_at !== null
    ? "rule_deleted"
    : rule.revision !== execution.rule_revision
    ? "rule_updated"
    : !rule.enabled
    ? "rule_disabled"
    : rule.paused_at !== null
    ? "rule_paused"
    : rule.suspended_reason !== null
    ? `revoked: ${rule.suspended_reason}`
    : undefined

const Actor = Schema.Struct({
  account_uuid: Schema.String,
  email: Schema.String,
  name: Schema.String,
  type: Schema.String
})
const decodeActor = rowsDecoder(Actor)

const act = (rule: RuleRow, execution: Claimed, event: { readonly objectUuid: string }): Effect.Effect<Outcome, SqlError, SqlClient.SqlClient | Operations> =>
  Effect.gen(function*() {
    const action = rule.action as RuleAction
    switch (action.type) {
      case "notification.create": {
        const notificationUuid = yield* insertNotification(notificationOf(rule, execution, event.objectUuid))
        return { status: "succeeded", result: { notificationUuid } }
      }
      case "webhook.deliver": {
        const endpoint = yield* findOwnEndpoint(rule.profile_uuid, action.endpointUuid, { lock: false })
        if (Option.isNone(endpoint) || endpoint.value.state !== "active") {
          return { status: "failed", error: { status: 409, code: "endpoint_inactive", message: "The webhook endpoint is not active" } }
        }
        const deliveryUuid = yield* queueEventDelivery(action.endpointUuid, {
          uuid: execution.event_uuid,
          type: execution.event_type,
          position: execution.event_position
        })
        return { status: "succeeded", result: { deliveryUuid } }
      }
      case "command.execute": {
        const sql = yield* SqlClient.SqlClient
        const [who] = yield* decodeActor(yield* sql`SELECT a.uuid AS account_uuid, a.email, p.name, p.type
          FROM profiles p JOIN accounts a ON a.uuid = p.account_uuid
          WHERE p.uuid = ${rule.profile_uuid} AND p.deleted_at IS NULL AND a.deleted_at IS NULL`)
        if (who === undefined) return cancelled("revoked: profile_deleted")
        const now = yield* Clock.currentTimeMillis
        const scope = actionScope(action)
        const actor: AutomationActor = {
          via: "automation",
          accountUuid: who.account_uuid,
          email: who.email,
          profileUuid: rule.profile_uuid,
          profileName: who.name,
          profileType: who.type as AutomationActor["profileType"],
          expiresAt: new Date(now + executionLeaseSeconds * 1000),
          ruleUuid: rule.uuid,
          executionUuid: execution.uuid,
          keyUuid: rule.key_uuid,
          scopes: scope === null ? [] : [scope]
        }
        const requestUuid = execution.request_uuid ?? commandRequestUuid(rule.uuid, execution.event_uuid)
        const operations = yield* Operations
        const answer = yield* operations.invoke(action.operationId, actor, { payload: commandPayload(action, requestUuid) }).pipe(
          Effect.locally(currentAutomationCause, {
            ruleUuid: rule.uuid,
            executionUuid: execution.uuid,
            triggerEventUuid: execution.event_uuid,
            depth: execution.chain_depth + 1
          })
        )
        if (answer.status === 200) {
          const body = answer.body as { readonly uuid?: string; readonly revision?: number; readonly status?: string }
          return { status: "succeeded", result: { status: body.status ?? "", publicationUuid: body.uuid ?? "", revision: body.revision ?? 0, requestUuid } }
        }
        const envelope = (answer.body as { readonly error?: { readonly code?: string; readonly message?: string } } | undefined)?.error
        const error = { status: answer.status, code: envelope?.code ?? "", message: envelope?.message ?? "" }
        return { status: answer.status === 503 ? "retry" : "failed", error }
      }
    }
  })

const isTransient = (error: unknown) => typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError"

const transientOutcome = (error: unknown): Outcome => ({
  status: "retry",
  error: { status: 503, code: "unavailable", message: String((error as { message?: string }).message ?? "database") }
})

const decodeVisible = rowsDecoder(Schema.Struct({ uuid: Schema.String, object_uuid: Schema.NullOr(Schema.String) }))

/**
 * Runs a claimed batch: checks again, in one query each, that every execution's rule is live at
 * the same revision with its authority, and that its event is still visible to the profile; then
 * acts (every notification of the batch in one statement, the other actions one by one, a few at
 * once) and records every outcome in one statement. A transient failure is retried on
 * `retryDelaysMs`; a permanent one fails at once.
 */
export const runExecutions = (claimed: ReadonlyArray<Claimed>): Effect.Effect<void, SqlError, SqlClient.SqlClient | Operations> =>
  Effect.gen(function*() {
    if (claimed.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const started = yield* Clock.currentTimeMillis
    const rules = new Map((yield* findRules([...new Set(claimed.map((x) => x.rule_uuid))])).map((rule) => [rule.uuid, rule]))
    const visible = new Map((yield* decodeVisible(yield* sql`SELECT x.uuid, e.data ->> 'objectUuid' AS object_uuid
      FROM automation_executions x JOIN outbox_events e ON e.uuid = x.event_uuid
      WHERE ${sql.in("x.uuid", claimed.map((x) => x.uuid))} AND ${eventVisibleToColumn(sql, "x.profile_uuid")}`))
      .map((row) => [row.uuid, row.object_uuid ?? ""]))
    const outcomes = new Map<string, Outcome>()
    const notify: Array<{ execution: Claimed; rule: RuleRow; objectUuid: string }> = []
    const others: Array<{ execution: Claimed; rule: RuleRow; objectUuid: string }> = []
    for (const execution of claimed) {
      const rule = rules.get(execution.rule_uuid)
      const stop = rule === undefined ? "rule_deleted" : stopReason(rule, execution)
      const objectUuid = visible.get(execution.uuid)
      if (stop !== undefined || rule === undefined) outcomes.set(execution.uuid, cancelled(stop ?? "rule_deleted"))
      else if (objectUuid === undefined) outcomes.set(execution.uuid, cancelled("event_not_visible"))
      else if ((rule.action as RuleAction).type === "notification.create") notify.push({ execution, rule, objectUuid })
      else others.push({ execution, rule, objectUuid })
    }
    if (notify.length > 0) {
      const written = yield* Effect.either(insertNotifications(notify.map(({ execution, objectUuid, rule }) => notificationOf(rule, execution, objectUuid))))
      for (const { execution } of notify) {
        outcomes.set(
          execution.uuid,
          written._tag === "Right"
            ? { status: "succeeded", result: { notificationUuid: written.right.get(execution.uuid) ?? "" } }
            : transientOutcome(written.left)
        )
      }
    }
    // Each execution joins the trace of the request that wrote its trigger event, and its log lines name that request.
    const causes = others.length === 0 ? new Map<string, TraceCause>() : yield* eventCauses(others.map(({ execution }) => execution.event_uuid))
    yield* Effect.forEach(others, ({ execution, objectUuid, rule }) =>
      act(rule, execution, { objectUuid }).pipe(
        Effect.catchIf(isTransient, (error) => Effect.succeed(transientOutcome(error))),
        Effect.tap((outcome) => Effect.annotateCurrentSpan("birzha.automation.outcome", outcome.status)),
        Effect.map((outcome) => outcomes.set(execution.uuid, outcome)),
        jobSpan("automations.execution", {
          attributes: {
            "birzha.automation.rule_uuid": rule.uuid,
            "birzha.automation.execution_uuid": execution.uuid,
            "birzha.automation.action": (rule.action as RuleAction).type,
            "birzha.event.type": execution.event_type
          },
          cause: causes.get(execution.event_uuid)
        })
      ), { concurrency: 8, discard: true })
    yield* recordAll(claimed, outcomes, started, rules)
  })

/** The notification of a rule's `notification.create` for one execution. */
const notificationOf = (
  rule: { readonly uuid: string; readonly profile_uuid: string; readonly name: string },
  execution: { readonly uuid: string; readonly event_uuid: string; readonly event_type: string },
  objectUuid: string
) => {
  const entry = eventDescription(execution.event_type)
  return {
    profileUuid: rule.profile_uuid,
    source: "automation" as const,
    kind: "automation.rule",
    ruleUuid: rule.uuid,
    executionUuid: execution.uuid,
    eventUuid: execution.event_uuid,
    eventType: execution.event_type,
    title: rule.name,
    body: `${entry?.summary ?? execution.event_type}: ${objectUuid}`,
    ...(entry?.readOperationId === undefined ? {} : { link: entry.readOperationId })
  }
}

/**
 * The fan-out's `notification.create` executions, acted on in its transaction: their
 * notifications in one statement, the executions recorded as succeeded (one attempt, as the
 * runner records it) in another, and the failure streaks of their rules ended.
 */
const notifyNow = (
  local: ReadonlyArray<{ readonly execution: string; readonly c: typeof Candidate.Type }>
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  local.length === 0 ? Effect.void : Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const written = yield* insertNotifications(local.map(({ c, execution }) => {
      const data = typeof c.data === "object" && c.data !== null ? c.data as Record<string, unknown> : {}
      return notificationOf(
        { uuid: c.rule_uuid, profile_uuid: c.profile_uuid, name: c.rule_name },
        { uuid: execution, event_uuid: c.uuid, event_type: c.type },
        typeof data.objectUuid === "string" ? data.objectUuid : ""
      )
    }))
    const finished = yield* Clock.currentTimeMillis
    const attempt = { attemptedAt: new Date(started).toISOString(), durationMs: Math.max(0, finished - started), outcome: "succeeded" }
    const rows = local.map(({ execution }) => ({ uuid: execution, notification: written.get(execution) ?? "" }))
    yield* recordNotified(rows, attempt)
    const resets = [...new Set(local.filter(({ c }) => c.consecutive_failures > 0).map(({ c }) => c.rule_uuid))]
    yield* resetFailureStreaks(resets)
  })

/** One execution run on its own (tests; the runner runs batches). */
export const runExecution = (execution: Claimed) => runExecutions([execution])

const recordAll = (
  claimed: ReadonlyArray<Claimed>,
  outcomes: ReadonlyMap<string, Outcome>,
  started: number,
  rules: ReadonlyMap<string, RuleRow>
) =>
  Effect.gen(function*() {
    const finished = yield* Clock.currentTimeMillis
    const rows = claimed.map((execution) => {
      const outcome = outcomes.get(execution.uuid) ?? cancelled("not_run")
      const previous = Array.isArray(execution.attempts) ? execution.attempts.length : 0
      // Retries exhausted: the transient failure becomes final.
      const delay = outcome.status === "retry" ? retryDelaysMs[previous] : undefined
      const status = outcome.status === "retry" ? (delay === undefined ? "failed" : "pending") : outcome.status
      return {
        uuid: execution.uuid,
        rule_uuid: execution.rule_uuid,
        status,
        acted: outcome.status !== "cancelled",
        attempt: {
          attemptedAt: new Date(started).toISOString(),
          durationMs: Math.max(0, finished - started),
          outcome: outcome.status,
          ...(outcome.error === undefined ? {} : { error: outcome.error })
        },
        result: outcome.result ?? null,
        cancel_reason: outcome.cancelReason ?? null,
        delay_seconds: delay === undefined ? 0 : Math.round(delay * (0.8 + Math.random() * 0.4)) / 1000
      }
    })
    yield* recordOutcomes(rows)
    // The failure streaks: a success ends one, each failure extends it; 20 in a row pause the rule.
    const resets = [...new Set(rows.filter((row) => row.status === "succeeded" && (rules.get(row.rule_uuid)?.consecutive_failures ?? 0) > 0).map((row) => row.rule_uuid))]
    yield* resetFailureStreaks(resets)
    for (const row of rows) {
      if (row.status !== "failed") continue
      const rule = yield* countFailure(row.rule_uuid)
      if (rule !== undefined && rule.consecutive_failures === automationLimits.failuresBeforePause) {
        yield* insertNotification({
          profileUuid: rule.profile_uuid,
          source: "automation",
          kind: "automation.paused",
          ruleUuid: row.rule_uuid,
          title: rule.name,
          body: `The rule failed ${automationLimits.failuresBeforePause} times in a row and is paused; update it to resume`
        })
      }
    }
  })

/**
 * One runner round: claims up to `limit` due executions and runs them (a few at once). Returns
 * how many it ran (fewer than `limit` may still leave due ones of a profile at its running cap).
 */
export const runDueExecutions = (limit: number): Effect.Effect<number, SqlError, SqlClient.SqlClient | Operations> =>
  Effect.gen(function*() {
    const claimed = yield* claimExecutions(limit)
    yield* runExecutions(claimed)
    return claimed.length
  })
