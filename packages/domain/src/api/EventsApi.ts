import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EventType } from "../events/EventType.js"
import { operation } from "./Operation.js"

export const EventTypeList = Schema.Struct({
  types: Schema.Array(EventType)
}).annotations({ identifier: "EventTypeList" })

export const EventsApi = HttpApiGroup.make("events", { topLevel: true })
  .add(
    operation("GET", "events.types", "/api/v1/event-types", {
      summary: "Every event type the service emits"
    }).addSuccess(EventTypeList)
  )
  .add(
    operation("GET", "events.types_legacy", "/event-types", {
      specId: null,
      summary: "Every event type (unprefixed form kept for older clients)"
    }).addSuccess(EventTypeList)
  )
  .annotate(OpenApi.Description, "Events, the event catalog and signed webhooks")
