import { type CliApp, ValidationError } from "@effect/cli"
// Its modules by path: the package index also loads its HTTP client (undici), which no command needs at start.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { processConsole } from "./CommandConsole.js"
import { besideRunningHost, setExitCode } from "./HostLink.js"

/**
 * A terminal's Ctrl-C reaches every process of the foreground group, and a package manager between
 * the terminal and Node (`npx -y pnpm@10.34.9 start`) forwards its own copy at once: runMain listens
 * for the first signal only, so the copy killed Node in the middle of its shutdown and the package
 * manager reported the script failed. A signal within a second of the first is taken for the same
 * keypress; a later one ends the process at once, as Node would without a listener.
 */
const absorbingEchoedSignals = (): void => {
  let first: number | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (first === undefined) first = Date.now()
    else if (Date.now() - first > 1_000) {
      process.removeListener("SIGINT", onSignal)
      process.removeListener("SIGTERM", onSignal)
      process.kill(process.pid, signal)
    }
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
}

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
export const runProgram = <E>(run: (argv: ReadonlyArray<string>) => Effect.Effect<void, E, CliApp.CliApp.Environment>): void => {
  absorbingEchoedSignals()
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
}
