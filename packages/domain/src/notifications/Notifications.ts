import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { type InvalidRequest, NotFound, type RevisionConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { requireRevision } from "../store/Revision.js"
import type { Notification, NotificationPreferences } from "./Notification.js"
import {
  findPreferences,
  listNotificationRows,
  markNotificationRead,
  type NotificationRow,
  type PreferencesRow,
  savePreferences
} from "./NotificationRepository.js"

const optional = <K extends string, V>(key: K, value: V | null): { readonly [P in K]?: V } =>
  (value === null ? {} : { [key]: value }) as { readonly [P in K]?: V }

export const notificationView = (row: NotificationRow): Notification => ({
  uuid: row.uuid,
  source: row.source,
  kind: row.kind,
  title: row.title,
  body: row.body,
  ...optional("link", row.link),
  ...optional("ruleUuid", row.rule_uuid),
  ...optional("eventUuid", row.event_uuid),
  ...optional("eventType", row.event_type),
  read: row.read_at !== null,
  ...optional("readAt", row.read_at),
  createdAt: row.created_at
})

/** `learning.notifications.list`: the acting profile's one inbox (every source), newest first. */
export const listNotifications = (
  actor: Actor,
  query: { readonly unread?: "true" | "false" | undefined; readonly source?: "automation" | "learning" | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
): Effect.Effect<{ readonly items: ReadonlyArray<Notification>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const before = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* listNotificationRows(actor.profileUuid, {
      limit: limit + 1,
      source: query.source,
      unread: query.unread === "true",
      before: Option.getOrUndefined(before)
    })
    return pageOf(rows, limit, (row) => ({ key: row.created_key, uuid: row.uuid }), notificationView)
  })

/** `learning.notifications.read`: marks one of the acting profile's notifications read; 404 for any other. */
export const readNotification = (actor: Actor, uuid: string): Effect.Effect<Notification, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    markNotificationRead(actor.profileUuid, uuid),
    Option.match({
      onNone: () => Effect.fail(new NotFound({ message: "No such notification of the acting profile" })),
      onSome: (row) => Effect.succeed(notificationView(row))
    })
  )

const preferencesView = (row: Option.Option<PreferencesRow>): NotificationPreferences =>
  Option.match(row, {
    onNone: () => ({ revision: 0, kinds: {} }),
    onSome: (row) => ({
      revision: row.revision,
      kinds: row.kinds as NotificationPreferences["kinds"],
      ...(row.quiet_hours === null || row.quiet_hours === undefined ? {} : { quietHours: row.quiet_hours as NonNullable<NotificationPreferences["quietHours"]> }),
      updatedAt: row.updated_at
    })
  })

/** `learning.notification_preferences.get`: revision 0 and no kinds until the first save. */
export const getPreferences = (actor: Actor) => Effect.map(findPreferences(actor.profileUuid, { lock: false }), preferencesView)

/** `learning.notification_preferences.update`: replaces the preferences at `expectedRevision` (0 for the first save). */
export const updatePreferences = (
  actor: Actor,
  input: { readonly expectedRevision: number; readonly kinds: NotificationPreferences["kinds"]; readonly quietHours?: NotificationPreferences["quietHours"] }
): Effect.Effect<NotificationPreferences, RevisionConflict | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const current = yield* findPreferences(actor.profileUuid, { lock: true })
    yield* requireRevision("notification preferences", Option.match(current, { onNone: () => 0, onSome: (row) => row.revision }), input.expectedRevision)
    return preferencesView(Option.some(yield* savePreferences(actor.profileUuid, input.kinds, input.quietHours)))
  })
