import { Schema } from "effect"
import { AnyJson, DateTime, maxChars, strict } from "../../kernel/Common.js"
import { DeclarativeRule, Verdict } from "./Declarative.js"
import { command, ExpectedRevision, listing, NodeKey, page, text } from "../courses/Model.js"

/**
 * Shapes of learning L3's checkers and grading: checker
 * versions (the secret is never part of any answer), their reference cases and preflight
 * results, the control history, a grading job's diagnostics (secrets redacted) and usage.
 */

export const CheckerStatus = Schema.Literal("draft", "preflighting", "ready", "preflight_failed", "suspended", "superseded")
export type CheckerStatus = typeof CheckerStatus.Type
/**
 * The states of a checker that never passed its preflight: `checker_not_ready` for publish and
 * resume. Every other state has passed it (`suspended` is paused dispatch, `superseded` still
 * grades what was queued for it: Grading.ts).
 */
export const unpreflightedCheckerStatuses: ReadonlyArray<CheckerStatus> = ["draft", "preflighting", "preflight_failed"]
export const CheckerKind = Schema.Literal("declarative", "http")

export const maxReferenceCases = 50
export const maxSampleCases = 20

/** A reply with its expected outcome: a `correct` one must be accepted, a `wrong` one must not be. */
export const ReferenceCase = Schema.Struct({
  name: Schema.optional(text(1, 120)),
  reply: AnyJson,
  clue: Schema.optional(AnyJson),
  expected: Schema.Literal("correct", "wrong")
}).annotations({ identifier: "LearningReferenceCase", ...strict })
export type ReferenceCase = typeof ReferenceCase.Type

export const Checker = Schema.Struct({
  uuid: Schema.UUID,
  courseUuid: Schema.UUID,
  lineageUuid: Schema.UUID,
  version: Schema.Int,
  name: Schema.String,
  kind: CheckerKind,
  status: CheckerStatus,
  rules: Schema.optional(AnyJson),
  url: Schema.optional(Schema.String),
  generatorUrl: Schema.optional(Schema.String),
  timeoutMs: Schema.Int,
  /** Whether a signing secret is stored; the secret itself is never returned. */
  hasSecret: Schema.Boolean,
  referenceCases: Schema.Array(AnyJson),
  sampleCases: Schema.Array(AnyJson),
  concurrency: Schema.Int,
  /** Consecutive platform errors (the circuit breaker suspends at 5). */
  errorStreak: Schema.Int,
  replaces: Schema.optional(Schema.UUID),
  supersededBy: Schema.optional(Schema.UUID),
  lastPreflightUuid: Schema.optional(Schema.UUID),
  revision: Schema.Int,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningChecker" })
export type Checker = typeof Checker.Type
export const CheckerPage = page(Checker, "LearningCheckerPage")

export const CheckerCreate = Schema.Struct({
  ...command,
  name: text(1, 120),
  kind: CheckerKind,
  rules: Schema.optional(DeclarativeRule),
  url: Schema.optional(Schema.String.pipe(maxChars(2000))),
  timeoutMs: Schema.optional(Schema.Int.pipe(Schema.between(100, 30_000))),
  secret: Schema.optional(text(24, 256)),
  generatorUrl: Schema.optional(Schema.String.pipe(maxChars(2000))),
  concurrency: Schema.optional(Schema.Int.pipe(Schema.between(1, 64))),
  referenceCases: Schema.Array(ReferenceCase).pipe(Schema.maxItems(maxReferenceCases)),
  sampleCases: Schema.optional(Schema.Array(AnyJson).pipe(Schema.maxItems(maxSampleCases))),
  replaces: Schema.optional(Schema.UUID)
}).annotations({ identifier: "LearningCheckerCreate", ...strict })
export type CheckerCreate = typeof CheckerCreate.Type

export const CheckerPreflight = Schema.Struct({
  ...command,
  cases: Schema.optional(Schema.Array(ReferenceCase).pipe(Schema.minItems(1), Schema.maxItems(maxReferenceCases)))
}).annotations({ identifier: "LearningCheckerPreflight", ...strict })

export const CheckerControl = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  reason: text(1, 1000)
}).annotations({ identifier: "LearningCheckerControl", ...strict })

export const CheckerListQuery = Schema.Struct({ status: Schema.optional(CheckerStatus), ...listing })

export const ControlEvent = Schema.Struct({
  uuid: Schema.UUID,
  checkerUuid: Schema.UUID,
  action: Schema.Literal("suspend", "resume", "auto_suspend", "preflight", "preflight_passed", "preflight_failed", "superseded"),
  fromStatus: Schema.String,
  toStatus: Schema.String,
  actorUuid: Schema.optional(Schema.UUID),
  reason: Schema.String,
  createdAt: DateTime
}).annotations({ identifier: "LearningCheckerControlEvent" })
export const ControlEventPage = page(ControlEvent, "LearningCheckerControlEventPage")

export const PreflightCase = Schema.Struct({
  index: Schema.Int,
  name: Schema.optional(Schema.String),
  expected: Schema.Literal("correct", "wrong"),
  verdict: Schema.optional(Verdict),
  platformError: Schema.optional(Schema.String),
  passed: Schema.Boolean
}).annotations({ identifier: "LearningPreflightCase" })
export type PreflightCase = typeof PreflightCase.Type

export const PreflightResult = Schema.Struct({
  jobUuid: Schema.UUID,
  checkerUuid: Schema.UUID,
  status: Schema.Literal("queued", "running", "succeeded", "failed", "cancelled"),
  passed: Schema.optional(Schema.Boolean),
  cases: Schema.Array(PreflightCase),
  createdAt: DateTime,
  finishedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningPreflightResult" })

/** One call of a job as the diagnostics show it: never a secret, the response truncated. */
export const DiagnosticTry = Schema.Struct({
  try: Schema.Int,
  at: Schema.String,
  latencyMs: Schema.Int,
  httpStatus: Schema.optional(Schema.Int),
  keyId: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String),
  response: Schema.optional(Schema.String),
  mapping: Schema.String
}).annotations({ identifier: "LearningDiagnosticTry" })
export type DiagnosticTry = typeof DiagnosticTry.Type

export const Diagnostics = Schema.Struct({
  jobUuid: Schema.UUID,
  kind: Schema.String,
  status: Schema.String,
  checkerUuid: Schema.optional(Schema.UUID),
  submissionUuid: Schema.optional(Schema.UUID),
  tries: Schema.Int,
  verdict: Schema.optional(Schema.String),
  platformError: Schema.optional(Schema.String),
  calls: Schema.Array(DiagnosticTry),
  createdAt: DateTime,
  startedAt: Schema.optional(DateTime),
  finishedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningGradingDiagnostics" })

export const UsageQuery = Schema.Struct({ from: DateTime, to: DateTime, checkerUuid: Schema.optional(Schema.UUID) })

export const UsageRow = Schema.Struct({
  checkerUuid: Schema.UUID,
  kind: Schema.String,
  day: Schema.String,
  calls: Schema.Int,
  verdicts: Schema.Int,
  platformErrors: Schema.Int,
  errorRate: Schema.Number,
  latencyMsAvg: Schema.Number,
  latencyMsMax: Schema.Int
}).annotations({ identifier: "LearningGradingUsageRow" })

export const Usage = Schema.Struct({ from: DateTime, to: DateTime, items: Schema.Array(UsageRow) }).annotations({ identifier: "LearningGradingUsage" })

// ---- regrades (re-execution of a checker version; plan-then-apply) ----------------------------------

export const maxRegradeItems = 1000

export const RegradeSelector = Schema.Struct({
  nodeKey: NodeKey,
  runUuid: Schema.optional(Schema.UUID),
  submissionUuids: Schema.optional(Schema.Array(Schema.UUID).pipe(Schema.minItems(1), Schema.maxItems(maxRegradeItems))),
  /** Which submissions of each learner on the step: the latest, the best (highest effective score), or all. */
  which: Schema.optional(Schema.Literal("latest", "best", "all"))
}).annotations({ identifier: "LearningRegradeSelector", ...strict })
export type RegradeSelector = typeof RegradeSelector.Type

export const RegradeCreate = Schema.Struct({
  ...command,
  selector: RegradeSelector,
  checkerUuid: Schema.UUID,
  policy: Schema.Literal("any", "only_if_higher")
}).annotations({ identifier: "LearningRegradeCreate", ...strict })

export const RegradeApply = Schema.Struct({
  ...command,
  itemUuids: Schema.optional(Schema.Array(Schema.UUID).pipe(Schema.minItems(1), Schema.maxItems(maxRegradeItems)))
}).annotations({ identifier: "LearningRegradeApply", ...strict })

export const RegradeItem = Schema.Struct({
  uuid: Schema.UUID,
  submissionUuid: Schema.UUID,
  status: Schema.Literal("pending", "computed", "failed", "applied", "requeued", "skipped"),
  old: Schema.optional(Schema.Struct({ points: Schema.Number, verdict: Schema.String })),
  new: Schema.optional(Schema.Struct({ points: Schema.Number, verdict: Schema.String })),
  platformError: Schema.optional(Schema.String),
  skipped: Schema.optional(Schema.Literal("frozen", "unchanged", "failed")),
  layerUuid: Schema.optional(Schema.UUID)
}).annotations({ identifier: "LearningRegradeItem" })
export type RegradeItem = typeof RegradeItem.Type

export const Regrade = Schema.Struct({
  uuid: Schema.UUID,
  courseUuid: Schema.UUID,
  checkerUuid: Schema.UUID,
  selector: AnyJson,
  policy: Schema.Literal("any", "only_if_higher"),
  status: Schema.Literal("computing", "ready", "applied", "failed", "expired"),
  progress: Schema.Struct({ total: Schema.Int, done: Schema.Int, changed: Schema.Int, failed: Schema.Int }),
  /** Items skipped by the last apply because the run's grades are frozen. */
  frozen: Schema.Array(Schema.UUID),
  items: Schema.Array(RegradeItem),
  nextCursor: Schema.optional(Schema.String),
  revision: Schema.Int,
  expiresAt: Schema.optional(DateTime),
  appliedAt: Schema.optional(DateTime),
  createdAt: DateTime
}).annotations({ identifier: "LearningRegrade" })
export type Regrade = typeof Regrade.Type

export const RegradeQuery = Schema.Struct(listing)

export const RegradeCandidateQuery = Schema.Struct({
  reason: Schema.optional(Schema.Literal("older_version", "check_failed", "incident_window")),
  nodeKey: Schema.optional(NodeKey),
  ...listing
})

export const RegradeCandidate = Schema.Struct({
  submissionUuid: Schema.UUID,
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.String,
  reason: Schema.Literal("older_version", "check_failed", "incident_window"),
  status: Schema.String,
  checkerUuid: Schema.optional(Schema.UUID),
  newerCheckerUuid: Schema.optional(Schema.UUID),
  /** incident_window: the incident whose window holds the submission. */
  incidentUuid: Schema.optional(Schema.UUID),
  submittedAt: DateTime
}).annotations({ identifier: "LearningRegradeCandidate" })
export const RegradeCandidatePage = page(RegradeCandidate, "LearningRegradeCandidatePage")
