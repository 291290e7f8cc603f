import { openApiDocument } from "@birzha/domain"
import { serve } from "@birzha/http-host"
import { describeConfigError, migrate, work } from "@birzha/worker-host"
import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { version } from "./version.js"

/** A bad setting ends the command with one line per variable and exit code 1, not a stack. */
const reportingConfigErrors = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (error): error is E & { readonly _tag: "ConfigError" } =>
      typeof error === "object" && error !== null && "_tag" in error && error._tag === "ConfigError",
    (error) =>
      Console.error(`birzha: invalid configuration\n${describeConfigError(error as never)}`).pipe(
        Effect.zipRight(Effect.sync(() => {
          process.exitCode = 1
        }))
      )
  )

const serveCommand = Command.make("serve", {}, () => reportingConfigErrors(serve)).pipe(
  Command.withDescription(
    "Serve the HTTP API, pages and MCP. Without DATABASE_URL it uses the embedded database in BIRZHA_DATA_DIR and runs the background workers in the same process."
  )
)

const workerCommand = Command.make("worker", {}, () => reportingConfigErrors(work)).pipe(
  Command.withDescription("Run the background workers alone (any number of them may share one Postgres).")
)

const migrateCommand = Command.make("migrate", {}, () => reportingConfigErrors(migrate)).pipe(
  Command.withDescription("Apply the database migrations and exit.")
)

const openapiCommand = Command.make("openapi", {}, () => Console.log(JSON.stringify(openApiDocument(), null, 2))).pipe(
  Command.withDescription("Print the OpenAPI 3.1 document of the API.")
)

export const birzha = Command.make("birzha").pipe(
  Command.withDescription("Birzha: marketplace and learning service."),
  Command.withSubcommands([serveCommand, workerCommand, migrateCommand, openapiCommand])
)

export const run = Command.run(birzha, { name: "birzha", version })
