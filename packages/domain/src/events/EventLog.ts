import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Either, Option, Schema } from "effect"
import { InvalidRequest, type ResyncRequired } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { decodeEventCursor, encodeEventCursor } from "./EventCursor.js"
import { EventEnvelope } from "./EventEnvelope.js"
import type { EventType } from "./EventType.js"
import { eventVisibleTo } from "./EventVisibility.js"
import {
  type EnvelopeRow,
  findSequencedRow,
  type SequencedEventRow,
  readEnvelopeRows,
  readLastPosition,
  readLatestSequencedRows,
  readSequencedRows
} from "./OutboxEventRepository.js"
import { parseTypeList } from "./TypePattern.js"

/** Page size bounds of `events.list` (spec: limit 1 to 100); ours: 20 when absent. */
export const eventPageLimits = { min: 1, max: 100, default: 20 } as const

/**
 * Positions one `events.list` call looks through at most: a caller who sees few events of a long
 * stream gets a short (even empty) page with `hasMore` and a cursor past the window, instead of
 * one request reading the whole stream.
 */
export const eventScanWindow = 10_000

export interface EventListQuery {
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
  /** Comma-separated type patterns with `*` wildcards. */
  readonly types?: string | undefined
  readonly aggregateKind?: string | undefined
  readonly aggregateUuid?: string | undefined
}

export interface EventPage {
  readonly items: ReadonlyArray<EventEnvelope>
  /** Always present: pass it back to continue after the last event of this page, now or later. */
  readonly nextCursor: string
  /** More events are readable right now; when false, poll later with `nextCursor`. */
  readonly hasMore: boolean
}

/** A sequenced event with its position, for operators (`birzha events tail`) and workers. */
export interface SequencedEvent {
  readonly position: string
  readonly sequencedAt: Date | null
  readonly event: EventEnvelope
}

export { type EnvelopeRow, envelopeColumns } from "./OutboxEventRepository.js"

/** The stored row in the envelope's wire form, exactly the spec's fields (not yet checked against `EventEnvelope`). */
export const wireEnvelopeOf = (row: EnvelopeRow) => ({
  uuid: row.uuid,
  type: row.type,
  schemaVersion: row.schema_version,
  occurredAt: row.occurred_at.toISOString(),
  aggregate: { kind: row.aggregate_kind, uuid: row.aggregate_uuid, revision: row.aggregate_revision },
  data: row.data,
  context: row.context
})

const decodeEnvelope = Schema.decodeUnknown(EventEnvelope)

/** The stored row as the envelope, checked: an emitter that broke the shape is a defect, not a 400. */
const envelopeOf = (row: SequencedEventRow): Effect.Effect<EventEnvelope> => Effect.orDie(decodeEnvelope(wireEnvelopeOf(row)))

/**
 * The last position handed out. Everything up to it is committed and readable: the sequencer
 * moves the counter in the same transaction as the positions.
 */
export const lastEventPosition: Effect.Effect<string, SqlError, SqlClient.SqlClient> = readLastPosition

const typeFilter = (types: string | undefined): Either.Either<ReadonlyArray<EventType> | undefined, InvalidRequest> =>
  types === undefined
    ? Either.right(undefined)
    : Either.mapLeft(parseTypeList(types), (message) => new InvalidRequest({ message: `types: ${message}` }))

/**
 * `events.list`: the caller's visible events after the cursor, in position order. Only sequenced
 * events exist here. The page is bounded by the counter read first, so `nextCursor` can move past
 * events the caller does not see (a follower does not rescan them), yet never past one that was
 * not yet readable when the page was read. One call looks through at most `eventScanWindow`
 * positions.
 */
export const listEvents = (
  actor: Actor,
  query: EventListQuery
): Effect.Effect<EventPage, InvalidRequest | ResyncRequired | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const after = query.cursor === undefined ? "0" : (yield* decodeEventCursor(query.cursor, now)).position
    const types = yield* typeFilter(query.types)
    const limit = query.limit ?? eventPageLimits.default
    if (!Number.isInteger(limit) || limit < eventPageLimits.min || limit > eventPageLimits.max) {
      return yield* new InvalidRequest({ message: `limit must be an integer from ${eventPageLimits.min} to ${eventPageLimits.max}` })
    }
    const last = yield* lastEventPosition
    const windowEnd = BigInt(after) + BigInt(eventScanWindow)
    const mark = BigInt(last) > windowEnd ? windowEnd.toString() : last
    const rows = yield* readSequencedRows((sql) =>
      sql.and([
        sql`e.position > ${after}`,
        sql`e.position <= ${mark}`,
        eventVisibleTo(sql, actor.profileUuid),
        ...(types === undefined ? [] : [sql.in("e.type", types)]),
        ...(query.aggregateKind === undefined ? [] : [sql`e.aggregate_kind = ${query.aggregateKind}`]),
        ...(query.aggregateUuid === undefined ? [] : [sql`e.aggregate_uuid = ${query.aggregateUuid}`])
      ]), limit + 1)
    const page = rows.slice(0, limit)
    const full = rows.length > limit
    const lastItem = page[page.length - 1]
    const position = full && lastItem !== undefined ? lastItem.position : BigInt(mark) > BigInt(after) ? mark : after
    // More to read: a full page, or a window that stopped short of the stream's end.
    const hasMore = full || BigInt(mark) < BigInt(last)
    return {
      items: yield* Effect.forEach(page, envelopeOf),
      nextCursor: encodeEventCursor({ position, issuedAt: now }),
      hasMore
    }
  })

/** `events.get`: one sequenced event the caller may see now; none when absent, unsequenced or not visible. */
export const getEvent = (actor: Actor, uuid: string): Effect.Effect<Option.Option<EventEnvelope>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const row = yield* findSequencedRow((sql) =>
      sql.and([sql`e.uuid = ${uuid}`, sql`e.position IS NOT NULL`, eventVisibleTo(sql, actor.profileUuid)])
    )
    return Option.isNone(row) ? Option.none() : Option.some(yield* envelopeOf(row.value))
  })

/**
 * Sequenced events after a position, every profile's, in position order: for the operator's
 * `birzha events tail` and for workers, never for an API caller (no visibility rule applied).
 */
export const readSequencedEvents = (
  options: { readonly after: string; readonly limit: number; readonly types?: ReadonlyArray<EventType> | undefined }
): Effect.Effect<ReadonlyArray<SequencedEvent>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const rows = yield* readSequencedRows((sql) =>
      sql.and([
        sql`e.position > ${options.after}`,
        ...(options.types === undefined ? [] : [sql.in("e.type", options.types)])
      ]), options.limit)
    return yield* Effect.forEach(rows, (row) =>
      Effect.map(envelopeOf(row), (event) => ({ position: row.position, sequencedAt: row.sequenced_at, event })))
  })

/**
 * The events of `uuids` a profile may see now, as stored rows (the webhook dispatcher checks
 * rights again at send time with the same rule as `events.list`).
 */
export const visibleEventRows = (
  profileUuid: string,
  uuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<EnvelopeRow>, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0
    ? Effect.succeed([])
    : readEnvelopeRows((sql) => sql.and([sql.in("e.uuid", uuids), eventVisibleTo(sql, profileUuid)]))

/**
 * The newest sequenced events of one type the actor may see now, newest first, `limit` at most,
 * among the last `window` positions (an automation backtest looks back this far and no further).
 */
export const latestVisibleEvents = (
  actor: Actor,
  type: EventType,
  limit: number,
  window: number
): Effect.Effect<ReadonlyArray<EventEnvelope>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const last = yield* lastEventPosition
    const from = BigInt(last) > BigInt(window) ? (BigInt(last) - BigInt(window)).toString() : "0"
    const rows = yield* readLatestSequencedRows((sql) =>
      sql.and([sql`e.position > ${from}`, sql`e.type = ${type}`, eventVisibleTo(sql, actor.profileUuid)]), limit)
    return yield* Effect.forEach(rows, envelopeOf)
  })
