import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { Int8Text, rowsDecoder, Timestamp } from "../store/Rows.js"

/**
 * The state of the service's queues, read from the database: what the Prometheus endpoint exports
 * at each scrape (packages/infrastructure/src/Metrics.ts) and the admin area's health view shows, read
 * by these queries only. None reads a whole large table: what is still to be done is counted over
 * partial indexes, finished rows (which only retention removes) exactly while a table is small and
 * from Postgres's statistics once it is not (`rowsByStatus`).
 */
export const deliveryStatuses = ["pending", "succeeded", "failed", "cancelled"] as const
export const gradingJobStatuses = ["queued", "running", "succeeded", "failed", "cancelled"] as const
/** An automation execution's outcomes (`skipped_limit`: refused by the daily quota). */
export const automationExecutionStatuses = ["pending", "running", "succeeded", "failed", "cancelled", "skipped_limit", "skipped_chain"] as const

export interface QueueState {
  /** Committed events waiting for the sequencer to number them. */
  readonly outboxDepth: number
  /** Age of the oldest event waiting for a position, in seconds (0 when none waits). */
  readonly sequencingLagSeconds: number
  readonly webhookDeliveries: { readonly [S in (typeof deliveryStatuses)[number]]: number }
  /** How long the most overdue webhook attempt has been due, in seconds (0 when none is overdue). */
  readonly webhookDeliveryLagSeconds: number
  readonly automationExecutions: { readonly [S in (typeof automationExecutionStatuses)[number]]: number }
  readonly gradingJobs: { readonly [S in (typeof gradingJobStatuses)[number]]: number }
}

const decodeOutbox = rowsDecoder(Schema.Struct({ depth: Int8Text, lag: Schema.NullOr(Schema.Union(Schema.String, Schema.Number)) }))
const decodeLag = rowsDecoder(Schema.Struct({ lag: Schema.NullOr(Schema.Union(Schema.String, Schema.Number)) }))
const decodeCounts = rowsDecoder(Schema.Struct({ status: Schema.String, count: Int8Text }))

const decodeSize = rowsDecoder(Schema.Struct({ rows: Schema.Number }))

const countsOf = (rows: ReadonlyArray<{ readonly status: string; readonly count: string }>) => new Map(rows.map((row) => [row.status, Number(row.count)]))

/**
 * Rows a table may hold, by Postgres's own estimate (`pg_class.reltuples`), before its finished rows
 * are estimated rather than counted: an exact count then reads at most about this many rows
 * (docs/decisions.md, "Queue gauges without whole-table counts").
 */
export const exactCountRows = 100_000

/**
 * A table's rows by status, every status present (zero included, so a series exists before its
 * first row). Exact while the table is small by Postgres's estimate, or has never been analysed (the
 * embedded database, which runs no autovacuum). Above `exactCountRows`, the statuses still in
 * flight are counted exactly over their partial index (`inFlight`: a backlog, however long, is
 * what an operator acts on), and the finished ones are Postgres's estimate of the table's rows
 * times each status's share in its statistics (`pg_stats`, which autovacuum's analyse keeps within
 * about a tenth of the table's changes): what the planner would estimate for `WHERE status = …`.
 */
const rowsByStatus = <const S extends ReadonlyArray<string>>(table: string, statuses: S, inFlight: ReadonlyArray<S[number]>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [size] = yield* decodeSize(yield* sql`SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = to_regclass(${table})`)
    let counts: ReadonlyMap<string, number>
    if (size === undefined || size.rows < 0 || size.rows <= exactCountRows) {
      counts = countsOf(yield* decodeCounts(yield* sql`SELECT status, count(*) AS count FROM ${sql(table)} GROUP BY status`))
    } else {
      const exact = countsOf(yield* decodeCounts(yield* sql`
        SELECT status, count(*) AS count FROM ${sql(table)} WHERE ${sql.in("status", inFlight)} GROUP BY status`))
      const estimated = countsOf(yield* decodeCounts(yield* sql`
        SELECT v.status, round(c.reltuples * v.share)::int8 AS count
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = 'status'
        CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(status, share)
        WHERE c.oid = to_regclass(${table})`))
      counts = new Map(statuses.map((status) => [status, ((inFlight as ReadonlyArray<string>).includes(status) ? exact : estimated).get(status) ?? 0]))
    }
    return Object.fromEntries(statuses.map((status) => [status, counts.get(status) ?? 0])) as { readonly [K in S[number]]: number }
  })

export const readQueueState: Effect.Effect<QueueState, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [outbox] = yield* decodeOutbox(yield* sql`
    SELECT count(*) AS depth, extract(epoch FROM clock_timestamp() - min(occurred_at)) AS lag
    FROM outbox_events WHERE position IS NULL`)
  const webhookDeliveries = yield* rowsByStatus("webhook_deliveries", deliveryStatuses, ["pending"])
  // Attempts due and not in a worker's hands (a lease still running is an attempt in flight), read
  // per endpoint through the `(endpoint_uuid, next_attempt_at)` index, bounded by `now()` (the
  // statement's start; `clock_timestamp()` could not bound an index scan): a backlog of retries
  // scheduled for later is not scanned at every scrape.
  const [deliveryLag] = yield* decodeLag(yield* sql`
    SELECT extract(epoch FROM clock_timestamp() - min(d.due)) AS lag
    FROM webhook_endpoints w CROSS JOIN LATERAL (
      SELECT min(next_attempt_at) AS due FROM webhook_deliveries
      WHERE endpoint_uuid = w.uuid AND status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
    ) d`)
  const automationExecutions = yield* rowsByStatus("automation_executions", automationExecutionStatuses, ["pending", "running"])
  const gradingJobs = yield* rowsByStatus("learning_grading_jobs", gradingJobStatuses, ["queued", "running"])
  return {
    outboxDepth: Number(outbox?.depth ?? 0),
    sequencingLagSeconds: Number(outbox?.lag ?? 0),
    webhookDeliveries,
    webhookDeliveryLagSeconds: Number(deliveryLag?.lag ?? 0),
    automationExecutions,
    gradingJobs
  }
})

/** A webhook endpoint whose deliveries fail (or that was disabled for failing): an operator's worry. */
export const FailingEndpointRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  url: Schema.String,
  state: Schema.String,
  failing_since: Schema.NullOr(Timestamp),
  disabled_reason: Schema.NullOr(Schema.String),
  pending: Int8Text
})
const decodeFailingEndpoints = rowsDecoder(FailingEndpointRow)

/** The endpoints failing now or disabled for failing, longest failing first (at most `limit`). */
export const failingEndpoints = (limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeFailingEndpoints(yield* sql`
      SELECT e.uuid, e.profile_uuid, e.url, e.state, e.failing_since, e.disabled_reason,
        (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_uuid = e.uuid AND d.status = 'pending') AS pending
      FROM webhook_endpoints e
      WHERE e.deleted_at IS NULL AND (e.failing_since IS NOT NULL OR e.disabled_reason = 'failing')
      ORDER BY e.failing_since NULLS LAST, e.uuid LIMIT ${limit}`)
  })

/** A checker suspended by its staff or by the circuit breaker: its learners' work waits ungraded. */
export const SuspendedCheckerRow = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  course_uuid: Schema.String,
  course_title: Schema.String,
  suspended_at: Timestamp,
  automatic: Schema.Boolean
})
const decodeSuspendedCheckers = rowsDecoder(SuspendedCheckerRow)

/** The suspended checkers, most recently suspended first (at most `limit`). */
export const suspendedCheckers = (limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeSuspendedCheckers(yield* sql`
      SELECT c.uuid, c.name, c.course_uuid, co.title AS course_title, c.updated_at AS suspended_at,
        coalesce((SELECT k.action = 'auto_suspend' FROM learning_checker_controls k
          WHERE k.checker_uuid = c.uuid ORDER BY k.created_at DESC, k.uuid DESC LIMIT 1), false) AS automatic
      FROM learning_checkers c JOIN learning_courses co ON co.uuid = c.course_uuid
      WHERE c.status = 'suspended'
      ORDER BY c.updated_at DESC, c.uuid LIMIT ${limit}`)
  })

/** A message of the development mailbox (written by the development mailer, packages/infrastructure/src/mail/DevelopmentMailbox.ts). */
export const MailboxRow = Schema.Struct({
  uuid: Schema.String,
  to_address: Schema.String,
  subject: Schema.String,
  text_body: Schema.String,
  created_at: Timestamp
})
const decodeMailbox = rowsDecoder(MailboxRow)

/** The development mailbox, newest first, to one address when given (compared lower-cased). */
export const mailboxMessages = (to: string | undefined, limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeMailbox(yield* (to === undefined
      ? sql`SELECT uuid, to_address, subject, text_body, created_at FROM development_mailbox ORDER BY created_at DESC LIMIT ${limit}`
      : sql`SELECT uuid, to_address, subject, text_body, created_at FROM development_mailbox
          WHERE lower(to_address) = ${to} ORDER BY created_at DESC LIMIT ${limit}`))
  })
