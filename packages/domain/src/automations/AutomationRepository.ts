import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { deleteExpiredNotifications } from "../notifications/NotificationRepository.js"
import { automationLimits } from "./Rule.js"
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
const Count = Schema.Struct({ n: Schema.Number })
const decodeCount = rowsDecoder(Count)

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
    const [row] = yield* Effect.flatMap(
      sql`SELECT count(*)::int AS n FROM automation_rules WHERE profile_uuid = ${profileUuid} AND deleted_at IS NULL`,
      decodeCount
    )
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
    const [row] = yield* Effect.flatMap(
      sql`SELECT used FROM automation_rule_days WHERE rule_uuid = ${ruleUuid} AND day = (now() AT TIME ZONE 'UTC')::date`,
      decodeUsedOnly
    )
    return row?.used ?? 0
  })

const decodeUsedOnly = rowsDecoder(Schema.Struct({ used: Schema.Int }))

const Position = Schema.Struct({ position: Int8Text })
export const decodePosition = rowDecoder(Position)

/** Ours: finished executions are kept 30 days, notifications 90. */
export const automationRetention = { executionDays: 30, notificationDays: 90 } as const

/** Deletes finished executions and notifications past their retention, in batches; returns the counts. */
export const cleanAutomationHistory: Effect.Effect<{ readonly executions: number; readonly notifications: number }, SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const drain = (statement: Effect.Effect<number, SqlError, SqlClient.SqlClient>) =>
      Effect.gen(function*() {
        let total = 0
        for (;;) {
          const n = yield* statement
          total += n
          if (n < 5000) return total
        }
      })
    const executions = yield* drain(Effect.map(
      Effect.flatMap(
        sql`WITH gone AS (
        DELETE FROM automation_executions WHERE uuid IN (
          SELECT uuid FROM automation_executions WHERE status NOT IN ('pending', 'running')
            AND created_at < now() - make_interval(days => ${automationRetention.executionDays}) LIMIT 5000)
        RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        decodeCount
      ),
      (rows) => rows[0]?.n ?? 0
    ))
    const notifications = yield* drain(deleteExpiredNotifications(automationRetention.notificationDays, 5000))
    yield* sql`WITH gone AS (
        DELETE FROM automation_rule_days WHERE day < (now() AT TIME ZONE 'UTC')::date - 2 RETURNING 1) SELECT count(*)::int AS n FROM gone`
    return { executions, notifications }
  })

/** A match of the fan-out: the execution it creates (`skipped_chain` ones finished at once). */
export interface NewExecution {
  readonly rule_uuid: string
  readonly rule_revision: number
  readonly profile_uuid: string
  readonly event_uuid: string
  readonly event_type: string
  readonly event_position: string
  readonly status: "pending" | "skipped_chain"
  readonly chain_depth: number
  readonly request_uuid: string | null
}

const decodeInserted = rowsDecoder(Schema.Struct({ uuid: Schema.String, rule_uuid: Schema.String, event_position: Int8Text, status: Schema.String }))

/** Inserts the fan-out's executions in one statement; a row that exists (a batch run again) is left as it is. Returns the new ones. */
export const insertExecutions = (matches: ReadonlyArray<NewExecution>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`INSERT INTO automation_executions
            (rule_uuid, rule_revision, profile_uuid, event_uuid, event_type, event_position, status, chain_depth, request_uuid, finished_at)
          SELECT m.rule_uuid, m.rule_revision, m.profile_uuid, m.event_uuid, m.event_type, m.event_position, m.status, m.chain_depth,
            m.request_uuid, CASE WHEN m.status = 'pending' THEN NULL ELSE now() END
          FROM jsonb_to_recordset(${JSON.stringify(matches)}::jsonb) AS m(rule_uuid uuid, rule_revision integer, profile_uuid uuid,
            event_uuid uuid, event_type text, event_position bigint, status text, chain_depth integer, request_uuid uuid)
          ORDER BY m.event_position
          ON CONFLICT (rule_uuid, event_uuid) DO NOTHING
          RETURNING uuid, rule_uuid, event_position::text AS event_position, status`,
      decodeInserted
    ))

const decodeUsed = rowsDecoder(Schema.Struct({ rule_uuid: Schema.String, used: Schema.Int }))

/**
 * Today's (UTC) counters of the rules, created when missing and locked for the transaction, in
 * uuid order (docs/decisions.md "Lock order"): `rules` must be sorted.
 */
export const lockTodayCounters = (rules: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO automation_rule_days (rule_uuid, day, used)
            SELECT r::uuid, (now() AT TIME ZONE 'UTC')::date, 0 FROM jsonb_array_elements_text(${JSON.stringify(rules)}::jsonb) AS r
            ON CONFLICT (rule_uuid, day) DO NOTHING`
    return yield* decodeUsed(yield* sql`SELECT rule_uuid, used FROM automation_rule_days
            WHERE ${sql.in("rule_uuid", rules)} AND day = (now() AT TIME ZONE 'UTC')::date ORDER BY rule_uuid FOR NO KEY UPDATE`)
  })

/** Counts today's runs of the rules (counters locked by `lockTodayCounters`). */
export const countTodayRuns = (counted: ReadonlyArray<{ readonly rule_uuid: string; readonly n: number }>) =>
  counted.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE automation_rule_days d SET used = d.used + c.n
              FROM jsonb_to_recordset(${JSON.stringify(counted)}::jsonb) AS c(rule_uuid uuid, n integer)
              WHERE d.rule_uuid = c.rule_uuid AND d.day = (now() AT TIME ZONE 'UTC')::date`.pipe(Effect.asVoid))

/** Executions past their rule's daily limit: skipped. */
export const skipOverLimit = (uuids: ReadonlyArray<string>) =>
  uuids.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE automation_executions SET status = 'skipped_limit', finished_at = now()
              WHERE ${sql.in("uuid", uuids)}`.pipe(Effect.asVoid))

export const ClaimedRow = Schema.Struct({
  uuid: Schema.String,
  rule_uuid: Schema.String,
  rule_revision: Schema.Int,
  profile_uuid: Schema.String,
  event_uuid: Schema.String,
  event_type: Schema.String,
  event_position: Int8Text,
  chain_depth: Schema.Int,
  request_uuid: Schema.NullOr(Schema.String),
  attempts: Schema.Unknown,
  created_at: Timestamp
})
export type ClaimedRow = typeof ClaimedRow.Type
const decodeClaimed = rowsDecoder(ClaimedRow)

/** How long a claim holds an execution; a dead worker's executions are due again after it. */
export const executionLeaseSeconds = 60

/**
 * Claims due executions (pending and due, or running with a lapsed lease), oldest first, at most
 * `runningPerProfile` running for one profile at once (over every worker), so one busy profile
 * never holds the runner.
 */
export const claimExecutions = (limit: number): Effect.Effect<ReadonlyArray<ClaimedRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeClaimed(yield* sql`WITH due AS (
        SELECT uuid, profile_uuid, next_attempt_at FROM automation_executions
        WHERE status IN ('pending', 'running') AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt_at LIMIT ${limit * 4} FOR UPDATE SKIP LOCKED
      ), ranked AS (
        SELECT d.uuid, d.next_attempt_at, row_number() OVER (PARTITION BY d.profile_uuid ORDER BY d.next_attempt_at) AS n,
          (SELECT count(*) FROM automation_executions r
            WHERE r.profile_uuid = d.profile_uuid AND r.status = 'running' AND r.lease_until >= now()) AS running
        FROM due d
      ), picked AS (
        SELECT uuid FROM ranked WHERE n + running <= ${automationLimits.runningPerProfile} ORDER BY next_attempt_at LIMIT ${limit}
      )
      UPDATE automation_executions x
      SET status = 'running', lease_until = now() + make_interval(secs => ${executionLeaseSeconds})
      FROM picked WHERE x.uuid = picked.uuid
      RETURNING x.uuid, x.rule_uuid, x.rule_revision, x.profile_uuid, x.event_uuid, x.event_type, x.event_position::text AS event_position,
        x.chain_depth, x.request_uuid, x.attempts, x.created_at`)
  })

/** The fan-out's pending notification executions, acted on in its transaction: succeeded, with their attempt and notification. */
export const recordNotified = (
  rows: ReadonlyArray<{ readonly uuid: string; readonly notification: string }>,
  attempt: unknown
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE automation_executions x SET status = 'succeeded', attempts = x.attempts || jsonb_build_array(${JSON.stringify(attempt)}::jsonb),
        result = jsonb_build_object('notificationUuid', o.notification), finished_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS o(uuid uuid, notification text)
      WHERE x.uuid = o.uuid AND x.status = 'pending'`.pipe(Effect.asVoid))

/** The outcome of one running execution, as the runner records it. */
export interface ExecutionOutcome {
  readonly uuid: string
  readonly status: string
  readonly acted: boolean
  readonly attempt: unknown
  readonly result: unknown
  readonly cancel_reason: string | null
  readonly delay_seconds: number
}

/** Records a batch's outcomes in one statement (running executions only; a retry is pending again after its delay). */
export const recordOutcomes = (rows: ReadonlyArray<ExecutionOutcome>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE automation_executions x SET status = o.status,
        attempts = CASE WHEN o.acted THEN x.attempts || jsonb_build_array(o.attempt) ELSE x.attempts END,
        result = o.result, cancel_reason = o.cancel_reason,
        next_attempt_at = now() + make_interval(secs => o.delay_seconds), lease_until = NULL,
        finished_at = CASE WHEN o.status = 'pending' THEN NULL ELSE now() END
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS o(uuid uuid, status text, acted boolean, attempt jsonb, result jsonb,
        cancel_reason text, delay_seconds double precision)
      WHERE x.uuid = o.uuid AND x.status = 'running'`.pipe(Effect.asVoid))

/** A success ends the failure streaks of these rules. */
export const resetFailureStreaks = (ruleUuids: ReadonlyArray<string>) =>
  ruleUuids.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE automation_rules SET consecutive_failures = 0 WHERE ${sql.in("uuid", ruleUuids)}`.pipe(Effect.asVoid))

const decodeStreak = rowsDecoder(Schema.Struct({ consecutive_failures: Schema.Int, profile_uuid: Schema.String, name: Schema.String }))

/** A failure extends the rule's streak; `failuresBeforePause` in a row pause it. Returns the rule's streak after it. */
export const countFailure = (ruleUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE automation_rules
        SET consecutive_failures = consecutive_failures + 1,
          paused_at = CASE WHEN consecutive_failures + 1 >= ${automationLimits.failuresBeforePause} THEN now() ELSE paused_at END
        WHERE uuid = ${ruleUuid} RETURNING consecutive_failures, profile_uuid, name`,
        decodeStreak
      ),
      (rows) => rows[0]
    ))
