import type { CourseNode } from "../courses/Model.js"
import type { RunRow } from "../courses/RunRepository.js"

/**
 * The schedule layer of a node's dates, shared by schedule plans (`Runs.ts`,
 * `GroupSchedule.ts`) and the computed dates (`Dates.ts`), and the day arithmetic of the learning
 * area: a day is 24 hours of UTC time (dates are instants; no calendar or time zone enters).
 */

export const dayMs = 86_400_000

/** `date` moved by whole days (negative: earlier). */
export const addDays = (date: Date, days: number): Date => new Date(date.getTime() + days * dayMs)

/** Days from `from` to `to`, a started day counting whole (negative when `to` is earlier). */
export const daysBetween = (from: Date, to: Date): number => Math.ceil((to.getTime() - from.getTime()) / dayMs)

export type ScheduleDates = Partial<Record<"unlockAt" | "dueAt" | "lockAt", Date>>

/**
 * A node's schedule-layer dates in a run: explicit schedule first, else offsets from the start
 * (the run's `startsAt` for cohorts, the learner's `startedAt` for self-paced runs; `Dates.ts`
 * builds the other layers on top). A step without an unlock offset unlocks at the start.
 */
export const effectiveDates = (node: CourseNode, explicit: RunRow["schedule"][string] | undefined, startsAt: Date): ScheduleDates => {
  const at = (days: number | undefined) => (days === undefined ? undefined : addDays(startsAt, days))
  const unlock = explicit?.unlockAt !== undefined ? new Date(explicit.unlockAt) : at(node.unlockOffsetDays ?? 0)
  const due = explicit?.dueAt !== undefined ? new Date(explicit.dueAt) : at(node.dueOffsetDays)
  const lock = explicit?.lockAt !== undefined ? new Date(explicit.lockAt) : undefined
  return { ...(unlock !== undefined ? { unlockAt: unlock } : {}), ...(due !== undefined ? { dueAt: due } : {}), ...(lock !== undefined ? { lockAt: lock } : {}) }
}
