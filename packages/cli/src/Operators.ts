import { Email } from "@birzha/domain"
import { grantOperator, listOperators, revokeOperator } from "@birzha/domain/internal"
import { OperatorsConfig, validateSettings } from "@birzha/infrastructure"
import { Args, Command } from "@effect/cli"
import { Console, Effect, Schema } from "effect"
import { CommandDatabase } from "./HostLink.js"
import { CommandFailed, databaseProblem, reportingConfigErrors, reportingFailures } from "./Reporting.js"

// The operator role (the web application's admin area, packages/domain/src/admin), granted by
// address as the moderator role is (./Moderation.ts).

/** Settings first (a bad one is reported by name), then `use` on the configured database; a database error is one line. */
const onDatabase = <A, E, R>(use: Effect.Effect<A, E, R>) =>
  reportingConfigErrors(reportingFailures(Effect.gen(function*() {
    yield* validateSettings
    return yield* use.pipe(
      Effect.provide(CommandDatabase),
      Effect.catchIf(
        (error): error is E & { readonly _tag: "SqlError"; readonly message: string; readonly cause: unknown } =>
          typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError",
        (error) => new CommandFailed({ message: databaseProblem("the database refused the command", error) })
      )
    )
  })))

const isEmail = Schema.is(Email)

const emailArg = Args.text({ name: "email" }).pipe(Args.withDescription("The address, as its owner signs in with it (compared lower-cased)."))

const validEmail = (email: string) =>
  isEmail(email.trim()) ? Effect.succeed(email.trim().toLowerCase()) : new CommandFailed({ message: `not an email address: ${JSON.stringify(email)}` })

const grantCommand = Command.make("grant", { email: emailArg }, ({ email }) =>
  onDatabase(Effect.gen(function*() {
    const address = yield* validEmail(email)
    yield* grantOperator(address)
    yield* Console.log(`${address} is an operator (granted by hand: it stays until birzha operators revoke or another operator revokes it).`)
  }))).pipe(Command.withDescription("Grant the operator role (the admin area, /admin) to an address, even before its first sign-in."))

const revokeCommand = Command.make("revoke", { email: emailArg }, ({ email }) =>
  onDatabase(Effect.gen(function*() {
    const address = yield* validEmail(email)
    const revoked = yield* revokeOperator(address)
    if (!revoked) return yield* new CommandFailed({ message: `${address} is not an operator` })
    yield* Console.log(`${address} is no longer an operator.`)
    const configured = yield* OperatorsConfig
    if (configured.includes(address)) {
      yield* Console.error(`Note: ${address} is listed in BIRZHA_OPERATORS, so the next start grants the role again; remove it there too.`)
    }
  }))).pipe(Command.withDescription("Take the operator role from an address, whichever way it was granted."))

const listCommand = Command.make("list", {}, () =>
  onDatabase(Effect.gen(function*() {
    const operators = yield* listOperators
    if (operators.length === 0) return yield* Console.log("There are no operators.")
    for (const operator of operators) {
      yield* Console.log(`${operator.email}  ${operator.source}  granted ${operator.granted_at.toISOString()}`)
    }
  }))).pipe(Command.withDescription("Print the operators: address, how the role was granted (cli, or config from BIRZHA_OPERATORS) and when."))

export const operatorsCommand = Command.make("operators").pipe(
  Command.withDescription("Operators: the role that opens the admin area (/admin), by address."),
  Command.withSubcommands([grantCommand, revokeCommand, listCommand])
)
