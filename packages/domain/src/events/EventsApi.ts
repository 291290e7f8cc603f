import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { maxChars, minChars, optionalField, PageLimit } from "../kernel/Common.js"
import { EventCatalog } from "./EventCatalog.js"
import { EventEnvelope } from "./EventEnvelope.js"
import { EventType } from "./EventType.js"
import { NotFound, ResyncRequired, wire } from "../kernel/ApiError.js"
import { anyone, authenticated } from "../kernel/Operation.js"

export const EventTypeList = Schema.Struct({
  types: Schema.Array(EventType)
}).annotations({ identifier: "EventTypeList" })

export const EventListParams = Schema.Struct({
  /** `nextCursor` of an earlier page; absent: from the oldest event kept. */
  cursor: optionalField(Schema.String.pipe(maxChars(200)), "The previous page's nextCursor, to read on from there; absent: from the oldest event kept."),
  limit: Schema.optional(PageLimit).annotations({
    description: "Events per page, 1 to 100; 20 when absent"
  }),
  types: Schema.optional(Schema.String.pipe(minChars(1), maxChars(2000))).annotations({
    description: "Comma-separated event types; `*` stands for any characters (`publication.*,profile.updated`)"
  }),
  aggregateKind: Schema.optional(Schema.String.pipe(Schema.pattern(/^[a-z][a-z_]{0,39}$/))),
  aggregateUuid: Schema.optional(Schema.UUID)
})
// No identifier: a named query schema is emitted as a $ref and its parameters are lost from OpenAPI.

/** A page of events in position order; `nextCursor` is always given, so a follower polls with it. */
export const EventPage = Schema.Struct({
  items: Schema.Array(EventEnvelope),
  nextCursor: Schema.String,
  hasMore: Schema.Boolean
}).annotations({ identifier: "EventPage" })

export const EventsApi = HttpApiGroup.make("events", { topLevel: true })
  .add(anyone("GET", "events.types", "/api/v1/event-types", { summary: "Every event type the service emits" }).addSuccess(EventTypeList))
  .add(
    anyone("GET", "events.types_legacy", "/event-types", {
      specId: null,
      summary: "Every event type (unprefixed form kept for older clients)"
    }).addSuccess(EventTypeList)
  )
  .add(
    anyone("GET", "events.catalog", "/api/v1/event-catalog", {
      summary: "Every event type with its fields, permissions, a sample and the operation that reads its record"
    }).addSuccess(EventCatalog)
  )
  .add(
    authenticated("GET", "events.list", "/api/v1/events", {
      scopes: ["events:read"],
      summary: "The caller's events after a cursor, in sequence order; a cursor older than 30 days answers 410"
    }, [wire(ResyncRequired)]).setUrlParams(EventListParams).addSuccess(EventPage)
  )
  .add(
    authenticated("GET", "events.get", "/api/v1/events/:uuid", { scopes: ["events:read"], summary: "One event the caller may see" }, [wire(NotFound)])
      .setPath(Schema.Struct({ uuid: Schema.UUID }))
      .addSuccess(EventEnvelope)
  )
  .annotate(OpenApi.Description, "Events, the event catalog and signed webhooks")
