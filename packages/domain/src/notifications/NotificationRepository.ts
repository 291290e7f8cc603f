import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"

/**
 * The `notifications` table: the one inbox of a profile, whatever wrote to it (`source`:
 * automation now, learning later). Read and written only here.
 */
export const NotificationRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  source: Schema.Literal("automation", "learning"),
  rule_uuid: Schema.NullOr(Schema.String),
  execution_uuid: Schema.NullOr(Schema.String),
  event_uuid: Schema.NullOr(Schema.String),
  event_type: Schema.NullOr(Schema.String),
  title: Schema.String,
  body: Schema.String,
  link: Schema.NullOr(Schema.String),
  read_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
})
export type NotificationRow = typeof NotificationRow.Type
const columns = selectList(NotificationRow, "n")
const decodeRows = rowsDecoder(NotificationRow)
const decodeUuid = rowDecoder(Schema.Struct({ uuid: Schema.String }))

export interface NewNotification {
  readonly profileUuid: string
  readonly source: "automation" | "learning"
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
    const [row] = yield* sql`INSERT INTO notifications (profile_uuid, source, rule_uuid, execution_uuid, event_uuid, event_type, title, body, link)
      VALUES (${n.profileUuid}, ${n.source}, ${n.ruleUuid ?? null}, ${n.executionUuid ?? null}, ${n.eventUuid ?? null},
        ${n.eventType ?? null}, ${n.title}, ${n.body}, ${n.link ?? null})
      ON CONFLICT (execution_uuid) DO UPDATE SET execution_uuid = EXCLUDED.execution_uuid
      RETURNING uuid`
    return (yield* decodeUuid(row)).uuid
  })

/** A profile's notifications, newest first, after a keyset position. */
export const listNotificationRows = (
  profileUuid: string,
  options: {
    readonly limit: number
    readonly source?: "automation" | "learning" | undefined
    readonly unread?: boolean | undefined
    readonly before?: { readonly createdAt: Date; readonly uuid: string } | undefined
  }
): Effect.Effect<ReadonlyArray<NotificationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeRows(yield* sql`SELECT ${sql.literal(columns)} FROM notifications n
      WHERE n.profile_uuid = ${profileUuid}
        ${options.source === undefined ? sql`` : sql`AND n.source = ${options.source}`}
        ${options.unread === true ? sql`AND n.read_at IS NULL` : sql``}
        ${options.before === undefined ? sql`` : sql`AND (n.created_at, n.uuid) < (${options.before.createdAt}, ${options.before.uuid})`}
      ORDER BY n.created_at DESC, n.uuid DESC LIMIT ${options.limit}`)
  })

/** Marks a profile's notifications read (all of them when `uuids` is undefined); returns how many changed. */
export const markNotificationsRead = (
  profileUuid: string,
  uuids: ReadonlyArray<string> | undefined
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`UPDATE notifications SET read_at = now()
      WHERE profile_uuid = ${profileUuid} AND read_at IS NULL ${uuids === undefined ? sql`` : sql`AND ${sql.in("uuid", uuids)}`}
      RETURNING uuid`
    return rows.length
  })
