/**
 * Waiting for work another process does (a worker applying thousands of rows), with a liveness
 * bound instead of a deadline: the wait fails only when what `progress` reads off the state has
 * not changed for `stallMs`. A loaded or slow machine takes longer and still passes; a worker
 * that stopped (hung, crashed, stuck on a lock) fails within `stallMs` of its last step.
 */
export interface ProgressOptions {
  /** How long the progress may stand still before the wait fails (default 60 s). */
  readonly stallMs?: number
  /** Pause between reads (default 100 ms). */
  readonly everyMs?: number
}

export const untilDone = async <A>(
  read: () => Promise<A>,
  done: (state: A) => boolean,
  progress: (state: A) => unknown,
  what: string | ((state: A) => string),
  options: ProgressOptions = {}
): Promise<A> => {
  const stallMs = options.stallMs ?? 60_000
  let state = await read()
  let seen = JSON.stringify(progress(state))
  let movedAt = Date.now()
  while (!done(state)) {
    if (Date.now() - movedAt > stallMs) {
      throw new Error(`no progress for ${stallMs / 1000} s while waiting for ${typeof what === "string" ? what : what(state)} (at ${seen})`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 100))
    state = await read()
    const now = JSON.stringify(progress(state))
    if (now !== seen) {
      seen = now
      movedAt = Date.now()
    }
  }
  return state
}

export interface EventuallyOptions {
  /**
   * How long the condition may take before the wait fails (default 500 s, under vitest's 600 s per
   * test, vitest.config.ts, so this message is the one a failing test shows). A liveness bound, not a speed limit: a
   * busy machine only waits longer. A test of how long something may take states its own bound.
   */
  readonly timeoutMs?: number
  /** Pause between reads (default 50 ms). */
  readonly everyMs?: number
}

/**
 * Waiting for what another fiber, process or worker does: reads until `check` holds for what `read`
 * gave and returns it; fails after `timeoutMs` naming `what` (by default the check's own text) and
 * the last value read.
 */
export const eventually = async <A>(
  read: () => A | Promise<A>,
  check: (value: A) => boolean,
  what: string | (() => string) = String(check),
  options: EventuallyOptions = {}
): Promise<A> => {
  const timeoutMs = options.timeoutMs ?? 500_000
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (check(value)) return value
    if (Date.now() > deadline) {
      const last = JSON.stringify(value) ?? String(value)
      throw new Error(`${typeof what === "string" ? what : what()}: not within ${timeoutMs / 1000} s (last read: ${last.length > 500 ? `${last.slice(0, 500)}…` : last})`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 50))
  }
}
