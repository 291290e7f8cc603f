import { type InvalidState, stateRefusal } from "../../kernel/ApiError.js"
import type { EventType } from "../../events/EventType.js"
import type { EnrollmentStatus } from "./EnrollmentRepository.js"

/**
 * The enrollment state machine as data: every transition, its trigger (an
 * operation id, or `worker.*`), the states it leaves from (`none`: no enrollment yet), where it
 * goes (`same`: the status stays; `previous`: back to the status before a withdrawal) and the
 * events it emits with their `data.status`. The operations and the worker read it; the tests
 * generate every state × trigger from it.
 */

export type From = EnrollmentStatus | "none"
export type To = EnrollmentStatus | "same" | "previous"

export interface Transition {
  readonly trigger: string
  readonly from: ReadonlyArray<From>
  readonly to: To
  /** Events in emission order; `status` is `data.status` (`to` when absent). */
  readonly events: ReadonlyArray<{ readonly type: EventType; readonly status?: string }>
}

export const enrollmentTransitions = {
  enroll_open: { trigger: "learning.enrollments.enroll", from: ["none"], to: "active", events: [{ type: "learning.enrollment.activated" }] },
  enroll_approval: { trigger: "learning.enrollments.enroll", from: ["none"], to: "requested", events: [{ type: "learning.enrollment.requested" }] },
  enroll_full: { trigger: "learning.enrollments.enroll", from: ["none"], to: "waitlisted", events: [{ type: "learning.enrollment.requested" }] },
  invite: { trigger: "learning.enrollments.invite", from: ["none"], to: "invited", events: [{ type: "learning.enrollment.invited" }] },
  approve: { trigger: "learning.enrollments.decide", from: ["requested", "waitlisted"], to: "active", events: [{ type: "learning.enrollment.activated" }] },
  approve_offer: { trigger: "learning.enrollments.decide", from: ["requested", "waitlisted"], to: "offered", events: [{ type: "learning.enrollment.invited" }] },
  reject: { trigger: "learning.enrollments.decide", from: ["requested", "waitlisted"], to: "rejected", events: [{ type: "learning.enrollment.withdrawn" }] },
  waitlist: { trigger: "learning.enrollments.decide", from: ["requested"], to: "waitlisted", events: [{ type: "learning.enrollment.requested" }] },
  offer: { trigger: "worker.seat_freed", from: ["waitlisted"], to: "offered", events: [{ type: "learning.enrollment.invited" }] },
  accept_invitation: { trigger: "learning.enrollments.accept_invitation", from: ["invited"], to: "active", events: [{ type: "learning.enrollment.activated" }] },
  accept_seat: { trigger: "learning.seats.accept", from: ["offered"], to: "active", events: [{ type: "learning.enrollment.activated" }] },
  decline: { trigger: "learning.seats.decline", from: ["invited", "offered"], to: "declined", events: [{ type: "learning.enrollment.withdrawn" }] },
  expire: { trigger: "worker.offer_expired", from: ["invited", "offered"], to: "expired", events: [{ type: "learning.enrollment.withdrawn" }] },
  start: { trigger: "learning.enrollments.start", from: ["active"], to: "same", events: [{ type: "learning.enrollment.start", status: "active" }] },
  pause: { trigger: "learning.enrollments.pause", from: ["active"], to: "paused", events: [{ type: "learning.enrollment.pause" }] },
  resume: {
    trigger: "learning.enrollments.resume",
    from: ["paused"],
    to: "active",
    events: [{ type: "learning.enrollment.resume" }, { type: "learning.deadline.changed", status: "changed" }]
  },
  resume_worker: {
    trigger: "worker.pause_ended",
    from: ["paused"],
    to: "active",
    events: [{ type: "learning.enrollment.resume" }, { type: "learning.deadline.changed", status: "changed" }]
  },
  withdraw_grace: { trigger: "learning.enrollments.withdraw", from: ["active", "paused"], to: "withdrawal_requested", events: [{ type: "learning.enrollment.withdraw" }] },
  withdraw_now: {
    trigger: "learning.enrollments.withdraw",
    from: ["requested", "waitlisted", "offered", "active", "paused", "withdrawal_requested"],
    to: "withdrawn",
    events: [{ type: "learning.enrollment.withdraw" }, { type: "learning.enrollment.withdrawn" }]
  },
  withdraw_worker: { trigger: "worker.grace_ended", from: ["withdrawal_requested"], to: "withdrawn", events: [{ type: "learning.enrollment.withdrawn" }] },
  restore: { trigger: "learning.enrollments.restore", from: ["withdrawal_requested", "withdrawn"], to: "previous", events: [{ type: "learning.enrollment.restored" }] },
  transfer: {
    trigger: "learning.transfers.apply",
    from: ["active", "paused"],
    to: "same",
    events: [{ type: "learning.enrollment.transferred" }, { type: "learning.deadline.changed", status: "changed" }]
  },
  override: {
    trigger: "learning.enrollments.override",
    from: ["invited", "requested", "waitlisted", "offered", "active", "paused", "withdrawal_requested"],
    to: "same",
    events: [{ type: "learning.deadline.changed", status: "changed" }]
  },
  finish: { trigger: "learning.runs.finish", from: ["active", "paused"], to: "completed", events: [{ type: "learning.enrollment.completed" }] },
  criteria: { trigger: "worker.criteria_met", from: ["active", "paused"], to: "completed", events: [{ type: "learning.enrollment.completed" }] }
} as const satisfies Readonly<Record<string, Transition>>
export type TransitionName = keyof typeof enrollmentTransitions

export const transitionAllows = (name: TransitionName, from: From): boolean =>
  (enrollmentTransitions[name].from as ReadonlyArray<From>).includes(from)

/** 409 `invalid_state` unless the transition leaves from the enrollment's status, naming the states it leaves from. */
export const requireTransition = (
  name: TransitionName,
  enrollment: { readonly uuid: string; readonly status: EnrollmentStatus }
): InvalidState | undefined =>
  transitionAllows(name, enrollment.status)
    ? undefined
    : stateRefusal({
      resource: "enrollment",
      uuid: enrollment.uuid,
      state: enrollment.status,
      allowed: enrollmentTransitions[name].from.filter((from) => from !== "none"),
      operation: enrollmentTransitions[name].trigger
    })
