import { BirzhaApi, eventTypes } from "@birzha/domain"
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"

const typeList = { types: eventTypes }

export const EventsHandlers = HttpApiBuilder.group(BirzhaApi, "events", (handlers) =>
  handlers
    .handle("events.types", () => Effect.succeed(typeList))
    .handle("events.types_legacy", () => Effect.succeed(typeList)))
