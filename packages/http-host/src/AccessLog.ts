import { Effect, FiberRef, LogLevel } from "effect"

/**
 * One structured line per answered request (`{"t","method","url","status","ms","op"}` on stdout),
 * written in batches: a per-request logger through the Effect logging pipeline costed more than
 * the operation it logged (bench/README.md, issue 11). Off when the host's minimum log level is
 * above Info (tests).
 */
export interface AccessLog {
  readonly write: (method: string, url: string, status: number, started: number, operationId: string | undefined) => void
}

export const makeAccessLog: Effect.Effect<AccessLog> = Effect.map(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) => {
  if (LogLevel.greaterThan(minimum, LogLevel.Info)) return { write: () => {} }
  let pending: Array<string> = []
  const flush = () => {
    const lines = pending
    pending = []
    process.stdout.write(lines.join(""))
  }
  return {
    write: (method, url, status, started, operationId) => {
      if (pending.length === 0) setImmediate(flush)
      pending.push(JSON.stringify({
        t: new Date().toISOString(),
        method,
        // The path and query as sent, cut short: a log line stays a line.
        url: url.length > 512 ? `${url.slice(0, 512)}…` : url,
        status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        ...(operationId === undefined ? {} : { op: operationId })
      }) + "\n")
    }
  }
})
