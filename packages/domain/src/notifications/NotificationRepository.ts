import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"

/**
 * The `notifications` table: the one inbox of a profile, whatever wrote to it (`source`:
 * automation rules, or the learning notifier). Read and written only here.
 */
export const NotificationRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  source: Schema.Literal("automation", "learning"),
  kind: Schema.String,
  rule_uuid: Schema.NullOr(Schema.String),
  execution_uuid: Schema.NullOr(Schema.String),
  event_uuid: Schema.NullOr(Schema.String),
  event_type: Schema.NullOr(Schema.String),
  title: Schema.String,
  body: Schema.String,
  link: Schema.NullOr(Schema.String),
  read_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  /** `created_at` as Postgres text: the keyset cursor's key at full precision. */
  created_key: Schema.String
})
export type NotificationRow = typeof NotificationRow.Type
const columns = selectList(NotificationRow, "n", { created_key: "n.created_at::text" })
const decodeRow = rowDecoder(NotificationRow)
const decodeRows = rowsDecoder(NotificationRow)
const decodeUuid = rowDecoder(Schema.Struct({ uuid: Schema.String }))

export interface NewNotification {
  readonly profileUuid: string
  readonly source: "automation" | "learning"
  readonly kind: string
  readonly ruleUuid?: string
  readonly executionUuid?: string
  readonly eventUuid?: string
  readonly eventType?: string
  readonly title: string
  readonly body: string
  readonly link?: string
}

/**
 * Writes a notification; one per execution (a retry after a crash finds the first). Returns its uuid.
 */
export const insertNotification = (n: NewNotification): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`INSERT INTO notifications (profile_uuid, source, kind, rule_uuid, execution_uuid, event_uuid, event_type, title, body, link)
      VALUES (${n.profileUuid}, ${n.source}, ${n.kind}, ${n.ruleUuid ?? null}, ${n.executionUuid ?? null}, ${n.eventUuid ?? null},
        ${n.eventType ?? null}, ${n.title}, ${n.body}, ${n.link ?? null})
      ON CONFLICT (execution_uuid) DO UPDATE SET execution_uuid = EXCLUDED.execution_uuid
      RETURNING uuid`
    return (yield* decodeUuid(row)).uuid
  })

/**
 * Writes the notifications of several executions in one statement (one per execution: a batch run
 * again finds the first ones). Returns each execution's notification uuid.
 */
export const insertNotifications = (
  list: ReadonlyArray<NewNotification & { readonly executionUuid: string }>
): Effect.Effect<ReadonlyMap<string, string>, SqlError, SqlClient.SqlClient> =>
  list.length === 0 ? Effect.succeed(new Map()) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = list.map((n) => ({
      profile_uuid: n.profileUuid, source: n.source, kind: n.kind, rule_uuid: n.ruleUuid ?? null, execution_uuid: n.executionUuid,
      event_uuid: n.eventUuid ?? null, event_type: n.eventType ?? null, title: n.title, body: n.body, link: n.link ?? null
    }))
    const written = yield* decodeWritten(yield* sql`INSERT INTO notifications (profile_uuid, source, kind, rule_uuid, execution_uuid, event_uuid, event_type, title, body, link)
      SELECT n.profile_uuid, n.source, n.kind, n.rule_uuid, n.execution_uuid, n.event_uuid, n.event_type, n.title, n.body, n.link
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS n(profile_uuid uuid, source text, kind text, rule_uuid uuid,
        execution_uuid uuid, event_uuid uuid, event_type text, title text, body text, link text)
      ON CONFLICT (execution_uuid) DO UPDATE SET execution_uuid = EXCLUDED.execution_uuid
      RETURNING uuid, execution_uuid`)
    return new Map(written.map((row) => [row.execution_uuid, row.uuid]))
  })
const decodeWritten = rowsDecoder(Schema.Struct({ uuid: Schema.String, execution_uuid: Schema.String }))

/**
 * Writes the learning notifier's notifications of several (event, recipient) pairs in one
 * statement: at most one each (a repeated delivery finds the first, by the partial unique index of
 * migration 24). Returns each pair's notification uuid, keyed `event uuid:profile uuid`.
 */
export const insertLearningNotifications = (
  list: ReadonlyArray<Omit<NewNotification, "source" | "ruleUuid" | "executionUuid"> & { readonly eventUuid: string; readonly eventType: string }>
): Effect.Effect<ReadonlyMap<string, string>, SqlError, SqlClient.SqlClient> =>
  list.length === 0 ? Effect.succeed(new Map()) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = list.map((n) => ({
      profile_uuid: n.profileUuid, kind: n.kind, event_uuid: n.eventUuid, event_type: n.eventType, title: n.title, body: n.body, link: n.link ?? null
    }))
    const written = yield* decodeLearningWritten(yield* sql`INSERT INTO notifications (profile_uuid, source, kind, event_uuid, event_type, title, body, link)
      SELECT n.profile_uuid, 'learning', n.kind, n.event_uuid, n.event_type, n.title, n.body, n.link
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS n(profile_uuid uuid, kind text, event_uuid uuid, event_type text,
        title text, body text, link text)
      ON CONFLICT (event_uuid, profile_uuid) WHERE source = 'learning' DO UPDATE SET event_uuid = EXCLUDED.event_uuid
      RETURNING uuid, event_uuid, profile_uuid`)
    return new Map(written.map((row) => [`${row.event_uuid}:${row.profile_uuid}`, row.uuid]))
  })
const decodeLearningWritten = rowsDecoder(Schema.Struct({ uuid: Schema.String, event_uuid: Schema.String, profile_uuid: Schema.String }))

/** A profile's notifications, newest first, after a keyset position. */
export const listNotificationRows = (
  profileUuid: string,
  options: {
    readonly limit: number
    readonly source?: "automation" | "learning" | undefined
    readonly unread?: boolean | undefined
    readonly before?: { readonly key: string; readonly uuid: string } | undefined
  }
): Effect.Effect<ReadonlyArray<NotificationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeRows(yield* sql`SELECT ${sql.literal(columns)} FROM notifications n
      WHERE n.profile_uuid = ${profileUuid}
        ${options.source === undefined ? sql`` : sql`AND n.source = ${options.source}`}
        ${options.unread === true ? sql`AND n.read_at IS NULL` : sql``}
        ${options.before === undefined ? sql`` : sql`AND (n.created_at, n.uuid) < (${options.before.key}::timestamptz, ${options.before.uuid}::uuid)`}
      ORDER BY n.created_at DESC, n.uuid DESC LIMIT ${options.limit}`)
  })

/** Marks one of a profile's notifications read (kept when already read); none when it is not the profile's. */
export const markNotificationRead = (
  profileUuid: string,
  uuid: string
): Effect.Effect<Option.Option<NotificationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`UPDATE notifications n SET read_at = coalesce(n.read_at, now())
      WHERE n.uuid = ${uuid} AND n.profile_uuid = ${profileUuid}
      RETURNING ${sql.literal(columns)}`
    return row === undefined ? Option.none() : Option.some(yield* decodeRow(row))
  })

/** `notification_preferences`: a profile's row, if it saved any. */
export const PreferencesRow = Schema.Struct({
  revision: Schema.Int,
  kinds: Schema.Unknown,
  quiet_hours: Schema.Unknown,
  updated_at: Timestamp
})
export type PreferencesRow = typeof PreferencesRow.Type
const decodePreferences = rowDecoder(PreferencesRow)

export const findPreferences = (profileUuid: string, options: { readonly lock: boolean }): Effect.Effect<Option.Option<PreferencesRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`SELECT revision, kinds, quiet_hours, updated_at FROM notification_preferences
      WHERE profile_uuid = ${profileUuid} ${options.lock ? sql`FOR UPDATE` : sql``}`
    return row === undefined ? Option.none() : Option.some(yield* decodePreferences(row))
  })

/** Saves the whole preferences (next revision; the first save makes revision 1). */
export const savePreferences = (
  profileUuid: string,
  kinds: unknown,
  quietHours: unknown
): Effect.Effect<PreferencesRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`INSERT INTO notification_preferences (profile_uuid, kinds, quiet_hours)
      VALUES (${profileUuid}, ${JSON.stringify(kinds)}::jsonb, ${quietHours === undefined ? null : JSON.stringify(quietHours)}::jsonb)
      ON CONFLICT (profile_uuid) DO UPDATE SET kinds = EXCLUDED.kinds, quiet_hours = EXCLUDED.quiet_hours,
        revision = notification_preferences.revision + 1, updated_at = now()
      RETURNING revision, kinds, quiet_hours, updated_at`
    return yield* decodePreferences(row)
  })

const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))

/** Deletes at most `limit` notifications older than `days` (the retention, in batches); returns how many. */
export const deleteExpiredNotifications = (days: number, limit: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`WITH gone AS (
        DELETE FROM notifications WHERE uuid IN (
          SELECT uuid FROM notifications WHERE created_at < now() - make_interval(days => ${days}) LIMIT ${limit})
        RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        decodeCount
      ),
      (rows) => rows[0]?.n ?? 0
    ))
