import { BirzhaApi, NotReady } from "@birzha/domain"
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Readiness } from "../Readiness.js"

export const HealthHandlers = HttpApiBuilder.group(BirzhaApi, "health", (handlers) =>
  handlers
    .handle("health.live", () => Effect.succeed({ status: "ok" as const }))
    .handle("health.ready", () =>
      Effect.gen(function*() {
        const readiness = yield* Readiness
        const { database, migrations } = yield* readiness.check
        if (!database) return yield* new NotReady({ message: "The database does not answer" })
        if (!migrations) return yield* new NotReady({ message: "The latest migration is not applied yet" })
        return { status: "ready" as const, database: "ok" as const, migrations: "ok" as const }
      })))
