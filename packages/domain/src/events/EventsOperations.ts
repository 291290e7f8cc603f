import { Effect, Option } from "effect"
import { NotFound } from "../kernel/ApiError.js"
import { EventsApi, EventTypeList } from "./EventsApi.js"
import { catalog as operations } from "../api/BirzhaApi.js"
import { encodedOnce, implementWith } from "../operations/Implementation.js"
import { EventCatalog, eventCatalogOf } from "./EventCatalog.js"
import { getEvent, listEvents } from "./EventLog.js"
import { eventTypes } from "./EventType.js"

const typeList = encodedOnce(EventTypeList, { types: eventTypes })
/**
 * The event catalog with the read operations' paths as declared, made when the registry starts: a
 * read id naming no GET operation fails the start (`eventCatalogOf` throws, a defect of the layer).
 */
const encodedCatalog = Effect.sync(() => encodedOnce(EventCatalog, eventCatalogOf(operations)))

export const EventsOperations = implementWith(EventsApi, encodedCatalog)((catalog) => ({
  "events.types": () => Effect.succeed(typeList),
  "events.types_legacy": () => Effect.succeed(typeList),
  "events.catalog": () => Effect.succeed(catalog),
  "events.list": ({ urlParams }, actor) => listEvents(actor, urlParams),
  "events.get": ({ path }, actor) =>
    Effect.flatMap(getEvent(actor, path.uuid), Option.match({
      onNone: () => Effect.fail(new NotFound({ message: "No such event" })),
      onSome: Effect.succeed
    }))
}))
