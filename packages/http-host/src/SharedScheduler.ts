import { Scheduler } from "effect"

/**
 * Effect's default scheduler with one queue of tasks for every fiber, as effect had it before 3.20:
 * a fiber's resumption waits in that queue and a microtask drains all that are due. Effect's own
 * keeps a queue per fiber (a `WeakMap` from fiber to queue, and a microtask per fiber), so that each
 * task runs in its own fiber's `AsyncLocalStorage` context; nothing in the host reads that context,
 * and per request it cost a queue made, a `WeakMap` entry and its own microtask (docs/decisions.md,
 * "Request fibers share one scheduler queue"). After 2,048 drains in a row a timer's turn lets
 * timers and I/O run, as in effect's.
 */
export const sharedScheduler = (): Scheduler.Scheduler => {
  const maxMicrotasksBeforeTimer = 2048
  const runner = new Scheduler.SchedulerRunner((depth, drain) => {
    if (depth >= maxMicrotasksBeforeTimer) setTimeout(() => drain(0), 0)
    else void Promise.resolve().then(() => drain(depth + 1))
  })
  return Scheduler.make((task, priority) => runner.scheduleTask(task, priority))
}
