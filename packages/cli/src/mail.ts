// `birzha mail ...`, loaded by bin.ts instead of main.js: the same command (./MailCommand.ts, which
// the whole tree in ./Cli.ts holds too) under the same name, built as a module of its own, so it
// loads the mailbox and the database and none of the service's operations (tsup.config.ts).
import { Command } from "@effect/cli"
import { mailCommand } from "./MailCommand.js"
import { runProgram } from "./Program.js"
import { version } from "./version.js"

runProgram(Command.run(Command.make("birzha").pipe(Command.withSubcommands([mailCommand])), { name: "birzha", version }))
