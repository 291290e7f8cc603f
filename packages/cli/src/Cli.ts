import { openApiDocument } from "@birzha/domain"
import { deleteAccount, liveAccountByEmail } from "@birzha/domain/internal"
import { DevelopmentMailbox, DevelopmentMailboxLive, migrate, ServiceConfig, validateSettings } from "@birzha/infrastructure"
import { Args, type CliApp, Command, Options, type ValidationError } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { demoCommand } from "./DemoCommand.js"
import { eventsCommand } from "./EventsCommand.js"
import { CommandDatabase, HostCommandsLive, setExitCode } from "./HostLink.js"
import { webhooksCommand } from "./WebhooksCommand.js"
import { moderationCommand } from "./Moderation.js"
import { operatorsCommand } from "./Operators.js"
import { overview } from "./Overview.js"
import { databaseProblem, reportingConfigErrors } from "./Reporting.js"
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

/** `birzha mail list`: what the development mailbox kept, newest first, so a developer can read a sign-in code. */
const listMail = (query: { readonly to: Option.Option<string>; readonly limit: number }) =>
  Effect.gen(function*() {
    yield* validateSettings
    const { smtpUrl } = yield* ServiceConfig
    if (Option.isSome(smtpUrl)) yield* Console.error("BIRZHA_SMTP_URL is set: new mail goes to the SMTP server; this lists what the development mailbox kept before.")
    const messages = yield* Effect.flatMap(DevelopmentMailbox, (mailbox) =>
      mailbox.list({ limit: query.limit, ...(Option.isSome(query.to) ? { to: query.to.value } : {}) })
    ).pipe(
      Effect.provide(DevelopmentMailboxLive.pipe(Layer.provide(CommandDatabase))),
      Effect.catchTag("SqlError", (error) =>
        Console.error(`birzha: ${databaseProblem("could not read the development mailbox", error)}`).pipe(
          Effect.zipRight(setExitCode(1)),
          Effect.as(undefined)
        ))
    )
    if (messages === undefined) return
    if (messages.length === 0) return yield* Console.log("The development mailbox is empty.")
    for (const message of messages) {
      yield* Console.log(`── ${message.createdAt.toISOString()}  to ${message.to}\n   ${message.subject}\n\n${message.text.trimEnd()}\n`)
    }
  })

const mailListCommand = Command.make(
  "list",
  {
    to: Options.text("to").pipe(Options.withDescription("Only messages to this address."), Options.optional),
    limit: Options.integer("limit").pipe(
      Options.withDescription("How many messages, newest first (1 to 1000)."),
      Options.withDefault(20)
    )
  },
  ({ limit, to }) =>
    limit < 1 || limit > 1000
      ? Console.error("birzha: --limit must be between 1 and 1000").pipe(Effect.zipRight(setExitCode(1)))
      : reportingConfigErrors(listMail({ to, limit }))
).pipe(Command.withDescription("Print the messages the development mailbox kept (sign-in codes included), newest first."))

const mailCommand = Command.make("mail").pipe(
  Command.withDescription("The development mailbox: mail sent while BIRZHA_SMTP_URL is not set."),
  Command.withSubcommands([mailListCommand])
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
