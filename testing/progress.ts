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
