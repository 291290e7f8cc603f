import { Effect, FiberRef, LogLevel } from "effect"

/**
 * One structured line per answered request (`{"t","method","url","status","ms","op","requestId"}`
 * on stdout, `op` only for an operation; `requestId` as the answer's `x-request-id`, RequestId.ts),
 * written in batches: a per-request logger through the Effect logging pipeline costed more than
 * the operation it logged (bench/README.md). Off when the host's minimum log level is
 * above Info (tests).
 */
export interface AccessLog {
  readonly write: (
    method: string,
    url: string,
    status: number,
    started: number,
    operationId: string | undefined,
    requestId: string | undefined
  ) => void
}

export const makeAccessLog: Effect.Effect<AccessLog> = Effect.map(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) => {
  if (LogLevel.greaterThan(minimum, LogLevel.Info)) return { write: () => {} }
  let pending = ""
  const flush = () => {
    const lines = pending
    pending = ""
    process.stdout.write(lines)
  }
  // The ISO time of the last line, reused while the millisecond is the same.
  let lastMillis = 0
  let lastTime = ""
  return {
    write: (method, url, status, started, operationId, requestId) => {
      if (pending === "") setImmediate(flush)
      const now = Date.now()
      if (now !== lastMillis) {
        lastMillis = now
        lastTime = new Date(now).toISOString()
      }
      // The same line JSON.stringify gives for {t, method, url, status, ms, op?, requestId?}, written out.
      const ms = Math.round((performance.now() - started) * 100) / 100
      // The path and query as sent, cut short: a log line stays a line.
      const shown = url.length > 512 ? `${url.slice(0, 512)}…` : url
      pending += `{"t":"${lastTime}","method":${JSON.stringify(method)},"url":${JSON.stringify(shown)},"status":${status},"ms":${ms}` +
        (operationId === undefined ? "" : `,"op":${JSON.stringify(operationId)}`) +
        (requestId === undefined ? "}\n" : `,"requestId":${JSON.stringify(requestId)}}\n`)
    }
  }
})
