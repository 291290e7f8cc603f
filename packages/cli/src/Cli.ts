import { openApiDocument } from "@birzha/domain"
import { deleteAccount, liveAccountByEmail } from "@birzha/domain/internal"
import { migrate, validateSettings } from "@birzha/infrastructure"
import { Args, type CliApp, Command, type ValidationError } from "@effect/cli"
import { Console, Effect } from "effect"
import { demoCommand } from "./DemoCommand.js"
import { eventsCommand } from "./EventsCommand.js"
import { mailCommand } from "./MailCommand.js"
import { CommandDatabase, HostCommandsLive, setExitCode } from "./HostLink.js"
import { webhooksCommand } from "./WebhooksCommand.js"
import { moderationCommand } from "./Moderation.js"
import { operatorsCommand } from "./Operators.js"
import { overview } from "./Overview.js"
import { reportingConfigErrors } from "./Reporting.js"
import { version } from "./version.js"

// On the embedded database the host runs the CLI's database commands for a CLI beside it (HostLink).
const runOnHost = (argv: ReadonlyArray<string>): Effect.Effect<void, unknown, CliApp.CliApp.Environment> => run(argv)

// The hosts are loaded when their command runs: every other command starts without the HTTP host,
// the web application's server, MCP and the workers (bin.ts, docs/operations.md).
const serveCommand = Command.make("serve", {}, () =>
  Effect.flatMap(Effect.promise(() => import("./Serve.js")), ({ serve }) => reportingConfigErrors(serve(HostCommandsLive(runOnHost))))).pipe(
  Command.withDescription(
    "Serve the HTTP API, pages and MCP. Without DATABASE_URL it uses the embedded database in BIRZHA_DATA_DIR and runs the background workers in the same process."
  )
)

const workerCommand = Command.make("worker", {}, () =>
  Effect.flatMap(Effect.promise(() => import("@birzha/worker-host")), ({ work }) => reportingConfigErrors(work))).pipe(
  Command.withDescription("Run the background workers alone (any number of them may share one Postgres).")
)

const migrateCommand = Command.make("migrate", {}, () => reportingConfigErrors(migrate)).pipe(
  Command.withDescription("Apply the database migrations and exit.")
)

/** `birzha accounts delete <email>`: the operator's way to delete an account (same effect as `accounts.delete`). */
const deleteAccountByEmail = (email: string) =>
  Effect.gen(function*() {
    yield* validateSettings
    const deleted = yield* Effect.gen(function*() {
      const account = yield* liveAccountByEmail(email)
      if (account === undefined) return false
      return yield* deleteAccount(account)
    }).pipe(Effect.provide(CommandDatabase))
    if (!deleted) {
      yield* Console.error(`birzha: no live account with the address ${email}`)
      return yield* setExitCode(1)
    }
    yield* Console.log(`Deleted the account of ${email}: its profiles are deleted and its sessions revoked.`)
  })

const accountsCommand = Command.make("accounts").pipe(
  Command.withDescription("Accounts of the service."),
  Command.withSubcommands([
    Command.make("delete", { email: Args.text({ name: "email" }) }, ({ email }) => reportingConfigErrors(deleteAccountByEmail(email))).pipe(
      Command.withDescription("Delete the account of an address: its profiles are deleted and its sessions revoked.")
    )
  ])
)

const openapiCommand = Command.make("openapi", {}, () => Console.log(JSON.stringify(openApiDocument(), null, 2))).pipe(
  Command.withDescription("Print the OpenAPI 3.1 document of the API.")
)

/** The command tree (the package exports `run`, not this: its type changes with every option; tests read it). */
export const birzha = Command.make("birzha").pipe(
  Command.withDescription("Birzha: marketplace and learning service."),
  Command.withSubcommands([serveCommand, workerCommand, migrateCommand, accountsCommand, mailCommand, moderationCommand, operatorsCommand, eventsCommand, webhooksCommand, demoCommand, openapiCommand])
)

const runCommand = Command.run(birzha, { name: "birzha", version })

/**
 * Runs the `birzha` command on an argument list as `process.argv` gives it (the Node executable and
 * the script first). `birzha`, `birzha --help` and `birzha -h` print the aligned list of commands
 * (Overview.ts); everything else, `birzha <command> --help` included, goes to @effect/cli. A
 * refused command prints its reason and sets the exit code; the effect fails with a
 * `ValidationError` for a wrong argument or option (already printed), or with the error a command
 * did not handle. This and `version` are the package's programmatic surface (the command tree
 * itself is not: its type changes with every option), pinned by packages/cli/api/cli.api.md.
 */
export const run = (
  argv: ReadonlyArray<string>
): Effect.Effect<void, ValidationError.ValidationError | Error | { readonly _tag: string; readonly message: string }, CliApp.CliApp.Environment> => {
  const args = argv.slice(2)
  return args.length === 0 || (args.length === 1 && (args[0] === "--help" || args[0] === "-h"))
    ? Console.log(overview(birzha, "birzha", version))
    : runCommand(argv)
}
