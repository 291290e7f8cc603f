import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"
import { DisabledReason, PayloadMode, webhookLimits, WebhookState } from "./WebhookEndpoint.js"

/**
 * The `webhook_endpoints` table: its row, read and written only here. The webhooks area's
 * services (the owner's commands in WebhookEndpoints.ts, the worker's delivery bookkeeping in
 * WebhookDispatch.ts) change endpoints through these functions; nothing else writes the table.
 */
export const EndpointRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  url: Schema.String,
  description: Schema.String,
  event_types: Schema.Array(Schema.String),
  payload_mode: PayloadMode,
  /** Generated from the facts below (migration 0009). */
  state: WebhookState,
  config_version: Schema.Int,
  approved_at: Schema.NullOr(Timestamp),
  verified_at: Schema.NullOr(Timestamp),
  paused_at: Schema.NullOr(Timestamp),
  disabled_at: Schema.NullOr(Timestamp),
  disabled_reason: Schema.NullOr(DisabledReason),
  failing_since: Schema.NullOr(Timestamp),
  secret_sealed: Schema.String,
  previous_secret_sealed: Schema.NullOr(Schema.String),
  previous_secret_expires_at: Schema.NullOr(Timestamp),
  secret_rotated_at: Schema.NullOr(Timestamp),
  revision: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type EndpointRow = typeof EndpointRow.Type

/** The row's columns over alias `w`. */
export const endpointColumns = selectList(EndpointRow, "w")

const decodeRow = rowDecoder(EndpointRow)
const decodeRows = rowsDecoder(EndpointRow)

const one = (rows: ReadonlyArray<unknown>) =>
  rows.length === 0 ? Effect.succeed(Option.none<EndpointRow>()) : Effect.asSome(decodeRow(rows[0]))

/** The changed row of an UPDATE or INSERT that must return one. */
const returned = (rows: ReadonlyArray<unknown>) =>
  rows.length === 0 ? Effect.dieMessage("webhook_endpoints: the statement returned no row") : decodeRow(rows[0])

/**
 * A profile's live endpoint, locked for the rest of the transaction when `lock`: `FOR NO KEY
 * UPDATE`, which serialises the owner's commands and the worker's bookkeeping but lets rows that
 * only reference the endpoint (a delivery queued by an automation rule) be inserted meanwhile.
 */
export const findOwnEndpoint = (
  profileUuid: string,
  uuid: string,
  options: { readonly lock: boolean }
): Effect.Effect<Option.Option<EndpointRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints w
        WHERE w.uuid = ${uuid} AND w.profile_uuid = ${profileUuid} AND w.deleted_at IS NULL
        ${options.lock ? sql`FOR NO KEY UPDATE` : sql``}`,
      one
    ))

/** Any live endpoint by uuid (the approval page: the approver is checked against its owner after). */
export const findLiveEndpoint = (uuid: string): Effect.Effect<Option.Option<EndpointRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints w WHERE w.uuid = ${uuid} AND w.deleted_at IS NULL`,
      one
    ))

/** A profile's live endpoints, oldest first. */
export const listOwnEndpoints = (profileUuid: string): Effect.Effect<ReadonlyArray<EndpointRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints w
        WHERE w.profile_uuid = ${profileUuid} AND w.deleted_at IS NULL ORDER BY w.created_at, w.uuid`,
      decodeRows
    ))

const Count = Schema.Struct({ n: Schema.Int })
const decodeCount = rowDecoder(Count)

/**
 * How many live endpoints a profile has, counted under a lock on the profile's row, so two
 * concurrent creates cannot both pass the limit.
 */
export const countOwnEndpointsLocked = (profileUuid: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // NO KEY UPDATE: serialises two creates, not the many inserts that merely reference the profile.
    yield* sql`SELECT 1 FROM profiles WHERE uuid = ${profileUuid} FOR NO KEY UPDATE`
    const [count] = yield* sql`SELECT count(*)::int AS n FROM webhook_endpoints
      WHERE profile_uuid = ${profileUuid} AND deleted_at IS NULL`
    return count === undefined ? 0 : (yield* decodeCount(count)).n
  })

export interface NewEndpoint {
  readonly uuid: string
  readonly profileUuid: string
  readonly url: string
  readonly description: string
  readonly eventTypes: ReadonlyArray<string>
  readonly payloadMode: PayloadMode
  readonly secretSealed: string
}

export const insertEndpoint = (endpoint: NewEndpoint): Effect.Effect<EndpointRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`INSERT INTO webhook_endpoints AS w (uuid, profile_uuid, url, description, event_types, payload_mode, secret_sealed)
        VALUES (${endpoint.uuid}, ${endpoint.profileUuid}, ${endpoint.url}, ${endpoint.description},
          ${JSON.stringify(endpoint.eventTypes)}::jsonb, ${endpoint.payloadMode}, ${endpoint.secretSealed})
        RETURNING ${sql.literal(endpointColumns)}`,
      returned
    ))

/** The facts an owner's update sets (the state follows from them). */
export interface EndpointSettings {
  readonly url: string
  readonly eventTypes: ReadonlyArray<string>
  readonly payloadMode: PayloadMode
  readonly description: string
  readonly configVersion: number
  readonly approvedAt: Date | null
  readonly verifiedAt: Date | null
  readonly pausedAt: Date | null
  readonly disabledAt: Date | null
  readonly disabledReason: DisabledReason | null
  readonly failingSince: Date | null
}

/**
 * Sets an endpoint's facts, next revision. `becomesActive`: events sequenced while it was not
 * active are not sent to it, so its position moves to the last one.
 */
export const updateEndpointSettings = (
  uuid: string,
  next: EndpointSettings,
  becomesActive: boolean
): Effect.Effect<EndpointRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE webhook_endpoints w SET
          url = ${next.url}, event_types = ${JSON.stringify(next.eventTypes)}::jsonb, payload_mode = ${next.payloadMode},
          description = ${next.description}, config_version = ${next.configVersion}, approved_at = ${next.approvedAt},
          verified_at = ${next.verifiedAt}, paused_at = ${next.pausedAt}, disabled_at = ${next.disabledAt},
          disabled_reason = ${next.disabledReason}, failing_since = ${next.failingSince},
          after_position = CASE WHEN ${becomesActive} THEN (SELECT last_position FROM event_sequence) ELSE w.after_position END,
          revision = w.revision + 1, updated_at = now()
        WHERE w.uuid = ${uuid}
        RETURNING ${sql.literal(endpointColumns)}`,
      returned
    ))

const Deleted = Schema.Struct({ deleted: Schema.Boolean })
const decodeDeleted = rowDecoder(Deleted)

/** Whether a profile's endpoint (deleted ones included) is deleted, locked; none when it has no such endpoint. */
export const lockOwnEndpointDeletion = (
  profileUuid: string,
  uuid: string
): Effect.Effect<Option.Option<boolean>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`SELECT deleted_at IS NOT NULL AS deleted FROM webhook_endpoints
      WHERE uuid = ${uuid} AND profile_uuid = ${profileUuid} FOR NO KEY UPDATE`
    return row === undefined ? Option.none() : Option.some((yield* decodeDeleted(row)).deleted)
  })

export const softDeleteEndpoint = (uuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE webhook_endpoints SET deleted_at = now(), updated_at = now(), revision = revision + 1 WHERE uuid = ${uuid}`)
    .pipe(Effect.asVoid)

/** The owner approved the URL: a test must answer 2xx before events flow. */
export const approveEndpoint = (uuid: string): Effect.Effect<EndpointRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE webhook_endpoints w SET approved_at = now(), verified_at = NULL, revision = w.revision + 1, updated_at = now()
        WHERE w.uuid = ${uuid} RETURNING ${sql.literal(endpointColumns)}`,
      returned
    ))

/** A new signing secret; the replaced one keeps signing for `previousSecretHours`. */
export const rotateEndpointSecret = (uuid: string, secretSealed: string): Effect.Effect<EndpointRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE webhook_endpoints w SET
          previous_secret_sealed = w.secret_sealed,
          previous_secret_expires_at = now() + make_interval(hours => ${webhookLimits.previousSecretHours}),
          secret_sealed = ${secretSealed}, secret_rotated_at = now(), revision = w.revision + 1, updated_at = now()
        WHERE w.uuid = ${uuid} RETURNING ${sql.literal(endpointColumns)}`,
      returned
    ))

export const EndpointSummary = Schema.Struct({ url: Schema.String, state: WebhookState, deleted: Schema.Boolean })
const decodeSummary = rowDecoder(EndpointSummary)

/** Any endpoint by uuid, deleted ones included, for the operator. */
export const findEndpointSummary = (
  uuid: string
): Effect.Effect<Option.Option<typeof EndpointSummary.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`SELECT url, state, deleted_at IS NOT NULL AS deleted FROM webhook_endpoints WHERE uuid = ${uuid}`
    return row === undefined ? Option.none() : Option.some(yield* decodeSummary(row))
  })

const Clock = Schema.Struct({ now: Timestamp })
const decodeClock = rowDecoder(Clock)

/** The transaction's `now()`, so facts set in one command carry one time. */
export const transactionNow: Effect.Effect<Date, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql`SELECT now() AS now`
  return (yield* decodeClock(row)).now
})

// ---- the worker's bookkeeping (through WebhookDispatch.ts) ----------------------------------

/** The endpoints one batch of outcomes may change, by the change (see `recordOutcomes`). */
export interface EndpointChanges {
  /** A 2xx: their failing streak ends. */
  readonly ending: ReadonlyArray<string>
  /** An event attempt without a 2xx: a streak starts, or a long one disables them. */
  readonly failing: ReadonlyArray<string>
  /** A 410: disabled at once. */
  readonly gone: ReadonlyArray<string>
  /** A 2xx test of these configurations. */
  readonly tested: ReadonlyArray<{ readonly uuid: string; readonly configVersion: number }>
}

const UuidRow = Schema.Struct({ uuid: Schema.String })
const decodeUuidRows = rowsDecoder(UuidRow)

/**
 * Locks, in uuid order (docs/decisions.md, "Lock order"), the endpoints the batch's bookkeeping
 * will change: those the statements below would match now (a streak already started is not
 * locked again, so the common failing batch takes no lock). `FOR NO KEY UPDATE`, as those
 * statements' own locks are. Returns the locked uuids: the statements then change only those, so
 * no row is locked out of order later.
 */
export const lockEndpointsToChange = (changes: EndpointChanges): Effect.Effect<ReadonlySet<string>, SqlError, SqlClient.SqlClient> => {
  const any = changes.ending.length + changes.failing.length + changes.gone.length + changes.tested.length
  return any === 0 ? Effect.succeed(new Set()) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const list = (uuids: ReadonlyArray<string>) => JSON.stringify(uuids)
    const rows = yield* decodeUuidRows(
      yield* sql`SELECT w.uuid FROM webhook_endpoints w
        WHERE (w.uuid IN (SELECT jsonb_array_elements_text(${list(changes.ending)}::jsonb)::uuid) AND w.failing_since IS NOT NULL)
          OR (w.uuid IN (SELECT jsonb_array_elements_text(${list(changes.failing)}::jsonb)::uuid) AND (w.failing_since IS NULL
            OR (w.disabled_at IS NULL AND w.deleted_at IS NULL
              AND w.failing_since <= now() - make_interval(days => ${webhookLimits.failingDaysBeforeDisable}))))
          OR (w.uuid IN (SELECT jsonb_array_elements_text(${list(changes.gone)}::jsonb)::uuid) AND w.disabled_at IS NULL AND w.deleted_at IS NULL)
          OR (w.uuid IN (SELECT jsonb_array_elements_text(${list(changes.tested.map((t) => t.uuid))}::jsonb)::uuid)
            AND w.approved_at IS NOT NULL AND w.verified_at IS NULL AND w.deleted_at IS NULL)
        ORDER BY w.uuid FOR NO KEY UPDATE`
    )
    return new Set(rows.map((row) => row.uuid))
  })
}

/** A 2xx ends a failing streak. */
export const endFailingStreaks = (uuids: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE ${sql.in("uuid", uuids)} AND failing_since IS NOT NULL`)
    .pipe(Effect.asVoid)

/** An event attempt without a 2xx starts a failing streak (or extends one: its start stays). */
export const startFailingStreaks = (uuids: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE webhook_endpoints SET failing_since = now() WHERE ${sql.in("uuid", uuids)} AND failing_since IS NULL`)
    .pipe(Effect.asVoid)

/** An endpoint the service just disabled, for the owner's notice. */
export const DisabledEndpoint = Schema.Struct({
  uuid: Schema.String,
  url: Schema.String,
  profile_uuid: Schema.String,
  disabled_reason: DisabledReason,
  disabled_at: Timestamp
})
export type DisabledEndpoint = typeof DisabledEndpoint.Type
const disabledColumns = selectList(DisabledEndpoint, "w")
const decodeDisabled = rowsDecoder(DisabledEndpoint)

/**
 * Disables live, not yet disabled endpoints: `gone` (the receiver answered 410) at once,
 * `failing` only those failing for `failingDaysBeforeDisable`. Returns the ones disabled now.
 */
export const disableEndpoints = (
  uuids: ReadonlyArray<string>,
  reason: DisabledReason
): Effect.Effect<ReadonlyArray<DisabledEndpoint>, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0 ? Effect.succeed([]) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE webhook_endpoints w SET disabled_at = now(), disabled_reason = ${reason}, revision = w.revision + 1, updated_at = now()
        WHERE ${sql.in("w.uuid", uuids)} AND w.disabled_at IS NULL AND w.deleted_at IS NULL
          ${reason === "failing" ? sql`AND w.failing_since <= now() - make_interval(days => ${webhookLimits.failingDaysBeforeDisable})` : sql``}
        RETURNING ${sql.literal(disabledColumns)}`,
      decodeDisabled
    ))

/**
 * A test answered 2xx: the configuration it tested (`configVersion`) becomes verified, and events
 * sequenced from now on go to it. A test of a changed, unapproved or deleted endpoint verifies nothing.
 */
export const verifyTestedEndpoints = (
  tested: ReadonlyArray<{ readonly uuid: string; readonly configVersion: number }>
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  tested.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE webhook_endpoints w SET verified_at = now(),
        after_position = (SELECT last_position FROM event_sequence), revision = w.revision + 1, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(tested.map((t) => ({ uuid: t.uuid, config_version: t.configVersion })))}::jsonb)
        AS t(uuid uuid, config_version integer)
      WHERE w.uuid = t.uuid AND w.config_version = t.config_version AND w.approved_at IS NOT NULL
        AND w.verified_at IS NULL AND w.deleted_at IS NULL`).pipe(Effect.asVoid)

/**
 * The statement that moves an endpoint's fan-out position to `upto`, for the fan-out to run in the
 * same statement as the deliveries it creates (`createEventDeliveries`), so both move together;
 * it is written here, where `webhook_endpoints` is written.
 */
export const moveEndpointPosition = (sql: SqlClient.SqlClient, uuid: string, upto: string) =>
  sql`UPDATE webhook_endpoints SET after_position = ${upto} WHERE uuid = ${uuid}`
