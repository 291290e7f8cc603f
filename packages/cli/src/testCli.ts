import { ConfigProvider, Effect, Logger } from "effect"
import { run } from "./Cli.js"
import { runCommandInProcess } from "./HostLink.js"

// Test-only (not exported by the package): the CLI's commands run in the test's process.

export interface Finished {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `birzha <args>` in this process as the built command would in its own, with `env` as its
 * whole environment (nothing of the test's own), its logs as logfmt lines on stderr. Starting
 * Node and loading the CLI for each command costs about a second of CPU; commands that only read
 * and write the database need no process of their own. Tests of what a process does (signals,
 * exit codes of the binary, `serve` and `worker`) start the built command instead.
 */
export const runCli = async (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Finished> => {
  let stdout = ""
  let stderr = ""
  const write = (stream: "out" | "err", text: string) => {
    if (stream === "out") stdout += text
    else stderr += text
  }
  const logger = Logger.map(Logger.logfmtLogger, (line) => write("err", `${line}\n`))
  const code = await Effect.runPromise(
    runCommandInProcess(run, args, write).pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
  )
  return { code, stdout, stderr }
}
