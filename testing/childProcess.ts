import { spawn, type SpawnOptions } from "node:child_process"

/** What a finished process left: its exit code (`null` when a signal ended it) and its output. */
export interface Finished {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs a command to its end without blocking the test's worker, as `spawnSync` would: while a
 * worker's event loop waits on a synchronous child, vitest's own calls from that worker to the
 * runner go unanswered, and after 60 s they fail the whole run with "Timeout calling onTaskUpdate"
 * although every test passed (seen with a second copy of the suite beside this one, when two
 * children of StartupMemory.test.ts took 63 s). No time limit of its own: the test's timeout is
 * the liveness bound (vitest.config.ts).
 */
export const runToEnd = (command: string, args: ReadonlyArray<string>, options: Omit<SpawnOptions, "stdio"> = {}): Promise<Finished> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })
