import { DevelopmentMailbox, DevelopmentMailboxLive, ServiceConfig, validateSettings } from "@birzha/infrastructure"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { CommandDatabase, setExitCode } from "./HostLink.js"
import { databaseProblem, reportingConfigErrors } from "./Reporting.js"

// `birzha mail`: part of the command tree (./Cli.ts), and a program of its own (./mail.ts), which
// bin.ts loads for it: what it needs of the service is the mailbox and the database, not the
// operations the rest of the tree loads.

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

export const mailCommand = Command.make("mail").pipe(
  Command.withDescription("The development mailbox: mail sent while BIRZHA_SMTP_URL is not set."),
  Command.withSubcommands([mailListCommand])
)
