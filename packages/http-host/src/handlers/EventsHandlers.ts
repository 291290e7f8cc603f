import { BirzhaApi, CurrentActor, eventCatalog, eventTypes, NotFound } from "@birzha/domain"
import { getEvent, listEvents } from "@birzha/domain/server"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

const typeList = { types: eventTypes }

export const EventsHandlers = HttpApiBuilder.group(BirzhaApi, "events", (handlers) =>
  Effect.gen(function*() {
    const withSql = using(yield* Effect.context<SqlClient.SqlClient>())
    return handlers
      .handle("events.types", () => Effect.succeed(typeList))
      .handle("events.types_legacy", () => Effect.succeed(typeList))
      .handle("events.catalog", () => Effect.succeed(eventCatalog))
      .handle("events.list", ({ urlParams }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* withSql(listEvents(yield* CurrentActor, urlParams))
        }))
      .handle("events.get", ({ path }) =>
        Effect.gen(function*() {
          yield* noStore
          const found = yield* withSql(getEvent(yield* CurrentActor, path.uuid))
          return yield* Option.match(found, {
            onNone: () => Effect.fail(new NotFound({ message: "No such event" })),
            onSome: Effect.succeed
          })
        }))
  }))
