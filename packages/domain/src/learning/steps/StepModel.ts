import { Schema } from "effect"
import { AnyJson, DateTime, field, maxChars, MaxJsonBytes, meanings, minChars, optionalField, PageLimit, RequestUuid, strict } from "../../kernel/Common.js"
import { Verdict } from "../grading/Declarative.js"
import { StepType } from "../courses/Model.js"

/**
 * Wire shapes of the step and submission side of learning L2:
 * step views, drafts, variants (dataset only: a clue never appears in any of these), submissions
 * with their score layers, grading jobs (sample runs, generations) and demo attempts.
 */

/** A reply: any JSON (text, a number, option ids, an object of fields), at most `maxReplyBytes` as JSON. */
export const maxReplyBytes = 65_536
export const Reply = AnyJson.annotations({
  description: "The learner's reply: text, a number, option ids or an object; at most 64 KiB as JSON",
  [MaxJsonBytes]: maxReplyBytes
})

export const SubmissionStatus = Schema.Literal(
  "submitted",
  "checking",
  "check_failed",
  "awaiting_review",
  "graded",
  "accepted",
  "revision_requested",
  "cancelled"
)
export type SubmissionStatus = typeof SubmissionStatus.Type

export const ScoreLayer = Schema.Struct({
  uuid: Schema.UUID,
  kind: Schema.Literal("auto", "review", "appeal", "override", "regrade", "plan", "incident"),
  points: Schema.Number,
  maxPoints: Schema.Int,
  verdict: Schema.String,
  feedback: Schema.String,
  passed: Schema.Boolean,
  late: Schema.Boolean,
  revokedAt: Schema.optional(DateTime),
  createdAt: DateTime
}).annotations({ identifier: "LearningScoreLayer" })

export const Score = Schema.Struct({
  points: Schema.Number,
  maxPoints: Schema.Int,
  verdict: Schema.String,
  passed: Schema.Boolean,
  feedback: Schema.String
}).annotations({ identifier: "LearningScore" })

export const Submission = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  enrollmentUuid: Schema.UUID,
  courseUuid: Schema.UUID,
  runUuid: Schema.UUID,
  nodeKey: Schema.String,
  /** Pinned: the version, node and variant the attempt was made on. */
  versionNumber: Schema.Int,
  variantUuid: Schema.optional(Schema.UUID),
  attemptNo: Schema.Int,
  /** False once the attempt was refunded (cancelled before grading, or a platform failure). */
  attemptCounted: Schema.Boolean,
  reply: Reply,
  status: SubmissionStatus,
  /** Submitted after the current effective due date (an extension removes it). */
  late: Schema.Boolean,
  submittedAt: DateTime,
  gradedAt: Schema.optional(DateTime),
  /** The effective score: the newest active layer the caller may see. */
  score: Schema.optional(Score),
  layers: Schema.Array(ScoreLayer),
  demoAttemptUuid: Schema.optional(Schema.UUID),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningSubmission" })
export type Submission = typeof Submission.Type

export const SubmissionPage = Schema.Struct({ items: Schema.Array(Submission), nextCursor: Schema.optional(Schema.String) })
  .annotations({ identifier: "LearningSubmissionPage" })

export const Draft = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.String,
  reply: Reply,
  revision: Schema.Int,
  updatedAt: DateTime
}).annotations({ identifier: "LearningDraft" })
export type Draft = typeof Draft.Type

/** A variant as its learner sees it: the dataset only. */
export const Variant = Schema.Struct({
  uuid: Schema.UUID,
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.String,
  n: Schema.Int,
  source: Schema.Literal("pool", "generated"),
  dataset: AnyJson,
  createdAt: DateTime
}).annotations({ identifier: "LearningVariant" })
export type Variant = typeof Variant.Type

export const StepDates = Schema.Struct({
  unlockAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  lockAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningStepDates" })

export const StepStatus = Schema.Literal("locked", "available", "in_progress", "completed", "failed")

export const StepView = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.String,
  parentKey: Schema.optional(Schema.String),
  versionNumber: Schema.Int,
  title: Schema.String,
  stepType: Schema.optional(StepType),
  status: StepStatus,
  /** The content, once the step is available. */
  body: Schema.optional(Schema.String),
  dates: StepDates,
  attempts: Schema.Struct({ allowed: Schema.optional(Schema.Int), used: Schema.Int, left: Schema.optional(Schema.Int) }),
  grading: Schema.optional(Schema.Struct({
    maxPoints: Schema.Int,
    passThreshold: Schema.optional(Schema.Int),
    /** How replies are checked: a declarative kind, `external`, or `review` only. Never the expected answer. */
    checkedBy: Schema.String,
    review: Schema.String,
    latePolicy: Schema.String,
    variants: Schema.String
  })),
  demo: Schema.Boolean,
  variant: Schema.optional(Variant),
  draft: Schema.optional(Draft),
  lastSubmission: Schema.optional(Submission)
}).annotations({ identifier: "LearningStepView" })
export type StepView = typeof StepView.Type

export const AcknowledgedStep = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.String,
  status: StepStatus,
  completedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningAcknowledgedStep" })
export type AcknowledgedStep = typeof AcknowledgedStep.Type

export const GradingJob = Schema.Struct({
  uuid: Schema.UUID,
  kind: Schema.Literal("grade", "sample_run", "generate", "preflight", "regrade"),
  status: Schema.Literal("queued", "running", "succeeded", "failed", "cancelled"),
  courseUuid: Schema.UUID,
  enrollmentUuid: Schema.optional(Schema.UUID),
  nodeKey: Schema.optional(Schema.String),
  submissionUuid: Schema.optional(Schema.UUID),
  verdict: Schema.optional(Schema.String),
  /** A sample run's cases, or a generation's `{variantUuid, dataset}`; never a clue. */
  result: Schema.optional(AnyJson),
  platformError: Schema.optional(Schema.String),
  tries: Schema.Int,
  createdAt: DateTime,
  finishedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningGradingJob" })
export type GradingJob = typeof GradingJob.Type

export const GenerationState = Schema.Struct({
  status: Schema.Literal("none", "pending", "ready", "failed"),
  jobUuid: Schema.optional(Schema.UUID)
}).annotations({ identifier: "LearningGenerationState" })
export type GenerationState = typeof GenerationState.Type

export const DemoAttempt = Schema.Struct({
  uuid: Schema.UUID,
  courseUuid: Schema.UUID,
  nodeKey: Schema.String,
  versionNumber: Schema.Int,
  dataset: Schema.optional(AnyJson),
  reply: Reply,
  verdict: Verdict,
  points: Schema.Number,
  maxPoints: Schema.Int,
  passed: Schema.Boolean,
  status: Schema.Literal("recorded", "applied"),
  appliedSubmissionUuid: Schema.optional(Schema.UUID),
  createdAt: DateTime
}).annotations({ identifier: "LearningDemoAttempt" })
export type DemoAttempt = typeof DemoAttempt.Type

export const DemoProgress = Schema.Struct({ attempts: Schema.Array(DemoAttempt) }).annotations({ identifier: "LearningDemoProgress" })

// ---- inputs ------------------------------------------------------------------------------------------

const command = { requestUuid: RequestUuid }

export const DraftSave = Schema.Struct({
  ...command,
  expectedRevision: optionalField(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
    "The draft's revision as last read; absent for the first save (a stale one is refused, 409)."
  ),
  reply: field(Reply, "The reply being drafted: text, a number, option ids or an object; at most 64 KiB as JSON.")
}).annotations({ identifier: "LearningDraftSave", ...strict })

export const SubmissionCreate = Schema.Struct({
  ...command,
  reply: field(Reply, "The reply submitted: text, a number, option ids or an object; at most 64 KiB as JSON."),
  draftRevision: optionalField(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
    "The draft revision the reply was taken from; a newer draft since is refused (409 revision_conflict)."
  )
}).annotations({ identifier: "LearningSubmissionCreate", ...strict })

export const SubmissionCancel = Schema.Struct({ ...command, expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)) })
  .annotations({ identifier: "LearningSubmissionCancel", ...strict })

export const VariantIssue = Schema.Struct({ ...command, reissue: Schema.optional(Schema.Boolean) })
  .annotations({ identifier: "LearningVariantIssue", ...strict })

export const StepCommand = Schema.Struct(command).annotations({ identifier: "LearningStepCommand", ...strict })

export const SampleRunCreate = Schema.Struct({ ...command, reply: Reply }).annotations({ identifier: "LearningSampleRunCreate", ...strict })

export const DemoTry = Schema.Struct({ ...command, reply: Reply }).annotations({ identifier: "LearningDemoTry", ...strict })

export const DemoApply = Schema.Struct({ ...command, demoAttemptUuid: Schema.UUID }).annotations({ identifier: "LearningDemoApply", ...strict })

export const maxPortfolioSubmissions = 10

export const PortfolioCreate = Schema.Struct({
  ...command,
  submissionUuids: Schema.Array(Schema.UUID).pipe(Schema.minItems(1), Schema.maxItems(maxPortfolioSubmissions)),
  title: Schema.String.pipe(minChars(3), maxChars(160)),
  includeFeedback: Schema.Boolean
}).annotations({ identifier: "LearningPortfolioCreate", ...strict })

export const SubmissionHistoryQuery = Schema.Struct({ cursor: optionalField(Schema.String.pipe(maxChars(200)), meanings.cursor), limit: Schema.optional(PageLimit) })
