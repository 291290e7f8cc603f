import { type CliApp, ValidationError } from "@effect/cli"
// Its modules by path: the package index also loads its HTTP client (undici), which no command needs at start.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { processConsole } from "./CommandConsole.js"
import { besideRunningHost, setExitCode } from "./HostLink.js"

/**
 * Runs a command tree (`run`, argv as `process.argv` gives it) as this process's command: main.js
 * with the whole tree, mail.js with `birzha mail` alone (bin.ts).
 *
 * runMain turns SIGINT and SIGTERM into interruption: layers close in order, the HTTP listener
 * stops accepting and drains, workers finish their current run. Logs are pretty on a terminal
 * and one logfmt line per entry otherwise (files, journald, containers): cheaper and greppable.
 * A database command while `birzha serve` holds the embedded database runs in that host
 * (HostLink); help and output carry colour only on a terminal without NO_COLOR.
 */
export const runProgram = <E>(run: (argv: ReadonlyArray<string>) => Effect.Effect<void, E, CliApp.CliApp.Environment>): void =>
  besideRunningHost(
    process.argv.slice(2),
    run(process.argv).pipe(
      // A wrong argument or option: @effect/cli has already printed what is wrong, so exit 1 without a logged stack.
      Effect.catchIf(ValidationError.isValidationError, () => setExitCode(1))
    )
  ).pipe(
    Effect.withConsole(processConsole()),
    Effect.provide(NodeContext.layer),
    NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: process.stdout.isTTY !== true })
  )
