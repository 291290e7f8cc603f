import { Effect, Option } from "effect"
import { NotFound } from "../kernel/ApiError.js"
import { EventsApi, EventTypeList } from "./EventsApi.js"
import { encodedOnce, implement } from "../operations/Implementation.js"
import { EventCatalog, eventCatalog } from "./EventCatalog.js"
import { getEvent, listEvents } from "./EventLog.js"
import { eventTypes } from "./EventType.js"

const typeList = encodedOnce(EventTypeList, { types: eventTypes })
const catalog = encodedOnce(EventCatalog, eventCatalog)

export const EventsOperations = implement(EventsApi)({
  "events.types": () => Effect.succeed(typeList),
  "events.types_legacy": () => Effect.succeed(typeList),
  "events.catalog": () => Effect.succeed(catalog),
  "events.list": ({ urlParams }, actor) => listEvents(actor, urlParams),
  "events.get": ({ path }, actor) =>
    Effect.flatMap(getEvent(actor, path.uuid), Option.match({
      onNone: () => Effect.fail(new NotFound({ message: "No such event" })),
      onSome: Effect.succeed
    }))
})
