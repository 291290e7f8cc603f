import { Effect } from "effect"
import { NotReady } from "../kernel/ApiError.js"
import { HealthApi } from "./HealthApi.js"
import { implementWith } from "./Implementation.js"
import { Readiness } from "./Readiness.js"

export const HealthOperations = implementWith(HealthApi, Readiness)((readiness) => ({
  "health.live": () => Effect.succeed({ status: "ok" as const }),
  "health.ready": () =>
    Effect.gen(function*() {
      const { database, migrations } = yield* readiness.check
      if (!database) return yield* new NotReady({ message: "The database does not answer" })
      if (!migrations) return yield* new NotReady({ message: "The latest migration is not applied yet" })
      return { status: "ready" as const, database: "ok" as const, migrations: "ok" as const }
    })
}))
