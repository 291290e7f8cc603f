import { describeConfigError } from "@birzha/infrastructure"
import { Console, Data, Effect } from "effect"

/** A bad setting ends the command with one line per variable and exit code 1, not a stack. */
export const reportingConfigErrors = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
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

/** An operator's mistake or a refused command: one `birzha: ...` line on stderr and exit code 1. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly message: string }> {}

export const reportingFailures = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (error): error is E & CommandFailed => error instanceof CommandFailed, (failure) =>
    Console.error(`birzha: ${failure.message}`).pipe(
      Effect.zipRight(Effect.sync(() => {
        process.exitCode = 1
      }))
    ))
