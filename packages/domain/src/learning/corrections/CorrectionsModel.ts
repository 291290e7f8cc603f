import { Schema } from "effect"
import { AnyJson, DateTime, maxChars, meanings, minChars, optionalField, PageLimit, RequestUuid, strict } from "../../kernel/Common.js"
import { NodeKey, page } from "../courses/Model.js"

/**
 * Wire shapes of learning L3's corrections: extension
 * requests, incidents with their compensation plans, appeals with replacement options, and
 * regrade plans. Inputs refuse undeclared properties.
 */

const command = { requestUuid: RequestUuid }
const ExpectedRevision = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
const Cursor = Schema.String.pipe(maxChars(200))
const listing = { cursor: optionalField(Cursor, meanings.cursor), limit: Schema.optional(PageLimit) }
const Reason = Schema.String.pipe(minChars(1), maxChars(1000))
const Comment = Schema.String.pipe(maxChars(2000))
const Points = Schema.Number.pipe(Schema.between(0, 100000))
const Days = Schema.Int.pipe(Schema.between(1, 365))

// ---- extensions -----------------------------------------------------------------------------------

export const ExtensionStatus = Schema.Literal("requested", "approved", "denied", "expired")
export const ExtensionBasis = Schema.Literal("original_due", "approval")

export const ExtensionRequest = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  runUuid: Schema.UUID,
  enrollmentUuid: Schema.UUID,
  profileUuid: Schema.UUID,
  nodeKey: Schema.optional(Schema.String),
  originalDueAt: DateTime,
  requestedDueAt: DateTime,
  grantedDueAt: Schema.optional(DateTime),
  basis: Schema.optional(ExtensionBasis),
  reason: Schema.String,
  comment: Schema.String,
  status: ExtensionStatus,
  autoApproved: Schema.Boolean,
  overrideUuid: Schema.optional(Schema.UUID),
  decidedBy: Schema.optional(Schema.UUID),
  decidedAt: Schema.optional(DateTime),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningExtensionRequest" })
export const ExtensionRequestPage = page(ExtensionRequest, "LearningExtensionRequestPage")
export const ExtensionRequestList = Schema.Array(ExtensionRequest)

export const ExtensionCourseQuery = Schema.Struct({ status: Schema.optional(ExtensionStatus), runUuid: Schema.optional(Schema.UUID), ...listing })

export const ExtensionCreate = Schema.Struct({
  ...command,
  nodeKey: Schema.optional(NodeKey),
  requestedDueAt: Schema.optional(DateTime),
  days: Schema.optional(Days),
  reason: Reason
}).annotations({ identifier: "LearningExtensionCreate", ...strict })

export const ExtensionDecide = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  decision: Schema.Literal("approve", "deny"),
  grantedDueAt: Schema.optional(DateTime),
  days: Schema.optional(Days),
  basis: Schema.optional(ExtensionBasis),
  comment: Comment
}).annotations({ identifier: "LearningExtensionDecide", ...strict })

// ---- incidents ----------------------------------------------------------------------------------

export const IncidentKind = Schema.Literal("checker_outage", "content_error", "platform_outage", "other")
export const IncidentStatus = Schema.Literal("open", "resolved")

export const AffectedLearner = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  profileUuid: Schema.UUID,
  nodeKeys: Schema.Array(Schema.String),
  submissionUuids: Schema.Array(Schema.UUID)
})

export const CompensationItem = Schema.Struct({
  kind: Schema.Literal("extension", "refund", "excuse", "requeue"),
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.String,
  /** extension: the effective due before and after. */
  dueBefore: Schema.optional(DateTime),
  dueAfter: Schema.optional(DateTime),
  /** refund: extra attempts granted. */
  attempts: Schema.optional(Schema.Int),
  /** requeue: the check_failed submission queued again. */
  submissionUuid: Schema.optional(Schema.UUID)
})

export const PlanProblem = Schema.Struct({ code: Schema.String, message: Schema.String, enrollmentUuid: Schema.optional(Schema.UUID) })

export const CompensationPlan = Schema.Struct({
  uuid: Schema.UUID,
  kind: Schema.Literal("compensation"),
  status: Schema.Literal("ready", "applied", "stale", "expired"),
  incidentUuid: Schema.UUID,
  runUuid: Schema.UUID,
  baseRevisions: Schema.Record({ key: Schema.String, value: AnyJson }),
  items: Schema.Array(CompensationItem),
  blocking: Schema.Array(PlanProblem),
  expiresAt: DateTime,
  createdAt: DateTime
}).annotations({ identifier: "LearningCompensationPlan" })

export const Incident = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  runUuid: Schema.UUID,
  kind: IncidentKind,
  window: Schema.Struct({ from: DateTime, to: DateTime }),
  nodeKeys: Schema.Array(Schema.String),
  checkerUuid: Schema.optional(Schema.UUID),
  description: Schema.String,
  affected: Schema.Array(AffectedLearner),
  status: IncidentStatus,
  planUuid: Schema.optional(Schema.UUID),
  plan: Schema.optional(CompensationPlan),
  createdBy: Schema.UUID,
  createdAt: DateTime,
  updatedAt: DateTime,
  resolvedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningIncident" })
export const IncidentPage = page(Incident, "LearningIncidentPage")

export const IncidentListQuery = Schema.Struct({ status: Schema.optional(IncidentStatus), ...listing })

export const IncidentCreate = Schema.Struct({
  ...command,
  kind: IncidentKind,
  window: Schema.Struct({ from: DateTime, to: DateTime }),
  nodeKeys: Schema.optional(Schema.Array(NodeKey).pipe(Schema.maxItems(1000))),
  checkerUuid: Schema.optional(Schema.UUID),
  description: Schema.String.pipe(minChars(1), maxChars(5000))
}).annotations({ identifier: "LearningIncidentCreate", ...strict })

export const CompensationPreviewInput = Schema.Struct({
  ...command,
  extendDays: Schema.optional(Schema.Int.pipe(Schema.between(1, 60))),
  refundAttempts: Schema.optional(Schema.Int.pipe(Schema.between(1, 10))),
  excuseNodeKeys: Schema.optional(Schema.Array(NodeKey).pipe(Schema.maxItems(1000))),
  requeue: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningCompensationPreview", ...strict })

export const CompensationApplyInput = Schema.Struct({ ...command, planUuid: Schema.UUID })
  .annotations({ identifier: "LearningCompensationApply", ...strict })

// ---- appeals ------------------------------------------------------------------------------------

export const AppealStatus = Schema.Literal("open", "resolved", "escalated", "closed")
export const AppealOutcome = Schema.Literal("uphold", "adjust", "replace", "regrade")

export const Appeal = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  submissionUuid: Schema.UUID,
  courseUuid: Schema.UUID,
  runUuid: Schema.UUID,
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.String,
  reason: Schema.String,
  requestedPoints: Schema.optional(Schema.Number),
  rubricItems: Schema.Array(Schema.String),
  initialPoints: Schema.Number,
  resolvedPoints: Schema.optional(Schema.Number),
  closedPoints: Schema.optional(Schema.Number),
  status: AppealStatus,
  outcome: Schema.optional(AppealOutcome),
  comment: Schema.String,
  escalationReason: Schema.optional(Schema.String),
  resolvedBy: Schema.optional(Schema.UUID),
  closedBy: Schema.optional(Schema.UUID),
  createdAt: DateTime,
  updatedAt: DateTime,
  resolvedAt: Schema.optional(DateTime),
  escalatedAt: Schema.optional(DateTime),
  closedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningAppeal" })
export const AppealList = Schema.Array(Appeal)
export const AppealPage = page(Appeal, "LearningAppealPage")
export const AppealListQuery = Schema.Struct({ status: Schema.optional(AppealStatus), nodeKey: Schema.optional(NodeKey), ...listing })

export const AppealCreate = Schema.Struct({
  ...command,
  reason: Schema.String.pipe(minChars(1), maxChars(5000)),
  requestedPoints: Schema.optional(Points),
  rubricItems: Schema.optional(Schema.Array(Schema.String.pipe(minChars(1), maxChars(200))).pipe(Schema.maxItems(50)))
}).annotations({ identifier: "LearningAppealCreate", ...strict })

export const AppealDecide = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  outcome: AppealOutcome,
  points: Schema.optional(Points),
  replacementKey: Schema.optional(Schema.String.pipe(minChars(1), maxChars(100))),
  comment: Comment
}).annotations({ identifier: "LearningAppealDecide", ...strict })

export const AppealEscalate = Schema.Struct({ ...command, expectedRevision: ExpectedRevision, reason: Schema.String.pipe(minChars(1), maxChars(5000)) })
  .annotations({ identifier: "LearningAppealEscalate", ...strict })

export const ReplacementOptions = Schema.Struct({
  options: Schema.Array(Schema.Struct({
    key: Schema.String,
    kind: Schema.Literal("other_attempt", "newer_checker", "excuse"),
    points: Schema.Number,
    explanation: Schema.String
  }))
}).annotations({ identifier: "LearningReplacementOptions" })

// ---- regrade plans ------------------------------------------------------------------------------

export const RegradeRule = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("full_credit") }),
  Schema.Struct({ kind: Schema.Literal("excuse") }),
  Schema.Struct({ kind: Schema.Literal("max_points"), maxPoints: Schema.Int.pipe(Schema.between(0, 100000)) }),
  Schema.Struct({ kind: Schema.Literal("accept_answer"), answer: Schema.String.pipe(minChars(1), maxChars(10000)) }),
  Schema.Struct({ kind: Schema.Literal("late_penalty"), penaltyPercent: Schema.Int.pipe(Schema.between(0, 100)) })
).annotations({ identifier: "LearningRegradeRule", ...strict })

export const RegradeSelector = Schema.Struct({
  runUuid: Schema.optional(Schema.UUID),
  submissionUuids: Schema.optional(Schema.Array(Schema.UUID).pipe(Schema.minItems(1), Schema.maxItems(1000))),
  which: Schema.optional(Schema.Literal("latest", "best", "all"))
}).annotations({ identifier: "LearningRegradeSelector", ...strict })

export const RegradePlanCreate = Schema.Struct({
  ...command,
  nodeKey: NodeKey,
  rule: RegradeRule,
  selector: RegradeSelector,
  policy: Schema.Literal("any", "only_if_higher")
}).annotations({ identifier: "LearningRegradePlanCreate", ...strict })

export const RegradePlanCommit = Schema.Struct(command).annotations({ identifier: "LearningRegradePlanCommit", ...strict })
export const RegradePlanQuery = Schema.Struct(listing)

export const RegradePlanItem = Schema.Struct({
  uuid: Schema.UUID,
  n: Schema.Int,
  submissionUuid: Schema.UUID,
  old: Schema.optional(Schema.Number),
  new: Schema.optional(Schema.Number),
  maxPoints: Schema.Int,
  skipped: Schema.optional(Schema.Literal("frozen", "unchanged", "stale")),
  appliedLayerUuid: Schema.optional(Schema.UUID)
})

export const RegradePlan = Schema.Struct({
  uuid: Schema.UUID,
  courseUuid: Schema.UUID,
  nodeKey: Schema.String,
  rule: RegradeRule,
  selector: RegradeSelector,
  policy: Schema.Literal("any", "only_if_higher"),
  status: Schema.Literal("ready", "committing", "committed", "expired"),
  itemCount: Schema.Int,
  /** Items done by the commit so far (applied or skipped). */
  progress: Schema.Int,
  skipped: Schema.Struct({ frozen: Schema.Int, unchanged: Schema.Int, stale: Schema.Int }),
  items: Schema.Array(RegradePlanItem),
  nextCursor: Schema.optional(Schema.String),
  expiresAt: DateTime,
  createdAt: DateTime,
  committedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningRegradePlan" })

export type ExtensionRequestT = typeof ExtensionRequest.Type
export type CompensationPlanT = typeof CompensationPlan.Type
export type IncidentT = typeof Incident.Type
export type AppealT = typeof Appeal.Type
export type ReplacementOptionsT = typeof ReplacementOptions.Type
export type RegradePlanT = typeof RegradePlan.Type
