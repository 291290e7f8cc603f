import { describeConfigError } from "@birzha/infrastructure"
import { Console, Data, Effect } from "effect"
import { setExitCode } from "./HostLink.js"

/** A bad setting ends the command with one line per variable and exit code 1, not a stack. */
export const reportingConfigErrors = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (error): error is E & { readonly _tag: "ConfigError" } =>
      typeof error === "object" && error !== null && "_tag" in error && error._tag === "ConfigError",
    (error) =>
      Console.error(`birzha: invalid configuration\n${describeConfigError(error as never)}`).pipe(
        Effect.zipRight(setExitCode(1))
      )
  )

/** An operator's mistake or a refused command: one `birzha: ...` line on stderr and exit code 1. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly message: string }> {}

export const reportingFailures = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (error): error is E & CommandFailed => error instanceof CommandFailed, (failure) =>
    Console.error(`birzha: ${failure.message}`).pipe(
      Effect.zipRight(setExitCode(1))
    ))

/** A database error as one line: the cause, and a hint only where one helps (not for a held lock). */
export const databaseProblem = (doing: string, error: { readonly message: string; readonly cause?: unknown }): string => {
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? `: ${error.cause.message}` : ""
  // The embedded database is held by another process: its own message says which and what to do.
  if (error.message.includes("is in use by process")) return error.message
  return `${doing} (is the database up and migrated, birzha migrate?): ${error.message}${cause}`
}
