import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { Int8Text, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"
import type { TraceCause } from "../kernel/Tracing.js"
import type { EventType } from "./EventType.js"

/**
 * The `outbox_events` table and its counter `event_sequence`: their rows, read and written only
 * here. Business transactions append (store/Outbox.ts); the sequencer numbers (`sequenceBatch`,
 * run by the worker); readers page through positions (EventLog.ts, the webhook dispatcher).
 */
export const EnvelopeRow = Schema.Struct({
  uuid: Schema.String,
  type: Schema.String,
  schema_version: Schema.Int,
  occurred_at: Timestamp,
  aggregate_kind: Schema.String,
  aggregate_uuid: Schema.String,
  aggregate_revision: Schema.Int,
  /** Checked against the envelope's schema where it is read (`EventEnvelope`). */
  data: Schema.Unknown,
  context: Schema.Unknown
})
export type EnvelopeRow = typeof EnvelopeRow.Type

/** A sequenced outbox row: the envelope with its place in the stream. */
export const SequencedEventRow = Schema.Struct({
  position: Int8Text,
  sequenced_at: Schema.NullOr(Timestamp),
  ...EnvelopeRow.fields
})
export type SequencedEventRow = typeof SequencedEventRow.Type

/** The envelope's columns over alias `e`. */
export const envelopeColumns = selectList(EnvelopeRow, "e")
const eventColumns = selectList(SequencedEventRow, "e", { position: "e.position::text" })
const decodeEnvelopes = rowsDecoder(EnvelopeRow)
const decodeEvents = rowsDecoder(SequencedEventRow)

export interface NewOutboxEvent {
  readonly type: EventType
  readonly schemaVersion: number
  readonly aggregate: { readonly kind: string; readonly uuid: string; readonly revision: number }
  readonly data: unknown
  readonly context: unknown
  /** The request it came from (kernel/Tracing.ts); not part of the envelope. */
  readonly trace?: TraceCause
}


/**
 * Inserts unsequenced rows (no position yet) in the caller's transaction, in one statement, in the
 * given order (their `append_order`, the order within the transaction); returns their uuids.
 */
export const insertOutboxEvents = (
  events: ReadonlyArray<NewOutboxEvent>
): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = events.map((event, ord) => ({
      ord,
      uuid: randomUUID(),
      type: event.type,
      schema_version: event.schemaVersion,
      aggregate_kind: event.aggregate.kind,
      aggregate_uuid: event.aggregate.uuid,
      aggregate_revision: event.aggregate.revision,
      data: event.data,
      context: event.context,
      trace_parent: event.trace?.traceParent ?? null,
      request_id: event.trace?.requestId ?? null
    }))
    yield* sql`
      INSERT INTO outbox_events (uuid, type, schema_version, aggregate_kind, aggregate_uuid, aggregate_revision, data, context, trace_parent, request_id)
      SELECT uuid, type, schema_version, aggregate_kind, aggregate_uuid, aggregate_revision, data, context, trace_parent, request_id
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS e(ord int, uuid uuid, type text, schema_version integer,
        aggregate_kind text, aggregate_uuid uuid, aggregate_revision integer, data jsonb, context jsonb, trace_parent text, request_id text)
      ORDER BY ord`
    return rows.map((row) => row.uuid)
  })

type Fragment = ReturnType<SqlClient.SqlClient["and"]>

/** Sequenced events `where` selects (alias `e`; it must select sequenced rows only), in position order, `limit` at most. */
export const readSequencedRows = (
  where: (sql: SqlClient.SqlClient) => Fragment,
  limit: number
): Effect.Effect<ReadonlyArray<SequencedEventRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeEvents(
      yield* sql`SELECT ${sql.literal(eventColumns)} FROM outbox_events e WHERE ${where(sql)} ORDER BY e.position LIMIT ${limit}`
    )
  })

/** One sequenced event `where` selects (alias `e`; it must select sequenced rows only), if any. */
export const findSequencedRow = (
  where: (sql: SqlClient.SqlClient) => Fragment
): Effect.Effect<Option.Option<SequencedEventRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* decodeEvents(yield* sql`SELECT ${sql.literal(eventColumns)} FROM outbox_events e WHERE ${where(sql)}`)
    return Option.fromNullable(rows[0])
  })

/** The newest sequenced events `where` selects (alias `e`; sequenced rows only), newest first, `limit` at most. */
export const readLatestSequencedRows = (
  where: (sql: SqlClient.SqlClient) => Fragment,
  limit: number
): Effect.Effect<ReadonlyArray<SequencedEventRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeEvents(
      yield* sql`SELECT ${sql.literal(eventColumns)} FROM outbox_events e WHERE ${where(sql)} ORDER BY e.position DESC LIMIT ${limit}`
    )
  })

/** The envelopes of the events `where` selects (alias `e`), in no particular order. */
export const readEnvelopeRows = (
  where: (sql: SqlClient.SqlClient) => Fragment
): Effect.Effect<ReadonlyArray<EnvelopeRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeEnvelopes(yield* sql`SELECT ${sql.literal(envelopeColumns)} FROM outbox_events e WHERE ${where(sql)}`)
  })

const LastPosition = Schema.Struct({ last_position: Int8Text })
const decodeLastPosition = rowsDecoder(LastPosition)

/** The counter: the last position handed out ("0" before any). */
export const readLastPosition: Effect.Effect<string, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* decodeLastPosition(yield* sql`SELECT last_position::text AS last_position FROM event_sequence`)
  return row?.last_position ?? "0"
})

/** Any constant works; every process sequencing one database must use the same one. */
export const sequencerLockKey = 0x62697273657121 // "birseq!"

/** Channel notified (payload: the last position) when a batch commits, for workers that wait on new events. */
export const eventsSequencedChannel = "birzha_events_sequenced"

const Pending = Schema.Struct({ pending: Schema.Boolean })
const decodePending = rowsDecoder(Pending)
const Locked = Schema.Struct({ locked: Schema.Boolean })
const decodeLocked = rowsDecoder(Locked)
const Numbered = Schema.Struct({ numbered: Schema.Int, last: Schema.NullOr(Int8Text) })
const decodeNumbered = rowsDecoder(Numbered)

/**
 * Gives committed outbox rows their positions, one batch in one transaction:
 *
 * - Only the holder of the advisory lock numbers (a transaction-scoped try-lock: any number of
 *   workers may poll; the one that gets the lock numbers the batch, the others skip this round).
 *   The lock is taken in a statement before the numbering one, so the numbering statement's
 *   snapshot already sees the previous holder's committed batch.
 * - Only committed rows are numbered (uncommitted ones are invisible to the statement), and
 *   positions only grow, so a reader following positions never skips a late commit: it simply
 *   gets a later position.
 * - Order: transaction id, then the order of `appendEvent` calls inside the transaction. Rows
 *   are numbered only below the lowest transaction that is still running and has written to the
 *   outbox, so a slow event-writing transaction is not overtaken by later ones (xmin would do the
 *   same, but xmin is cluster-wide: any long write transaction of any database on the server, a
 *   sign-in waiting on SMTP, would stall every event). A transaction that writes its first event
 *   after later ones were numbered gets later positions: never skipped, just later.
 * - The counter row and the positions change in one transaction, so positions are gapless and a
 *   reader that sees the counter at N can read every position up to N.
 *
 * Returns how many events got positions (0 when another sequencer holds the lock).
 */
export const sequenceBatch = (batchSize: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The idle poll: one probe of the partial index, no transaction, no lock. Ordered by the
    // index's columns, so that the index answers whatever the statistics say: a plain EXISTS let
    // the planner read the whole table when they were stale (a burst of events since the last
    // analyze: ~12 ms of CPU a poll in bench/README.md, `regrade-plan`).
    const [pending] = yield* decodePending(
      yield* sql`SELECT (SELECT transaction_id FROM outbox_events WHERE position IS NULL
        ORDER BY transaction_id, append_order LIMIT 1) IS NOT NULL AS pending`
    )
    if (pending?.pending !== true) return 0
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        const [lock] = yield* decodeLocked(yield* sql`SELECT pg_try_advisory_xact_lock(${sequencerLockKey}) AS locked`)
        if (lock?.locked !== true) return 0
        const [result] = yield* decodeNumbered(
          yield* sql`
          WITH writers AS (
            -- Transactions of this database still running that wrote to the outbox: they hold
            -- RowExclusiveLock on it until they end, and an ExclusiveLock on their own xid.
            SELECT t.transactionid FROM pg_locks t JOIN pg_locks r ON r.pid = t.pid
            WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
              AND r.locktype = 'relation' AND r.mode = 'RowExclusiveLock'
              AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND r.relation = 'outbox_events'::regclass
          ), horizon AS (
            SELECT coalesce(
              (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) x WHERE x::xid IN (SELECT transactionid FROM writers)),
              pg_snapshot_xmax(pg_current_snapshot())
            ) AS below
          ), cut AS (
            -- Whole transactions only: a batch that split one could let a lower transaction that
            -- commits later land between its halves.
            SELECT max(transaction_id) AS last FROM (
              SELECT transaction_id FROM outbox_events
              WHERE position IS NULL AND transaction_id < (SELECT below FROM horizon)
              ORDER BY transaction_id, append_order
              LIMIT ${batchSize}
            ) firsts
          ), next AS (
            SELECT uuid, row_number() OVER (ORDER BY transaction_id, append_order) AS n
            FROM outbox_events
            WHERE position IS NULL AND transaction_id <= (SELECT last FROM cut)
            ORDER BY transaction_id, append_order
          ), counter AS (
            UPDATE event_sequence SET last_position = last_position + (SELECT count(*) FROM next)
            WHERE EXISTS (SELECT 1 FROM next)
            RETURNING last_position - (SELECT count(*) FROM next) AS base
          ), numbered AS (
            -- The rows of next, found again through the partial index (the same conditions): joined
            -- by uuid alone, the planner may hash the whole outbox for a batch of a thousand.
            UPDATE outbox_events e SET position = counter.base + next.n, sequenced_at = clock_timestamp()
            FROM next, counter WHERE e.uuid = next.uuid AND e.position IS NULL AND e.transaction_id <= (SELECT last FROM cut)
            RETURNING e.position
          )
          SELECT count(*)::int AS numbered, max(position)::text AS last FROM numbered`
        )
        const numbered = result?.numbered ?? 0
        if (numbered > 0 && result?.last != null) {
          yield* sql`SELECT pg_notify(${eventsSequencedChannel}, ${result.last})`
        }
        return numbered
      })
    )
  })

const CauseRow = Schema.Struct({ uuid: Schema.String, trace_parent: Schema.NullOr(Schema.String), request_id: Schema.NullOr(Schema.String) })
const decodeCauses = rowsDecoder(CauseRow)

/** The requests the events came from (kernel/Tracing.ts), by event uuid; events without one are absent. */
export const eventCauses = (uuids: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, TraceCause>, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0
    ? Effect.succeed(new Map())
    : Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* decodeCauses(
        yield* sql`SELECT uuid, trace_parent, request_id FROM outbox_events
          WHERE uuid = ANY(${`{${uuids.join(",")}}`}::uuid[]) AND (trace_parent IS NOT NULL OR request_id IS NOT NULL)`
      )
      return new Map(rows.map((row) => [row.uuid, { traceParent: row.trace_parent, requestId: row.request_id }]))
    })
