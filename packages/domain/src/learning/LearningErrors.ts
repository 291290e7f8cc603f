import { Schema } from "effect"

/**
 * The learning error codes (beyond the common ones): one class each, with its
 * status and stable code, declared on the operations that use them so OpenAPI lists them.
 */

export class GradeFrozen extends Schema.TaggedError<GradeFrozen>()("GradeFrozen", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "grade_frozen"
}
export class PlanStale extends Schema.TaggedError<PlanStale>()("PlanStale", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "plan_stale"
}
export class PlanExpired extends Schema.TaggedError<PlanExpired>()("PlanExpired", { message: Schema.String }) {
  static readonly status = 410
  static readonly code = "plan_expired"
}
export class CapacityFull extends Schema.TaggedError<CapacityFull>()("CapacityFull", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "capacity_full"
}
export class NotEligible extends Schema.TaggedError<NotEligible>()("NotEligible", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "not_eligible"
}
export class CourseInvalid extends Schema.TaggedError<CourseInvalid>()("CourseInvalid", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "course_invalid"
}
export class CheckerNotReady extends Schema.TaggedError<CheckerNotReady>()("CheckerNotReady", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "checker_not_ready"
}
export class OwnerRequired extends Schema.TaggedError<OwnerRequired>()("OwnerRequired", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "owner_required"
}
export class ConflictOfInterest extends Schema.TaggedError<ConflictOfInterest>()("ConflictOfInterest", { message: Schema.String }) {
  static readonly status = 403
  static readonly code = "conflict_of_interest"
}
export class WindowClosed extends Schema.TaggedError<WindowClosed>()("WindowClosed", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "window_closed"
}
export class StepLocked extends Schema.TaggedError<StepLocked>()("StepLocked", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "step_locked"
}
export class AttemptsExhausted extends Schema.TaggedError<AttemptsExhausted>()("AttemptsExhausted", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "attempts_exhausted"
}
export class DeadlinePassed extends Schema.TaggedError<DeadlinePassed>()("DeadlinePassed", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "deadline_passed"
}
export class AlreadyClaimed extends Schema.TaggedError<AlreadyClaimed>()("AlreadyClaimed", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "already_claimed"
}
