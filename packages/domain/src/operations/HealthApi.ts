import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotReady, wire } from "../kernel/ApiError.js"
import { anyone } from "../kernel/Operation.js"

export const Liveness = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Liveness" })

export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  database: Schema.Literal("ok"),
  migrations: Schema.Literal("ok")
}).annotations({ identifier: "Readiness" })

export const HealthApi = HttpApiGroup.make("health", { topLevel: true })
  .add(anyone("GET", "health.live", "/api/healthz", { specId: null, summary: "The process is alive" }).addSuccess(Liveness))
  .add(
    anyone("GET", "health.ready", "/api/readyz", {
      specId: null,
      summary: "The database answers and the latest migration is applied"
    }, [wire(NotReady)]).addSuccess(Readiness)
  )
  .annotate(OpenApi.Description, "Liveness and readiness probes (unversioned)")
