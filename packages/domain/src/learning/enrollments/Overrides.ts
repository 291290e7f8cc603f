import { Effect } from "effect"
import { InvalidRequest, InvalidState } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { appendEvent } from "../../store/Outbox.js"
import { appendAudit } from "../Audit.js"
import { once } from "../Commands.js"
import { dateFields, type StepDates, stepDates } from "./Dates.js"
import { clearManualOverrides, insertManualOverride, type StoredOverride } from "./DateOverrideRepository.js"
import { enrollmentFor } from "./EnrollmentAccess.js"
import { touchDates } from "./EnrollmentRepository.js"
import { requireTransition } from "./EnrollmentMachine.js"
import { OverrideResult } from "./EnrollmentModel.js"
import { GradeFrozen } from "../LearningErrors.js"
import { gradesFrozenAt } from "../courses/RunRepository.js"

/**
 * `enrollments.override`: staff with `dates_grant` set or clear the
 * learner layer of one enrollment's dates — for one step or run-wide — and extra attempts. A new
 * override of a step replaces the learner's previous one for it; the answer carries the computed
 * difference, and `learning.deadline.changed` goes to the learner only when it is not empty.
 */

const overrideView = (row: StoredOverride) => ({
  uuid: row.uuid,
  enrollmentUuid: row.enrollment_uuid,
  ...(row.node_key !== null ? { nodeKey: row.node_key } : {}),
  ...(row.unlock_at !== null ? { unlockAt: row.unlock_at } : {}),
  ...(row.due_at !== null ? { dueAt: row.due_at } : {}),
  ...(row.lock_at !== null ? { lockAt: row.lock_at } : {}),
  extraAttempts: row.extra_attempts,
  origin: row.origin,
  reason: row.reason,
  status: row.status,
  createdAt: row.created_at,
  ...(row.cleared_at !== null ? { clearedAt: row.cleared_at } : {})
})

type Change = { nodeKey: string; field: "unlockAt" | "dueAt" | "lockAt" | "extraAttempts"; before?: Date | number; after?: Date | number }

/** Field-by-field difference of two computations (the calendar delta). */
export const calendarDelta = (before: ReadonlyMap<string, StepDates>, after: ReadonlyMap<string, StepDates>): ReadonlyArray<Change> => {
  const changes: Array<Change> = []
  for (const [nodeKey, next] of after) {
    const prev = before.get(nodeKey)
    for (const field of dateFields) {
      const a = prev?.[field]
      const b = next[field]
      if ((a?.getTime() ?? null) === (b?.getTime() ?? null)) continue
      changes.push({ nodeKey, field, ...(a !== undefined ? { before: a } : {}), ...(b !== undefined ? { after: b } : {}) })
    }
    if ((prev?.extraAttempts ?? 0) !== next.extraAttempts) changes.push({ nodeKey, field: "extraAttempts", before: prev?.extraAttempts ?? 0, after: next.extraAttempts })
  }
  return changes
}

export interface OverrideInput {
  readonly requestUuid: string
  readonly nodeKey?: string | undefined
  readonly unlockAt?: Date | undefined
  readonly dueAt?: Date | undefined
  readonly lockAt?: Date | undefined
  readonly extraAttempts?: number | undefined
  readonly clear?: boolean | undefined
  readonly reason: string
}

export const overrideDates = (actor: Actor, enrollmentUuid: string, input: OverrideInput) =>
  once(actor, "learning.enrollments.override", input, OverrideResult, Effect.gen(function*() {
    const { enrollment, nodes, run } = yield* enrollmentFor(actor, enrollmentUuid, { lock: true })
    const refusal = requireTransition("override", enrollment)
    if (refusal !== undefined) return yield* refusal
    const frozen = gradesFrozenAt(run)
    if (frozen !== undefined && frozen.getTime() <= Date.now()) return yield* new GradeFrozen({ message: "The run's grades are frozen; dates cannot change" })
    const setting = dateFields.some((field) => input[field] !== undefined) || input.extraAttempts !== undefined
    if (input.clear === true && setting) return yield* new InvalidRequest({ message: "clear: either clear the override or set dates, not both" })
    if (input.clear !== true && !setting) return yield* new InvalidRequest({ message: "Give unlockAt, dueAt, lockAt or extraAttempts, or clear: true" })
    if (input.nodeKey !== undefined && !nodes.some((node) => node.nodeKey === input.nodeKey && node.kind === "step")) {
      return yield* new InvalidRequest({ message: `nodeKey: no step "${input.nodeKey}" in the run's version` })
    }
    if (input.unlockAt !== undefined && input.dueAt !== undefined && input.dueAt.getTime() < input.unlockAt.getTime()) {
      return yield* new InvalidRequest({ message: "dueAt: must not be before unlockAt" })
    }
    if (input.dueAt !== undefined && input.lockAt !== undefined && input.lockAt.getTime() < input.dueAt.getTime()) {
      return yield* new InvalidRequest({ message: "lockAt: must not be before dueAt" })
    }
    const before = yield* stepDates(enrollmentUuid)
    const cleared = yield* clearManualOverrides(enrollmentUuid, input.nodeKey)
    let result: StoredOverride
    if (input.clear === true) {
      if (cleared.length === 0) return yield* new InvalidState({ message: "There is no active override to clear" })
      result = cleared[0]!
    } else {
      result = yield* insertManualOverride({
        runUuid: enrollment.run_uuid,
        enrollmentUuid,
        nodeKey: input.nodeKey ?? null,
        unlockAt: input.unlockAt ?? null,
        dueAt: input.dueAt ?? null,
        lockAt: input.lockAt ?? null,
        extraAttempts: input.extraAttempts ?? 0,
        reason: input.reason,
        by: actor.profileUuid
      })
    }
    const after = yield* stepDates(enrollmentUuid)
    const delta = calendarDelta(before, after)
    const revision = yield* touchDates(enrollmentUuid)
    if (delta.length > 0) {
      yield* appendEvent({
        type: "learning.deadline.changed",
        aggregate: { kind: "learning_enrollment", uuid: enrollmentUuid, revision },
        data: { objectUuid: enrollmentUuid, status: "changed", nodeKeys: [...new Set(delta.map((change) => change.nodeKey))] },
        context: {
          profileUuid: actor.profileUuid,
          audience: [enrollment.profile_uuid],
          courseUuid: enrollment.course_uuid,
          runUuid: enrollment.run_uuid,
          enrollmentUuid
        }
      })
    }
    yield* appendAudit({
      courseUuid: enrollment.course_uuid,
      actorProfileUuid: actor.profileUuid,
      action: input.clear === true ? "override.clear" : "override.set",
      subjectKind: "date_override",
      subjectUuid: result.uuid,
      enrollmentUuid,
      before: cleared.map(overrideView),
      after: { override: overrideView(result), delta },
      reason: input.reason,
      requestUuid: input.requestUuid
    })
    return { override: overrideView(result), calendarDelta: delta }
  }))
