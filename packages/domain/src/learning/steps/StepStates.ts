import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { afterStepChange } from "../enrollments/Completion.js"
import type { StepDates } from "../enrollments/Dates.js"
import { lockEnrollments } from "../enrollments/EnrollmentRepository.js"
import { lockStepStates, type StepStateRow, type StepStatus, writeStepStates } from "./StepStateRepository.js"

/**
 * Per-step state of an enrollment: `learning_step_states`,
 * one row per (enrollment, nodeKey) once the step was reached. The state machine is the table
 * below; a step without a row is `locked` until its computed unlock (see `stepStatusAt`). Module
 * rows (node_key of a module, status `completed`) record that `learning.module.completed` was sent.
 */

/** The step state machine as data: from → the states it may move to. `completed` never regresses. */
export const stepTransitions: Readonly<Record<StepStatus, ReadonlyArray<StepStatus>>> = {
  locked: ["available", "in_progress", "completed", "failed"],
  available: ["in_progress", "completed", "failed"],
  in_progress: ["completed", "failed"],
  failed: ["in_progress", "completed"],
  completed: []
}

// The row and its reads live with the table's one writer; re-exported for the areas that read step states here.
export { loadStepState, loadStepStates, type StepStateRow, stepStateColumns, type StepStatus, stepStatuses } from "./StepStateRepository.js"

/**
 * Whether a step is open at `now` by its computed dates: `locked` before its unlock (or before a
 * self-paced start), `closed` after its `lockAt`, else `open`. The step side answers 409
 * `step_locked` for both `locked` and `closed`.
 */
export const stepOpenAt = (dates: StepDates | undefined, now: Date = new Date()): "locked" | "open" | "closed" => {
  if (dates === undefined || dates.startRequired === true) return "locked"
  if (dates.unlockAt !== undefined && dates.unlockAt.getTime() > now.getTime()) return "locked"
  if (dates.lockAt !== undefined && dates.lockAt.getTime() <= now.getTime()) return "closed"
  return "open"
}

/**
 * The state a learner sees: the row's when it moved past `available`, else by the dates
 * (`available` once unlocked, even before the worker wrote the row).
 */
export const stepStatusAt = (row: StepStateRow | undefined, dates: StepDates | undefined, now: Date = new Date()): StepStatus => {
  if (row !== undefined && row.status !== "locked" && row.status !== "available") return row.status
  return stepOpenAt(dates, now) === "locked" ? "locked" : "available"
}

/**
 * Records a learner's progress on a step inside the caller's transaction: upserts the row and
 * moves it along `stepTransitions` (a move the table does not allow — e.g. a completed step back
 * to in_progress — leaves the row as it is; never an error). When the step becomes completed,
 * runs completion in the same transaction: `learning.module.completed` for each module all of
 * whose steps are now completed (once), `learning.course.completed` the first time the course's
 * criteria are met, and — on runs with `completeOnCriteria` — the enrollment's completion
 * (`learning.enrollment.completed`). Returns the row as it is afterwards.
 *
 * The caller has authorized the learner (`enrollmentFor`) and checked the step is open; this
 * function checks neither. `at` defaults to now (the completion time recorded).
 */
export const recordStepProgress = (
  enrollmentUuid: string,
  nodeKey: string,
  to: "in_progress" | "completed" | "failed",
  at?: Date
): Effect.Effect<StepStateRow, SqlError, SqlClient.SqlClient> =>
  Effect.map(recordStepProgresses([{ enrollmentUuid, nodeKey, to }], at), ([row]) => row!)

/** A move `recordStepProgress` makes. */
export interface StepProgress {
  readonly enrollmentUuid: string
  readonly nodeKey: string
  readonly to: "in_progress" | "completed" | "failed"
}

/**
 * `recordStepProgress` of several steps (distinct (enrollment, node) pairs) in three statements:
 * their enrollments locked (in uuid order: completion below changes them, and an enrollment is
 * always locked before its step states, docs/decisions.md "Lock order" — a no-op for a caller that
 * holds them already), the existing rows locked (in key order), then every row written — inserted
 * in its final state or moved where the table allows — in one; completion runs for each step that
 * became completed. Returns the rows as they are afterwards, in order.
 */
export const recordStepProgresses = (
  moves: ReadonlyArray<StepProgress>,
  at?: Date,
  /** Set on the one retry after a row appeared between the lock and the insert. */
  retry = false
): Effect.Effect<ReadonlyArray<StepStateRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (moves.length === 0) return []
    const when = at ?? new Date()
    // Postgres writes uuids in lower case; a caller's may come in either.
    const keyOf = (enrollmentUuid: string, nodeKey: string) => `${enrollmentUuid.toLowerCase()}/${nodeKey}`
    const keys = moves.map((move) => ({ enrollment_uuid: move.enrollmentUuid, node_key: move.nodeKey }))
    if (!retry) yield* lockEnrollments(moves.map((move) => move.enrollmentUuid))
    const current = new Map((yield* lockStepStates(keys)).map((row) => [keyOf(row.enrollment_uuid, row.node_key), row]))
    // A row exists: moved if the table allows. None yet: written in its final state at once
    // (reached `available`, then moved on).
    const writes = moves.flatMap((move) => {
      const row = current.get(keyOf(move.enrollmentUuid, move.nodeKey))
      if (row !== undefined && !stepTransitions[row.status].includes(move.to)) return []
      return [{
        enrollment_uuid: move.enrollmentUuid,
        node_key: move.nodeKey,
        status: move.to,
        completed_at: move.to === "completed" ? when : null,
        existing: row !== undefined
      }]
    })
    const written = yield* writeStepStates(writes)
    for (const row of written) current.set(keyOf(row.enrollment_uuid, row.node_key), row)
    // Written by a concurrent transaction between the lock and the insert: move that row like any
    // other, once (a row the insert missed is then locked by the first statement).
    const raced = moves.filter((move) => !current.has(keyOf(move.enrollmentUuid, move.nodeKey)))
    if (raced.length > 0) {
      if (retry) return yield* Effect.dieMessage(`recordStepProgresses: no step state row for ${raced.map((move) => keyOf(move.enrollmentUuid, move.nodeKey)).join(", ")}`)
      const rows = yield* recordStepProgresses(raced, when, true)
      raced.forEach((move, index) => current.set(keyOf(move.enrollmentUuid, move.nodeKey), rows[index]!))
    }
    for (const row of written) if (row.status === "completed") yield* afterStepChange(row.enrollment_uuid, when)
    return moves.map((move) => current.get(keyOf(move.enrollmentUuid, move.nodeKey))!)
  })
