import { Schema } from "effect"
import { AnyJson, DateTime } from "../kernel/Common.js"
import { EventType } from "./EventType.js"

/** Further properties an event type may carry beyond the declared ones (the spec leaves them open). */
const open = Schema.Record({ key: Schema.String, value: AnyJson })

/** What the event is about: the record's kind, its uuid, and its revision right after the change. */
export const EventAggregate = Schema.Struct({
  kind: Schema.String.pipe(Schema.pattern(/^[a-z][a-z_]{0,39}$/)),
  uuid: Schema.UUID,
  revision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))
}).annotations({ identifier: "EventAggregate" })

/**
 * `data` in the reference payload mode (the default): the object's uuid and its status after the
 * change. The record itself is read through its own operation, with current rights.
 */
export const EventReferenceData = Schema.Struct(
  {
    objectUuid: Schema.UUID,
    status: Schema.String
  },
  open
).annotations({ identifier: "EventReferenceData" })

/**
 * Who caused the event and who else it concerns. `profileUuid`: the acting profile; `audience`:
 * further profiles the event is addressed to (the other party of a deal...). Both feed the
 * visibility rule (docs/decisions.md, Events).
 */
export const EventContext = Schema.Struct(
  {
    profileUuid: Schema.optional(Schema.UUID),
    audience: Schema.optional(Schema.Array(Schema.UUID))
  },
  open
).annotations({ identifier: "EventContext" })

/** An ordinary event, exactly the spec's fields: the body of `events.get`, of list pages and of webhooks. */
export const EventEnvelope = Schema.Struct({
  uuid: Schema.UUID,
  type: EventType,
  schemaVersion: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  occurredAt: DateTime,
  aggregate: EventAggregate,
  data: EventReferenceData,
  context: EventContext
}).annotations({ identifier: "EventEnvelope" })

export type EventEnvelope = typeof EventEnvelope.Type
