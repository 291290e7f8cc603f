import { Schema } from "effect"
import { AnyJson, DateTime, maxChars, meanings, minChars, optionalField, PageLimit, RequestUuid, strict } from "../../kernel/Common.js"
import { NodeVariants, StepGradingFields } from "../steps/StepGrading.js"

/**
 * The learning area's wire shapes for L1: courses with their node tree,
 * versions, runs, plans, library items and audit events. Inputs refuse properties they do not
 * declare; every bound is the schema's, so OpenAPI, MCP and the fuzz suite read the same limits.
 */

export const text = (min: number, max: number) => Schema.String.pipe(minChars(min), maxChars(max))

/** A node's key: stable across versions, copies and transfers; lower-case letters, digits, `-` and `_`. */
export const NodeKey = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, { message: () => "a nodeKey is 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit" })
).annotations({ identifier: "NodeKey" })

/** Most nodes a course tree holds. */
export const maxNodes = 1000

export const StepType = Schema.Literal("text", "video", "quiz", "assignment", "code")

export const Grading = Schema.Struct({
  maxPoints: Schema.Int.pipe(Schema.between(0, 1000)),
  passThreshold: Schema.optional(Schema.Int.pipe(Schema.between(0, 1000))),
  attempts: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  // The step/submission side: how a reply is graded (StepModel.ts).
  ...StepGradingFields
}).annotations({ identifier: "LearningGrading", ...strict })

/**
 * One node of a course tree, in a flat list: `parentKey` names its module (absent at the top);
 * siblings keep the list's order. Modules hold nodes; steps hold content and grading.
 */
export const CourseNode = Schema.Struct({
  nodeKey: NodeKey,
  parentKey: Schema.optional(NodeKey),
  kind: Schema.Literal("module", "step"),
  title: text(1, 200),
  stepType: Schema.optional(StepType),
  body: Schema.optional(Schema.String.pipe(maxChars(50000))),
  grading: Schema.optional(Grading),
  /** Days after the run's start (cohort) or the learner's start (self-paced) the step unlocks / falls due. */
  unlockOffsetDays: Schema.optional(Schema.Int.pipe(Schema.between(0, 3650))),
  dueOffsetDays: Schema.optional(Schema.Int.pipe(Schema.between(0, 3650))),
  demo: Schema.optional(Schema.Boolean),
  variants: Schema.optional(NodeVariants)
}).annotations({ identifier: "CourseNode", ...strict })
export type CourseNode = typeof CourseNode.Type

export const CourseNodes = Schema.Array(CourseNode).pipe(Schema.maxItems(maxNodes))

export const CompletionPolicy = Schema.Struct({
  minScorePercent: Schema.optional(Schema.Int.pipe(Schema.between(0, 100))),
  requiredNodeKeys: Schema.optional(Schema.Array(NodeKey).pipe(Schema.maxItems(maxNodes)))
}).annotations({ identifier: "CompletionPolicy", ...strict })

export const CourseKind = Schema.Literal("single", "bundle")
export const Visibility = Schema.Literal("listed", "unlisted", "private")
export const CourseStatus = Schema.Literal("draft", "published", "archived")
export type CourseStatus = typeof CourseStatus.Type

export const BundleMember = Schema.Struct({ courseUuid: Schema.UUID, required: Schema.Boolean })
  .annotations({ identifier: "BundleMember", ...strict })

export const Level = Schema.Literal("beginner", "intermediate", "advanced")
export const Format = Schema.Literal("online", "offline", "hybrid")

export const Metadata = Schema.Struct({
  level: Schema.optional(Level),
  format: Schema.optional(Format),
  durationHours: Schema.optional(Schema.Int),
  outcomes: Schema.optional(Schema.Array(Schema.String)),
  certificate: Schema.optional(Schema.Boolean),
  startsOn: Schema.optional(Schema.String)
}).annotations({ identifier: "CourseMetadata" })

export const ValidationIssue = Schema.Struct({
  severity: Schema.Literal("error", "warning"),
  nodeKey: Schema.optional(Schema.String),
  code: Schema.String,
  message: Schema.String
}).annotations({ identifier: "ValidationIssue" })
export type ValidationIssue = typeof ValidationIssue.Type

export const Validation = Schema.Struct({ issues: Schema.Array(ValidationIssue) }).annotations({ identifier: "CourseValidation" })

/** The author's view: the draft, its validation summary and its difference to the last version. */
export const CourseAuthor = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  ownerProfileUuid: Schema.UUID,
  title: Schema.String,
  summary: Schema.String,
  kind: CourseKind,
  visibility: Visibility,
  status: CourseStatus,
  publicationUuid: Schema.optional(Schema.UUID),
  nodes: Schema.Array(CourseNode),
  members: Schema.Array(BundleMember),
  completionPolicy: CompletionPolicy,
  freezeAfterDays: Schema.Int,
  metadata: Metadata,
  /** 0 until the first publish. */
  latestVersion: Schema.Int,
  validation: Schema.Struct({ errors: Schema.Int, warnings: Schema.Int }),
  diff: Schema.Struct({ added: Schema.Array(Schema.String), removed: Schema.Array(Schema.String), changed: Schema.Array(Schema.String) }),
  createdAt: DateTime,
  updatedAt: DateTime,
  publishedAt: Schema.optional(DateTime),
  archivedAt: Schema.optional(DateTime)
}).annotations({ identifier: "CourseAuthor" })
export type CourseAuthor = typeof CourseAuthor.Type

/** A node as anyone who may see the course sees its outline (no bodies, no grading details). */
export const OutlineNode = Schema.Struct({
  nodeKey: Schema.String,
  parentKey: Schema.optional(Schema.String),
  kind: Schema.Literal("module", "step"),
  title: Schema.String,
  stepType: Schema.optional(StepType)
}).annotations({ identifier: "CourseOutlineNode" })

export const RunStatus = Schema.Literal("draft", "scheduled", "running", "finished", "cancelled", "archived")
export type RunStatus = typeof RunStatus.Type
export const Pacing = Schema.Literal("cohort", "self")
export const Admission = Schema.Literal("open", "approval", "invite")

export const EnrollmentWindow = Schema.Struct({ opensAt: Schema.optional(DateTime), closesAt: Schema.optional(DateTime) })
  .annotations({ identifier: "EnrollmentWindow", ...strict })
export const PausePolicy = Schema.Struct({
  maxDays: Schema.Int.pipe(Schema.between(0, 365)),
  maxCount: Schema.Int.pipe(Schema.between(0, 10))
}).annotations({ identifier: "PausePolicy", ...strict })

/**
 * The run's extension policy: requests up to `maxDays` past the original due,
 * at most `maxCount` per enrollment, asked no later than `windowDays` after the due; requests of
 * up to `autoApproveDays` are approved at once (0: every request waits for staff).
 */
export const ExtensionPolicy = Schema.Struct({
  autoApproveDays: Schema.Int.pipe(Schema.between(0, 365)),
  maxDays: Schema.Int.pipe(Schema.between(0, 365)),
  maxCount: Schema.Int.pipe(Schema.between(0, 50)),
  windowDays: Schema.Int.pipe(Schema.between(0, 365))
}).annotations({ identifier: "ExtensionPolicy", ...strict })
export type ExtensionPolicy = typeof ExtensionPolicy.Type

/** The run's enrollment policies; each has the design's default. */
export const EnrollmentPolicy = Schema.Struct({
  /** How long a waitlisted learner has to take a freed seat. */
  seatOfferHours: Schema.Int.pipe(Schema.between(1, 720)),
  /** 0: a withdrawal is immediate; else it waits this long in withdrawal_requested. */
  withdrawGraceHours: Schema.Int.pipe(Schema.between(0, 720)),
  /** Days a withdrawal can be undone. */
  restoreDays: Schema.Int.pipe(Schema.between(0, 365)),
  /** Lead times of learning.deadline.approaching before each due date. */
  reminderHours: Schema.Array(Schema.Int.pipe(Schema.between(1, 720))).pipe(Schema.maxItems(5)),
  /** A self-paced enrollment completes once the completion criteria are met. */
  completeOnCriteria: Schema.Boolean
}).annotations({ identifier: "EnrollmentPolicy", ...strict })
export type EnrollmentPolicy = typeof EnrollmentPolicy.Type
export const EnrollmentPolicyInput = Schema.partial(EnrollmentPolicy).annotations({ identifier: "EnrollmentPolicyInput", ...strict })
export type EnrollmentPolicyInput = typeof EnrollmentPolicyInput.Type

export const NodeDates = Schema.Struct({
  unlockAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  lockAt: Schema.optional(DateTime)
}).annotations({ identifier: "NodeDates" })
export type NodeDates = typeof NodeDates.Type

export const Run = Schema.Struct({
  uuid: Schema.UUID,
  courseUuid: Schema.UUID,
  versionNumber: Schema.Int,
  title: Schema.String,
  pacing: Pacing,
  startsAt: DateTime,
  endsAt: Schema.optional(DateTime),
  admission: Admission,
  capacity: Schema.optional(Schema.Int),
  waitlist: Schema.Boolean,
  enrollmentWindow: EnrollmentWindow,
  pausePolicy: PausePolicy,
  enrollmentPolicy: EnrollmentPolicy,
  extensionPolicy: ExtensionPolicy,
  /** Explicit dates by nodeKey; a node without one follows its offsets from the start. */
  schedule: Schema.Record({ key: Schema.String, value: NodeDates }),
  status: RunStatus,
  revision: Schema.Int,
  createdAt: DateTime,
  updatedAt: DateTime,
  finishedAt: Schema.optional(DateTime),
  cancelledAt: Schema.optional(DateTime),
  gradesFrozenAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningRun" })
export type Run = typeof Run.Type

export const Course = Schema.Struct({
  uuid: Schema.UUID,
  title: Schema.String,
  summary: Schema.String,
  kind: CourseKind,
  status: CourseStatus,
  visibility: Visibility,
  versionNumber: Schema.Int,
  outline: Schema.Array(OutlineNode),
  metadata: Metadata,
  publicationUuid: Schema.optional(Schema.UUID),
  publishedAt: DateTime,
  /** Runs open to new learners (scheduled or running). */
  runs: Schema.Array(Run)
}).annotations({ identifier: "LearningCourse" })

export const CourseCard = Schema.Struct({
  uuid: Schema.UUID,
  title: Schema.String,
  summary: Schema.String,
  kind: CourseKind,
  versionNumber: Schema.Int,
  metadata: Metadata,
  publicationUuid: Schema.UUID,
  publishedAt: DateTime
}).annotations({ identifier: "CourseCard" })

export const CourseVersion = Schema.Struct({
  courseUuid: Schema.UUID,
  number: Schema.Int,
  contentHash: Schema.String,
  title: Schema.String,
  summary: Schema.String,
  nodes: Schema.Array(CourseNode),
  members: Schema.Array(BundleMember),
  changelog: Schema.String,
  publishedBy: Schema.UUID,
  publishedAt: DateTime
}).annotations({ identifier: "CourseVersion" })
export type CourseVersion = typeof CourseVersion.Type

export const PreviewNode = Schema.Struct({
  nodeKey: Schema.String,
  parentKey: Schema.optional(Schema.String),
  kind: Schema.Literal("module", "step"),
  title: Schema.String,
  stepType: Schema.optional(StepType),
  state: Schema.Literal("locked", "available"),
  unlockAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  body: Schema.optional(Schema.String)
}).annotations({ identifier: "CoursePreviewNode" })

export const CoursePreview = Schema.Struct({
  courseUuid: Schema.UUID,
  /** 0: the draft. */
  versionNumber: Schema.Int,
  asOf: DateTime,
  /** The start the offsets count from: the newest run of that version, or asOf when it has none. */
  startsAt: DateTime,
  variantSeed: Schema.optional(Schema.String),
  nodes: Schema.Array(PreviewNode)
}).annotations({ identifier: "CoursePreview" })

export const PlanItem = Schema.Struct({
  /** A group's dates (a change with groupUuid becomes a group date override of that group's members). */
  groupUuid: Schema.optional(Schema.UUID),
  nodeKey: Schema.optional(Schema.String),
  field: Schema.Literal("startsAt", "endsAt", "unlockAt", "dueAt", "lockAt"),
  before: Schema.optional(DateTime),
  after: Schema.optional(DateTime)
}).annotations({ identifier: "PlanItem" })

export const PlanProblem = Schema.Struct({ code: Schema.String, message: Schema.String, nodeKey: Schema.optional(Schema.String) })
  .annotations({ identifier: "PlanProblem" })

export const Plan = Schema.Struct({
  uuid: Schema.UUID,
  kind: Schema.Literal("schedule"),
  status: Schema.Literal("ready", "applied", "stale", "expired"),
  courseUuid: Schema.UUID,
  runUuid: Schema.UUID,
  baseRevisions: Schema.Struct({ run: Schema.Int }),
  items: Schema.Array(PlanItem),
  blocking: Schema.Array(PlanProblem),
  affectedEnrollments: Schema.Int,
  expiresAt: DateTime,
  createdAt: DateTime
}).annotations({ identifier: "SchedulePlan" })

export const ScheduleApplied = Schema.Struct({ run: Run, changedEnrollments: Schema.Int }).annotations({ identifier: "ScheduleApplied" })

export const AdmissionPreview = Schema.Struct({
  mode: Admission,
  eligible: Schema.Boolean,
  reasons: Schema.Array(Schema.String),
  seatsLeft: Schema.optional(Schema.Int),
  waitlistPosition: Schema.optional(Schema.Int)
}).annotations({ identifier: "AdmissionPreview" })

export const LibraryItem = Schema.Struct({
  uuid: Schema.UUID,
  title: Schema.String,
  nodes: Schema.Array(CourseNode),
  sourceCourseUuid: Schema.optional(Schema.UUID),
  sourceNodeKey: Schema.String,
  createdAt: DateTime
}).annotations({ identifier: "LibraryItem" })

export const AuditEvent = Schema.Struct({
  uuid: Schema.UUID,
  courseUuid: Schema.UUID,
  actorProfileUuid: Schema.optional(Schema.UUID),
  action: Schema.String,
  subjectKind: Schema.String,
  subjectUuid: Schema.UUID,
  enrollmentUuid: Schema.optional(Schema.UUID),
  before: Schema.optional(AnyJson),
  after: Schema.optional(AnyJson),
  reason: Schema.String,
  requestUuid: Schema.optional(Schema.UUID),
  createdAt: DateTime
}).annotations({ identifier: "LearningAuditEvent" })

export const page = <S extends Schema.Schema.Any>(item: S, identifier: string) =>
  Schema.Struct({ items: Schema.Array(item), nextCursor: Schema.optional(Schema.String) }).annotations({ identifier })

export const CourseCardPage = page(CourseCard, "CourseCardPage")
export const CourseAuthorPage = page(CourseAuthor, "CourseAuthorPage")
export const CourseVersionPage = page(CourseVersion, "CourseVersionPage")
export const RunPage = page(Run, "LearningRunPage")
export const LibraryItemPage = page(LibraryItem, "LibraryItemPage")
export const AuditEventPage = page(AuditEvent, "LearningAuditEventPage")

// ---- inputs (query schemas carry no identifier: a named one loses its parameters in OpenAPI) ----

const Cursor = Schema.String.pipe(maxChars(200))
export const listing = { cursor: optionalField(Cursor, meanings.cursor), limit: Schema.optional(PageLimit) }

export const CourseListQuery = Schema.Struct({
  q: Schema.optional(Schema.String.pipe(maxChars(200))),
  level: Schema.optional(Level),
  format: Schema.optional(Format),
  ...listing
})
export const AuthorListQuery = Schema.Struct({ status: Schema.optional(CourseStatus), ...listing })
export const PageQuery = Schema.Struct(listing)
export const RunListQuery = Schema.Struct({ status: Schema.optional(RunStatus), ...listing })
export const LibraryQuery = Schema.Struct({ q: Schema.optional(Schema.String.pipe(maxChars(200))), ...listing })
export const AuditQuery = Schema.Struct({
  action: Schema.optional(Schema.String.pipe(maxChars(80))),
  actorUuid: Schema.optional(Schema.UUID),
  enrollmentUuid: Schema.optional(Schema.UUID),
  from: Schema.optional(DateTime),
  to: Schema.optional(DateTime),
  ...listing
})

export const command = { requestUuid: RequestUuid }
export const ExpectedRevision = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))

export const CourseCreate = Schema.Struct({
  ...command,
  title: text(1, 160),
  summary: Schema.optional(Schema.String.pipe(maxChars(2000))),
  kind: CourseKind
}).annotations({ identifier: "CourseCreate", ...strict })

export const CourseUpdate = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  title: Schema.optional(text(1, 160)),
  summary: Schema.optional(Schema.String.pipe(maxChars(2000))),
  visibility: Schema.optional(Visibility),
  nodes: Schema.optional(CourseNodes),
  completionPolicy: Schema.optional(CompletionPolicy),
  freezeAfterDays: Schema.optional(Schema.Int.pipe(Schema.between(0, 3650)))
}).annotations({ identifier: "CourseUpdate", ...strict })

export const CourseArchive = Schema.Struct({ ...command, expectedRevision: ExpectedRevision, reason: text(1, 1000) })
  .annotations({ identifier: "CourseArchive", ...strict })

export const CourseBundle = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  members: Schema.Array(BundleMember).pipe(Schema.minItems(1), Schema.maxItems(20))
}).annotations({ identifier: "CourseBundle", ...strict })

export const CourseCopy = Schema.Struct({ ...command, title: text(1, 160), includeCheckers: Schema.Boolean })
  .annotations({ identifier: "CourseCopy", ...strict })

export const FromPublication = Schema.Struct({ ...command, publicationUuid: Schema.UUID })
  .annotations({ identifier: "CourseFromPublication", ...strict })

export const CoursePreviewInput = Schema.Struct({
  versionNumber: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  asOf: DateTime,
  nodeKey: Schema.optional(NodeKey),
  variantSeed: Schema.optional(Schema.String.pipe(maxChars(64)))
}).annotations({ identifier: "CoursePreviewInput", ...strict })

export const CoursePublish = Schema.Struct({ ...command, expectedRevision: ExpectedRevision, changelog: Schema.String.pipe(maxChars(5000)) })
  .annotations({ identifier: "CoursePublish", ...strict })

export const RunCreate = Schema.Struct({
  ...command,
  versionNumber: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  title: text(1, 160),
  pacing: Pacing,
  startsAt: DateTime,
  endsAt: Schema.optional(DateTime),
  admission: Admission,
  capacity: Schema.optional(Schema.Int.pipe(Schema.between(1, 100000))),
  waitlist: Schema.Boolean,
  enrollmentWindow: EnrollmentWindow,
  pausePolicy: PausePolicy,
  enrollmentPolicy: Schema.optional(EnrollmentPolicyInput),
  extensionPolicy: Schema.optional(ExtensionPolicy)
}).annotations({ identifier: "RunCreate", ...strict })

export const RunUpdate = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  title: Schema.optional(text(1, 160)),
  capacity: Schema.optional(Schema.Int.pipe(Schema.between(1, 100000))),
  admission: Schema.optional(Admission),
  enrollmentWindow: Schema.optional(EnrollmentWindow),
  pausePolicy: Schema.optional(PausePolicy),
  enrollmentPolicy: Schema.optional(EnrollmentPolicyInput),
  extensionPolicy: Schema.optional(ExtensionPolicy),
  publish: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "RunUpdate", ...strict })

export const RunCommand = Schema.Struct({ ...command, expectedRevision: ExpectedRevision }).annotations({ identifier: "RunCommand", ...strict })
export const RunCancel = Schema.Struct({ ...command, expectedRevision: ExpectedRevision, reason: text(1, 1000) })
  .annotations({ identifier: "RunCancel", ...strict })

export const ScheduleChange = Schema.Struct({
  nodeKey: Schema.optional(NodeKey),
  groupUuid: Schema.optional(Schema.UUID),
  shiftDays: Schema.optional(Schema.Int.pipe(Schema.between(-365, 365))),
  unlockAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  lockAt: Schema.optional(DateTime)
}).annotations({ identifier: "ScheduleChange", ...strict })
export type ScheduleChange = typeof ScheduleChange.Type

export const SchedulePreviewInput = Schema.Struct({
  ...command,
  changes: Schema.Array(ScheduleChange).pipe(Schema.maxItems(200)),
  startsAt: Schema.optional(DateTime),
  endsAt: Schema.optional(DateTime)
}).annotations({ identifier: "SchedulePreviewInput", ...strict })

export const ScheduleApplyInput = Schema.Struct(command).annotations({ identifier: "ScheduleApplyInput", ...strict })

export const LibrarySave = Schema.Struct({ ...command, nodeKey: NodeKey, title: text(1, 160) })
  .annotations({ identifier: "LibrarySave", ...strict })

export const LibraryInsert = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  parentNodeKey: Schema.optional(NodeKey),
  position: Schema.optional(Schema.Int.pipe(Schema.between(0, maxNodes)))
}).annotations({ identifier: "LibraryInsert", ...strict })

// ---- jobs: exports, imports, analytics exports --------------------------------------------------

export const JobKind = Schema.Literal("export_course", "export_enrollment", "import", "analytics_export")

export const JobIssue = Schema.Struct({ code: Schema.String, message: Schema.String }).annotations({ identifier: "LearningJobIssue" })

export const Job = Schema.Struct({
  uuid: Schema.UUID,
  kind: JobKind,
  status: Schema.Literal("queued", "running", "done", "failed"),
  courseUuid: Schema.optional(Schema.UUID),
  enrollmentUuid: Schema.optional(Schema.UUID),
  /** The package or CSV, a ready file of the requester (kept 7 days). */
  fileUuid: Schema.optional(Schema.UUID),
  /** An import's new draft course. */
  resultCourseUuid: Schema.optional(Schema.UUID),
  issues: Schema.Array(JobIssue),
  createdAt: DateTime,
  finishedAt: Schema.optional(DateTime),
  expiresAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningJob" })
export type Job = typeof Job.Type

export const CourseExportInput = Schema.Struct({
  ...command,
  versions: Schema.optional(Schema.Array(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))).pipe(Schema.maxItems(50))),
  includeCheckers: Schema.Boolean
}).annotations({ identifier: "CourseExportInput", ...strict })

export const EnrollmentExportInput = Schema.Struct({ ...command, format: Schema.Literal("json") })
  .annotations({ identifier: "EnrollmentExportInput", ...strict })

/** The one package format (an export's JSON file). */
export const packageFormat = "birzha-course/1"

export const CourseImportInput = Schema.Struct({ ...command, fileUuid: Schema.UUID, format: Schema.Literal(packageFormat) })
  .annotations({ identifier: "CourseImportInput", ...strict })

export const AnalyticsQuery = Schema.Struct({
  runUuid: Schema.optional(Schema.UUID),
  groupUuid: Schema.optional(Schema.UUID),
  from: Schema.optional(DateTime),
  to: Schema.optional(DateTime)
})

/** A count, or `suppressed` when 1 to 4 learners would be identifiable. */
export const Cell = Schema.Struct({ count: Schema.optional(Schema.Int), suppressed: Schema.Boolean }).annotations({ identifier: "AnalyticsCell" })

export const Analytics = Schema.Struct({
  courseUuid: Schema.UUID,
  runUuid: Schema.optional(Schema.UUID),
  /** Cells counting fewer learners than this (and more than none) are suppressed. */
  minCell: Schema.Int,
  funnel: Schema.Struct({ enrolled: Cell, active: Cell, completed: Cell, withdrawn: Cell }),
  /** Per step: started, completed; difficulty = 1 − completed/started (filled as step progress exists). */
  steps: Schema.Array(Schema.Struct({ nodeKey: Schema.String, started: Cell, completed: Cell })),
  scores: Schema.Array(Schema.Struct({ bucket: Schema.String, learners: Cell })),
  graderLoad: Schema.Array(Schema.Struct({ reviewerUuid: Schema.UUID, pending: Schema.Int, decided: Schema.Int }))
}).annotations({ identifier: "LearningAnalytics" })

export const AnalyticsExportInput = Schema.Struct({
  ...command,
  runUuid: Schema.optional(Schema.UUID),
  kind: Schema.Literal("grades", "progress", "activity"),
  pseudonymize: Schema.Boolean
}).annotations({ identifier: "AnalyticsExportInput", ...strict })
