import { Schema } from "effect"
import { DateTime, maxChars, meanings, optionalField, PageLimit } from "../kernel/Common.js"
import { eventTypes } from "../events/EventType.js"

/** Where a notification came from: an automation rule's action, or the learning notifier. */
export const NotificationSource = Schema.Literal("automation", "learning").annotations({ identifier: "NotificationSource" })

/** One entry of a profile's inbox. */
export const Notification = Schema.Struct({
  uuid: Schema.UUID,
  source: NotificationSource,
  /** A learning event type, or `automation.rule` (a rule's notification.create) / `automation.paused` (a rule paused itself). */
  kind: Schema.String,
  title: Schema.String,
  body: Schema.String,
  /** The operation that reads the record the notification is about. */
  link: Schema.optional(Schema.String),
  ruleUuid: Schema.optional(Schema.UUID),
  eventUuid: Schema.optional(Schema.UUID),
  eventType: Schema.optional(Schema.String),
  read: Schema.Boolean,
  readAt: Schema.optional(DateTime),
  createdAt: DateTime
}).annotations({ identifier: "Notification" })
export type Notification = typeof Notification.Type

export const NotificationPage = Schema.Struct({
  items: Schema.Array(Notification),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "NotificationPage" })

// No identifier: a named query schema loses its parameters in OpenAPI.
export const NotificationQuery = Schema.Struct({
  unread: Schema.optional(Schema.Literal("true", "false")),
  source: Schema.optional(NotificationSource),
  cursor: optionalField(Schema.String.pipe(maxChars(200)), meanings.cursor),
  limit: Schema.optional(PageLimit)
})

/** The kinds a preference may name: the learning event types (automation notifications follow their rule). */
export const preferenceKinds = eventTypes.filter((type) => type.startsWith("learning."))
const knownKinds: ReadonlySet<string> = new Set(preferenceKinds)

export const Channels = Schema.Struct({
  inApp: Schema.Boolean,
  email: Schema.Boolean,
  digest: Schema.Boolean
}).annotations({ identifier: "NotificationChannels" })

const Kinds = Schema.Record({
  key: Schema.String.pipe(Schema.filter((kind) => knownKinds.has(kind), {
    message: () => "expected a learning event type",
    // Generated values (property tests, the catalog fuzz suite) pick from the known kinds.
    arbitrary: () => (fc) => fc.constantFrom(...preferenceKinds)
  })),
  value: Channels
})

const Clock = Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "expected HH:MM (UTC)" }))

export const QuietHours = Schema.Struct({ from: Clock, to: Clock }).annotations({
  identifier: "NotificationQuietHours",
  description: "No in-app or email notification is sent between from and to (UTC); they wait for the end",
  parseOptions: { onExcessProperty: "error" }
})

export const NotificationPreferences = Schema.Struct({
  /** 0 until the first save. */
  revision: Schema.Int,
  kinds: Kinds,
  quietHours: Schema.optional(QuietHours),
  updatedAt: Schema.optional(DateTime)
}).annotations({ identifier: "NotificationPreferences" })
export type NotificationPreferences = typeof NotificationPreferences.Type

export const PreferencesUpdate = Schema.Struct({
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)),
  kinds: Kinds,
  quietHours: Schema.optional(QuietHours)
}).annotations({ identifier: "NotificationPreferencesUpdate", parseOptions: { onExcessProperty: "error" } })
