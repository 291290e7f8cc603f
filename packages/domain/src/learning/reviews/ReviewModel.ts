import { Schema } from "effect"
import { AnyJson, DateTime, maxChars, PageLimit, RequestUuid, strict } from "../../kernel/Common.js"
import { NodeKey } from "../courses/Model.js"

/**
 * Wire shapes of learning L3 reviews and automatic overrides.
 * Inputs refuse properties they do not declare; bounds live here so OpenAPI, MCP and the fuzz
 * suite read the same limits.
 */

export const ReviewKind = Schema.Literal("staff", "peer", "self")
export const AssignmentStatus = Schema.Literal("pooled", "claimed", "decided", "released", "cancelled")
export type AssignmentStatus = typeof AssignmentStatus.Type
export const ReviewOutcome = Schema.Literal("accept", "revise", "fail")
export type ReviewOutcome = typeof ReviewOutcome.Type
export const IssueKind = Schema.Literal("plagiarism", "unreadable", "checker_disagrees", "abuse", "other")

export const maxRubricItems = 50
export const RubricItem = Schema.Struct({
  criterion: Schema.String.pipe(Schema.minLength(1), maxChars(200)),
  points: Schema.Number.pipe(Schema.between(0, 1000)),
  comment: Schema.optional(Schema.String.pipe(maxChars(2000)))
}).annotations({ identifier: "LearningRubricItem", ...strict })
const Rubric = Schema.Array(RubricItem).pipe(Schema.maxItems(maxRubricItems))
const Comment = Schema.String.pipe(maxChars(10000))
const Points = Schema.Number.pipe(Schema.between(0, 1000))

export const ReviewDecision = Schema.Struct({
  outcome: ReviewOutcome,
  points: Schema.Number,
  rubric: Rubric,
  comment: Schema.String,
  final: Schema.Boolean,
  decidedBy: Schema.UUID,
  decidedAt: DateTime
}).annotations({ identifier: "LearningReviewDecision" })

export const ReviewIssue = Schema.Struct({
  kind: IssueKind,
  note: Schema.String,
  reportedBy: Schema.UUID,
  reportedAt: DateTime
}).annotations({ identifier: "LearningReviewIssue" })

export const AssignmentHistoryEntry = Schema.Struct({
  at: DateTime,
  action: Schema.String,
  byProfileUuid: Schema.optional(Schema.UUID),
  fromProfileUuid: Schema.optional(Schema.UUID),
  toProfileUuid: Schema.optional(Schema.UUID),
  reason: Schema.optional(Schema.String)
}).annotations({ identifier: "LearningReviewHistoryEntry" })

/**
 * A review assignment. The submission's learner sees its status only (`uuid`, `submissionUuid`,
 * `kind`, `status`); a peer holder never sees the learner's profile, only `pseudonym`.
 */
export const ReviewAssignment = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.optional(Schema.Int),
  submissionUuid: Schema.UUID,
  kind: ReviewKind,
  status: AssignmentStatus,
  nodeKey: Schema.optional(Schema.String),
  runUuid: Schema.optional(Schema.UUID),
  pseudonym: Schema.optional(Schema.String),
  learnerProfileUuid: Schema.optional(Schema.UUID),
  reviewerProfileUuid: Schema.optional(Schema.UUID),
  claimedAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  overdue: Schema.optional(Schema.Boolean),
  issue: Schema.optional(ReviewIssue),
  decision: Schema.optional(ReviewDecision),
  releasedAt: Schema.optional(DateTime),
  history: Schema.optional(Schema.Array(AssignmentHistoryEntry)),
  createdAt: Schema.optional(DateTime),
  updatedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningReviewAssignment" })
export type ReviewAssignment = typeof ReviewAssignment.Type

export const ReviewAssignmentList = Schema.Array(ReviewAssignment).annotations({ identifier: "LearningReviewAssignmentList" })
export const ReviewAssignmentPage = Schema.Struct({ items: Schema.Array(ReviewAssignment), nextCursor: Schema.optional(Schema.String) })
  .annotations({ identifier: "LearningReviewAssignmentPage" })

/** A decided (provisional or final) or released review. */
export const Review = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  assignmentUuid: Schema.UUID,
  submissionUuid: Schema.UUID,
  nodeKey: Schema.String,
  runUuid: Schema.UUID,
  kind: ReviewKind,
  status: Schema.Literal("decided", "released"),
  reviewerProfileUuid: Schema.UUID,
  outcome: ReviewOutcome,
  points: Schema.Number,
  rubric: Rubric,
  comment: Schema.String,
  final: Schema.Boolean,
  decidedBy: Schema.UUID,
  decidedAt: DateTime,
  releasedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningReview" })
export type Review = typeof Review.Type
export const ReviewPage = Schema.Struct({ items: Schema.Array(Review), nextCursor: Schema.optional(Schema.String) })
  .annotations({ identifier: "LearningReviewPage" })

export const ReviewDraft = Schema.Struct({
  assignmentUuid: Schema.UUID,
  submissionUuid: Schema.UUID,
  revision: Schema.Int,
  rubric: Rubric,
  comment: Schema.String,
  points: Schema.optional(Schema.Number),
  savedAt: DateTime
}).annotations({ identifier: "LearningReviewDraft" })

export const ReviewWorkspace = Schema.Struct({
  assignment: ReviewAssignment,
  learner: Schema.Struct({ pseudonym: Schema.String, profileUuid: Schema.optional(Schema.UUID), enrollmentUuid: Schema.optional(Schema.UUID) }),
  submission: Schema.Struct({ uuid: Schema.UUID, attemptNo: Schema.Int, reply: AnyJson, submittedAt: DateTime, versionNumber: Schema.Int }),
  step: Schema.Struct({
    nodeKey: Schema.String,
    title: Schema.String,
    body: Schema.optional(Schema.String),
    maxPoints: Schema.Int,
    passThreshold: Schema.optional(Schema.Int)
  }),
  checkerOutput: Schema.optional(Schema.Struct({ verdict: Schema.String, points: Schema.Number, feedback: Schema.String })),
  draft: Schema.optional(ReviewDraft),
  earlierAttempts: Schema.Array(Schema.Struct({
    uuid: Schema.UUID,
    attemptNo: Schema.Int,
    submittedAt: DateTime,
    status: Schema.String,
    reply: AnyJson,
    points: Schema.optional(Schema.Number),
    verdict: Schema.optional(Schema.String)
  }))
}).annotations({ identifier: "LearningReviewWorkspace" })
export type ReviewWorkspace = typeof ReviewWorkspace.Type

export const AutomaticOverride = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  submissionUuid: Schema.UUID,
  points: Schema.Number,
  verdict: Schema.String,
  reason: Schema.String,
  status: Schema.Literal("active", "revoked"),
  layerUuid: Schema.optional(Schema.UUID),
  createdBy: Schema.optional(Schema.UUID),
  revokedBy: Schema.optional(Schema.UUID),
  revokeReason: Schema.optional(Schema.String),
  revokedAt: Schema.optional(DateTime),
  createdAt: DateTime,
  updatedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningAutomaticOverride" })
export type AutomaticOverride = typeof AutomaticOverride.Type
export const AutomaticOverrideList = Schema.Array(AutomaticOverride).annotations({ identifier: "LearningAutomaticOverrideList" })

export const CandidateReason = Schema.Literal("check_failed", "near_timeout", "appeal_cluster", "newer_checker")
export const OverrideCandidate = Schema.Struct({
  submissionUuid: Schema.UUID,
  enrollmentUuid: Schema.UUID,
  runUuid: Schema.UUID,
  nodeKey: Schema.String,
  reason: CandidateReason,
  status: Schema.String,
  checkerUuid: Schema.optional(Schema.UUID),
  detail: Schema.String,
  submittedAt: DateTime
}).annotations({ identifier: "LearningOverrideCandidate" })
export const OverrideCandidatePage = Schema.Struct({ items: Schema.Array(OverrideCandidate), nextCursor: Schema.optional(Schema.String) })
  .annotations({ identifier: "LearningOverrideCandidatePage" })

// ---- inputs ----------------------------------------------------------------------------------------

const command = { requestUuid: RequestUuid }
const Revision = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
const Cursor = Schema.optional(Schema.String.pipe(maxChars(200)))
const Reason = Schema.String.pipe(Schema.minLength(1), maxChars(2000))

export const ReviewListQuery = Schema.Struct({
  nodeKey: Schema.optional(NodeKey),
  reviewerUuid: Schema.optional(Schema.UUID),
  status: Schema.optional(Schema.Literal("decided", "released")),
  cursor: Cursor,
  limit: Schema.optional(PageLimit)
}).annotations({ identifier: "LearningReviewListQuery", ...strict })

export const AssignmentListQuery = Schema.Struct({
  status: Schema.optional(Schema.Literal("pooled", "claimed", "overdue", "issue")),
  nodeKey: Schema.optional(NodeKey),
  mine: Schema.optional(Schema.Literal("true", "false")),
  cursor: Cursor,
  limit: Schema.optional(PageLimit)
}).annotations({ identifier: "LearningAssignmentListQuery", ...strict })

export const ReviewClaim = Schema.Struct(command).annotations({ identifier: "LearningReviewClaim", ...strict })

export const ReviewDecide = Schema.Struct({
  ...command,
  /** The assignment's revision. */
  expectedRevision: Revision,
  outcome: ReviewOutcome,
  points: Schema.optional(Points),
  rubric: Rubric,
  comment: Comment,
  final: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LearningReviewDecide", ...strict })

export const ReviewDraftSave = Schema.Struct({
  ...command,
  /** Absent for the first save; then the draft's revision (stale → 409). */
  expectedRevision: Schema.optional(Revision),
  rubric: Rubric,
  comment: Comment,
  points: Schema.optional(Points)
}).annotations({ identifier: "LearningReviewDraftSave", ...strict })

export const ReviewReassign = Schema.Struct({
  ...command,
  expectedRevision: Revision,
  /** Which assignment of the submission, when it has several open ones. */
  assignmentUuid: Schema.optional(Schema.UUID),
  toProfileUuid: Schema.optional(Schema.UUID),
  pool: Schema.optional(Schema.Literal(true)),
  reason: Reason
}).annotations({ identifier: "LearningReviewReassign", ...strict })

export const ReviewRelease = Schema.Struct({ ...command, expectedRevision: Revision })
  .annotations({ identifier: "LearningReviewRelease", ...strict })

export const ReviewReportIssue = Schema.Struct({
  ...command,
  kind: IssueKind,
  note: Schema.String.pipe(Schema.minLength(1), maxChars(2000))
}).annotations({ identifier: "LearningReviewReportIssue", ...strict })

export const OverrideCandidatesQuery = Schema.Struct({
  reason: Schema.optional(CandidateReason),
  nodeKey: Schema.optional(NodeKey),
  cursor: Cursor,
  limit: Schema.optional(PageLimit)
}).annotations({ identifier: "LearningOverrideCandidatesQuery", ...strict })

export const AutomaticOverrideCreate = Schema.Struct({
  ...command,
  points: Schema.optional(Points),
  verdict: Schema.optional(Schema.Literal("accepted", "wrong", "partial", "invalid_reply")),
  reason: Reason
}).annotations({ identifier: "LearningAutomaticOverrideCreate", ...strict })

export const AutomaticOverrideRevoke = Schema.Struct({ ...command, expectedRevision: Revision, reason: Reason })
  .annotations({ identifier: "LearningAutomaticOverrideRevoke", ...strict })
