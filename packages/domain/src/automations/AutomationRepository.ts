import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Int8Text, rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"

/**
 * The automation tables (`automation_rules`, `automation_rule_days`, `automation_executions`,
 * `automation_cursor`): their rows, read and written only here.
 */
export const RuleRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  account_uuid: Schema.String,
  revision: Schema.Int,
  name: Schema.String,
  event_type: Schema.String,
  filter: Schema.Unknown,
  action: Schema.Unknown,
  action_scope: Schema.NullOr(Schema.String),
  max_runs_per_day: Schema.Int,
  enabled: Schema.Boolean,
  created_via: Schema.Literal("session", "key", "mcp"),
  key_uuid: Schema.NullOr(Schema.String),
  start_position: Int8Text,
  consecutive_failures: Schema.Int,
  paused_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  deleted_at: Schema.NullOr(Timestamp),
  /** Computed: executions counted today (UTC). */
  runs_today: Schema.Int,
  /** Computed: why the rule's authority no longer holds, if it does not. */
  suspended_reason: Schema.NullOr(Schema.Literal("key_revoked", "key_expired", "grant_missing", "profile_deleted"))
})
export type RuleRow = typeof RuleRow.Type

/**
 * Why a rule's authority no longer holds (its profile deleted; its key revoked, expired or
 * without the grants), or NULL: over `automation_rules r LEFT JOIN api_keys k ON k.uuid = r.key_uuid`.
 */
export const suspendedReasonSql = `CASE
    WHEN (SELECT p.deleted_at FROM profiles p WHERE p.uuid = r.profile_uuid) IS NOT NULL THEN 'profile_deleted'
    WHEN r.key_uuid IS NULL THEN NULL
    WHEN k.revoked_at IS NOT NULL THEN 'key_revoked'
    WHEN k.expires_at IS NOT NULL AND k.expires_at <= now() THEN 'key_expired'
    WHEN NOT (k.scopes @> '["automations:write"]'::jsonb AND (r.action_scope IS NULL OR k.scopes @> jsonb_build_array(r.action_scope))) THEN 'grant_missing'
  END`

const ruleColumns = selectList(RuleRow, "r", {
  start_position: "r.start_position::text",
  runs_today: `coalesce((SELECT d.used FROM automation_rule_days d WHERE d.rule_uuid = r.uuid AND d.day = (now() AT TIME ZONE 'UTC')::date), 0)`,
  suspended_reason: suspendedReasonSql
})
const fromRules = "automation_rules r LEFT JOIN api_keys k ON k.uuid = r.key_uuid"

const decodeRule = rowDecoder(RuleRow)
const decodeRules = rowsDecoder(RuleRow)

/** A profile's rule (deleted ones too when `deleted`), locked for the transaction when `lock`. */
export const findOwnRule = (
  profileUuid: string,
  uuid: string,
  options: { readonly lock: boolean; readonly deleted: boolean }
): Effect.Effect<Option.Option<RuleRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`SELECT ${sql.literal(ruleColumns)} FROM ${sql.literal(fromRules)}
      WHERE r.uuid = ${uuid} AND r.profile_uuid = ${profileUuid} ${options.deleted ? sql`` : sql`AND r.deleted_at IS NULL`}
      ${options.lock ? sql`FOR NO KEY UPDATE OF r` : sql``}`
    return row === undefined ? Option.none() : Option.some(yield* decodeRule(row))
  })

/** Any rule by uuid (the runner re-reads its rule before acting). */
export const findRule = (uuid: string): Effect.Effect<Option.Option<RuleRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`SELECT ${sql.literal(ruleColumns)} FROM ${sql.literal(fromRules)} WHERE r.uuid = ${uuid}`
    return row === undefined ? Option.none() : Option.some(yield* decodeRule(row))
  })

/** Rules by uuid, deleted ones included (the runner re-reads a batch's rules in one query). */
export const findRules = (uuids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<RuleRow>, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0 ? Effect.succeed([]) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeRules(yield* sql`SELECT ${sql.literal(ruleColumns)} FROM ${sql.literal(fromRules)} WHERE ${sql.in("r.uuid", uuids)}`)
  })

export const listOwnRules = (profileUuid: string): Effect.Effect<ReadonlyArray<RuleRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeRules(yield* sql`SELECT ${sql.literal(ruleColumns)} FROM ${sql.literal(fromRules)}
      WHERE r.profile_uuid = ${profileUuid} AND r.deleted_at IS NULL ORDER BY r.created_at, r.uuid`)
  })

/** Live rules of a profile, counted under a lock on the profile's row (two creates cannot both pass the cap). */
export const countOwnRulesLocked = (profileUuid: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // NO KEY UPDATE: serialises two creates, not the many inserts that merely reference the profile.
    yield* sql`SELECT 1 FROM profiles WHERE uuid = ${profileUuid} FOR NO KEY UPDATE`
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM automation_rules
      WHERE profile_uuid = ${profileUuid} AND deleted_at IS NULL`
    return row?.n ?? 0
  })

export const ruleExists = (uuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql`SELECT 1 FROM automation_rules WHERE uuid = ${uuid}`).length > 0
  })

/** What a create or an update writes. */
export interface RuleValues {
  readonly name: string
  readonly eventType: string
  readonly filter: unknown
  readonly action: unknown
  readonly actionScope: string | null
  readonly maxRunsPerDay: number
  readonly enabled: boolean
  readonly createdVia: "session" | "key" | "mcp"
  readonly keyUuid: string | null
}

export const insertRule = (
  uuid: string,
  profileUuid: string,
  accountUuid: string,
  values: RuleValues
): Effect.Effect<RuleRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO automation_rules (uuid, profile_uuid, account_uuid, name, event_type, filter, action, action_scope,
        max_runs_per_day, enabled, created_via, key_uuid, start_position)
      VALUES (${uuid}, ${profileUuid}, ${accountUuid}, ${values.name}, ${values.eventType},
        ${values.filter === undefined ? null : JSON.stringify(values.filter)}::jsonb, ${JSON.stringify(values.action)}::jsonb,
        ${values.actionScope}, ${values.maxRunsPerDay}, ${values.enabled}, ${values.createdVia}, ${values.keyUuid},
        (SELECT last_position FROM event_sequence))`
    return Option.getOrThrow(yield* findRule(uuid))
  })

/** Full replacement: next revision; only events sequenced from now on trigger it; a pause ends. */
export const replaceRule = (uuid: string, values: RuleValues): Effect.Effect<RuleRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE automation_rules SET name = ${values.name}, event_type = ${values.eventType},
        filter = ${values.filter === undefined ? null : JSON.stringify(values.filter)}::jsonb,
        action = ${JSON.stringify(values.action)}::jsonb, action_scope = ${values.actionScope},
        max_runs_per_day = ${values.maxRunsPerDay}, enabled = ${values.enabled}, created_via = ${values.createdVia},
        key_uuid = ${values.keyUuid}, start_position = (SELECT last_position FROM event_sequence),
        consecutive_failures = 0, paused_at = NULL, revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid}`
    return Option.getOrThrow(yield* findRule(uuid))
  })

export const softDeleteRule = (uuid: string): Effect.Effect<RuleRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE automation_rules SET deleted_at = now(), updated_at = now(), revision = revision + 1 WHERE uuid = ${uuid}`
    return Option.getOrThrow(yield* findRule(uuid))
  })

/** Pending executions of a rule become cancelled (an update or a delete). */
export const cancelPendingExecutions = (ruleUuid: string, reason: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE automation_executions SET status = 'cancelled', cancel_reason = ${reason}, finished_at = now(), lease_until = NULL
      WHERE rule_uuid = ${ruleUuid} AND status = 'pending'`).pipe(Effect.asVoid)

export const ExecutionRow = Schema.Struct({
  uuid: Schema.String,
  rule_uuid: Schema.String,
  rule_revision: Schema.Int,
  profile_uuid: Schema.String,
  event_uuid: Schema.String,
  event_type: Schema.String,
  event_position: Int8Text,
  status: Schema.Literal("pending", "running", "succeeded", "failed", "cancelled", "skipped_limit", "skipped_chain"),
  cancel_reason: Schema.NullOr(Schema.String),
  chain_depth: Schema.Int,
  request_uuid: Schema.NullOr(Schema.String),
  attempts: Schema.Unknown,
  result: Schema.Unknown,
  created_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp)
})
export type ExecutionRow = typeof ExecutionRow.Type
const executionColumns = selectList(ExecutionRow, "x", { event_position: "x.event_position::text" })
const decodeExecutions = rowsDecoder(ExecutionRow)

/** The latest executions of a rule, newest first. */
export const latestExecutions = (
  ruleUuid: string,
  limit: number,
  requestUuid: string | undefined
): Effect.Effect<ReadonlyArray<ExecutionRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeExecutions(yield* sql`SELECT ${sql.literal(executionColumns)} FROM automation_executions x
      WHERE x.rule_uuid = ${ruleUuid} ${requestUuid === undefined ? sql`` : sql`AND x.request_uuid = ${requestUuid}`}
      ORDER BY x.created_at DESC, x.uuid DESC LIMIT ${limit}`)
  })

/** Executions counted today (UTC) for a rule. */
export const usedToday = (ruleUuid: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ used: number }>`SELECT used FROM automation_rule_days
      WHERE rule_uuid = ${ruleUuid} AND day = (now() AT TIME ZONE 'UTC')::date`
    return row?.used ?? 0
  })

const Position = Schema.Struct({ position: Int8Text })
export const decodePosition = rowDecoder(Position)

/** Ours (MARKETPLACE §5.2, §8): finished executions are kept 30 days, notifications 90. */
export const automationRetention = { executionDays: 30, notificationDays: 90 } as const

/** Deletes finished executions and notifications past their retention, in batches; returns the counts. */
export const cleanAutomationHistory: Effect.Effect<{ readonly executions: number; readonly notifications: number }, SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const drain = (statement: Effect.Effect<ReadonlyArray<{ n: number }>, SqlError>) =>
      Effect.gen(function*() {
        let total = 0
        for (;;) {
          const [row] = yield* statement
          total += row?.n ?? 0
          if ((row?.n ?? 0) < 5000) return total
        }
      })
    const executions = yield* drain(sql<{ n: number }>`WITH gone AS (
        DELETE FROM automation_executions WHERE uuid IN (
          SELECT uuid FROM automation_executions WHERE status NOT IN ('pending', 'running')
            AND created_at < now() - make_interval(days => ${automationRetention.executionDays}) LIMIT 5000)
        RETURNING 1) SELECT count(*)::int AS n FROM gone`)
    const notifications = yield* drain(sql<{ n: number }>`WITH gone AS (
        DELETE FROM notifications WHERE uuid IN (
          SELECT uuid FROM notifications WHERE created_at < now() - make_interval(days => ${automationRetention.notificationDays}) LIMIT 5000)
        RETURNING 1) SELECT count(*)::int AS n FROM gone`)
    const days = yield* sql<{ n: number }>`WITH gone AS (
        DELETE FROM automation_rule_days WHERE day < (now() AT TIME ZONE 'UTC')::date - 2 RETURNING 1) SELECT count(*)::int AS n FROM gone`
    void days
    return { executions, notifications }
  })
