import { Schema } from "effect"
import { EnrollmentGroup } from "../staff/GroupsModel.js"
import { AnyJson, DateTime, maxChars, meanings, minChars, optionalField, PageLimit, RequestUuid, strict } from "../../kernel/Common.js"
import { enrollmentStatuses } from "./EnrollmentRepository.js"
import { NodeKey } from "../courses/Model.js"

/**
 * Wire shapes of the enrollment side of learning L2: enrollments, applications,
 * overrides, pauses, the calendar, completion, media progress and transfer plans. Inputs refuse
 * undeclared properties; bounds are the schemas'.
 */

const command = { requestUuid: RequestUuid }
const ExpectedRevision = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
const Cursor = Schema.String.pipe(maxChars(200))
const listing = { cursor: optionalField(Cursor, meanings.cursor), limit: Schema.optional(PageLimit) }
const page = <S extends Schema.Schema.Any>(item: S, identifier: string) =>
  Schema.Struct({ items: Schema.Array(item), nextCursor: Schema.optional(Schema.String) }).annotations({ identifier })

export const EnrollmentStatus = Schema.Literal(...enrollmentStatuses)

export const Enrollment = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  runUuid: Schema.UUID,
  courseUuid: Schema.UUID,
  profileUuid: Schema.UUID,
  status: EnrollmentStatus,
  startedAt: Schema.optional(DateTime),
  /** An invitation's or seat offer's end (`invited`, `offered`). */
  offerExpiresAt: Schema.optional(DateTime),
  /** 1 = next to be offered a seat (`waitlisted`). */
  waitlistPosition: Schema.optional(Schema.Int),
  pause: Schema.Struct({
    pausedAt: Schema.optional(DateTime),
    until: Schema.optional(DateTime),
    totalDays: Schema.Int,
    count: Schema.Int
  }),
  withdrawal: Schema.optional(Schema.Struct({
    requestedAt: Schema.optional(DateTime),
    effectiveAt: Schema.optional(DateTime),
    withdrawnAt: Schema.optional(DateTime),
    reason: Schema.optional(Schema.String),
    /** The last moment `enrollments.restore` undoes it. */
    restoreUntil: Schema.optional(DateTime)
  })),
  activatedAt: Schema.optional(DateTime),
  criteriaMetAt: Schema.optional(DateTime),
  completedAt: Schema.optional(DateTime),
  transferredFromRunUuid: Schema.optional(Schema.UUID),
  /** Completed steps of the pinned version (roster and single views). */
  progress: Schema.optional(Schema.Struct({ completedSteps: Schema.Int, totalSteps: Schema.Int })),
  /** The active groups (cohorts, teams, sections) the enrollment is a member of. */
  groups: Schema.Array(EnrollmentGroup),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "LearningEnrollment" })
export type Enrollment = typeof Enrollment.Type
export const EnrollmentPage = page(Enrollment, "LearningEnrollmentPage")
export const Invited = Schema.Struct({ enrollments: Schema.Array(Enrollment) }).annotations({ identifier: "LearningInvited" })

// ---- inputs --------------------------------------------------------------------------------------

export const EnrollmentListQuery = Schema.Struct({
  status: optionalField(EnrollmentStatus, "Only enrollments in this status."),
  ...listing
})
export const RosterQuery = Schema.Struct({
  runUuid: Schema.optional(Schema.UUID),
  groupUuid: Schema.optional(Schema.UUID),
  status: Schema.optional(EnrollmentStatus),
  q: Schema.optional(Schema.String.pipe(maxChars(200))),
  ...listing
})

export const Answers = Schema.Record({ key: Schema.String.pipe(minChars(1), maxChars(64)), value: Schema.String.pipe(maxChars(5000)) })
  .pipe(Schema.filter((answers) => Object.keys(answers).length <= 50 || "at most 50 answers"))

export const EnrollInput = Schema.Struct({
  ...command,
  application: optionalField(
    Schema.Struct({ answers: Answers }).annotations({ ...strict }),
    "The answers to the run's application questions, by question key, where the run admits by application."
  )
}).annotations({ identifier: "EnrollInput", ...strict })

export const InviteInput = Schema.Struct({
  ...command,
  profileUuids: Schema.Array(Schema.UUID).pipe(Schema.minItems(1), Schema.maxItems(100)),
  message: Schema.optional(Schema.String.pipe(maxChars(2000))),
  expiresInDays: Schema.optional(Schema.Int.pipe(Schema.between(1, 60)))
}).annotations({ identifier: "EnrollmentInviteInput", ...strict })

export const EnrollmentCommand = Schema.Struct({ ...command, expectedRevision: ExpectedRevision })
  .annotations({ identifier: "EnrollmentCommand", ...strict })

export const DecideInput = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  decision: Schema.Literal("approve", "reject", "waitlist"),
  reason: Schema.optional(Schema.String.pipe(maxChars(1000))),
  requireSeatConfirmation: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "EnrollmentDecideInput", ...strict })

export const OverrideInput = Schema.Struct({
  ...command,
  nodeKey: Schema.optional(NodeKey),
  unlockAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  lockAt: Schema.optional(DateTime),
  extraAttempts: Schema.optional(Schema.Int.pipe(Schema.between(0, 100))),
  clear: Schema.optional(Schema.Boolean),
  reason: Schema.String.pipe(minChars(1), maxChars(1000))
}).annotations({ identifier: "EnrollmentOverrideInput", ...strict })

export const PauseInput = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  until: Schema.optional(DateTime),
  reason: Schema.optional(Schema.String.pipe(maxChars(1000)))
}).annotations({ identifier: "EnrollmentPauseInput", ...strict })

export const PausePreviewQuery = Schema.Struct({ until: Schema.optional(DateTime) })

export const WithdrawInput = Schema.Struct({
  ...command,
  expectedRevision: ExpectedRevision,
  reason: Schema.optional(Schema.String.pipe(maxChars(1000))),
  immediate: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "EnrollmentWithdrawInput", ...strict })

export const CalendarQuery = Schema.Struct({
  from: Schema.optional(DateTime),
  to: Schema.optional(DateTime),
  format: Schema.optional(Schema.Literal("json", "ics"))
})

/** A watched range [fromSec, toSec]. */
export const MediaRange = Schema.Tuple(Schema.Number.pipe(Schema.between(0, 86400)), Schema.Number.pipe(Schema.between(0, 86400)))
export const MediaSaveInput = Schema.Struct({
  positionSec: Schema.Number.pipe(Schema.between(0, 86400)),
  ranges: Schema.Array(MediaRange).pipe(Schema.maxItems(1000)),
  /** The media's length; kept once given (the tree has no durations). */
  durationSec: Schema.optional(Schema.Number.pipe(Schema.between(1, 86400))),
  expectedRevision: Schema.optional(ExpectedRevision)
}).annotations({ identifier: "MediaProgressInput", ...strict })

export const TransferPreviewInput = Schema.Struct({
  ...command,
  fromRunUuid: Schema.UUID,
  toRunUuid: Schema.UUID,
  enrollmentUuids: Schema.optional(Schema.Array(Schema.UUID).pipe(Schema.minItems(1), Schema.maxItems(1000)))
}).annotations({ identifier: "TransferPreviewInput", ...strict })

export const TransferApplyInput = Schema.Struct(command).annotations({ identifier: "TransferApplyInput", ...strict })

// ---- outputs -------------------------------------------------------------------------------------

export const DateOverride = Schema.Struct({
  uuid: Schema.UUID,
  enrollmentUuid: Schema.UUID,
  nodeKey: Schema.optional(Schema.String),
  unlockAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  lockAt: Schema.optional(DateTime),
  extraAttempts: Schema.Int,
  origin: Schema.Literal("manual", "extension", "incident", "group"),
  reason: Schema.String,
  status: Schema.Literal("active", "cleared"),
  createdAt: DateTime,
  clearedAt: Schema.optional(DateTime)
}).annotations({ identifier: "LearningDateOverride" })

export const DateChange = Schema.Struct({
  nodeKey: Schema.String,
  field: Schema.Literal("unlockAt", "dueAt", "lockAt", "extraAttempts"),
  before: Schema.optional(Schema.Union(DateTime, Schema.Int)),
  after: Schema.optional(Schema.Union(DateTime, Schema.Int))
}).annotations({ identifier: "LearningDateChange" })

export const OverrideResult = Schema.Struct({ override: DateOverride, calendarDelta: Schema.Array(DateChange) })
  .annotations({ identifier: "LearningOverrideResult" })

export const PausePreview = Schema.Struct({
  allowed: Schema.Boolean,
  daysLeft: Schema.Int,
  shifts: Schema.Array(Schema.Struct({ nodeKey: Schema.String, due: DateTime, dueAfter: DateTime }))
}).annotations({ identifier: "LearningPausePreview" })

export const Application = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  status: EnrollmentStatus,
  answers: Schema.Record({ key: Schema.String, value: Schema.String }),
  form: Schema.optional(AnyJson),
  submittedAt: DateTime,
  decisions: Schema.Array(Schema.Struct({
    decision: Schema.Literal("approve", "reject", "waitlist"),
    status: EnrollmentStatus,
    reason: Schema.optional(Schema.String),
    /** The deciding staff profile (staff views only). */
    byProfileUuid: Schema.optional(Schema.UUID),
    at: DateTime
  }))
}).annotations({ identifier: "LearningApplication" })

export const Provenance = Schema.Struct({
  field: Schema.Literal("unlockAt", "dueAt", "lockAt", "extraAttempts"),
  source: Schema.Literal("schedule", "offset", "group", "override", "extension", "pause", "incident"),
  at: Schema.optional(DateTime),
  attempts: Schema.optional(Schema.Int),
  overrideUuid: Schema.optional(Schema.UUID),
  detail: Schema.optional(Schema.String)
}).annotations({ identifier: "LearningDateProvenance" })

export const StepStatus = Schema.Literal("locked", "available", "in_progress", "completed", "failed")

export const CalendarItem = Schema.Struct({
  nodeKey: Schema.String,
  title: Schema.String,
  moduleKey: Schema.optional(Schema.String),
  status: StepStatus,
  unlockAt: Schema.optional(DateTime),
  dueAt: Schema.optional(DateTime),
  lockAt: Schema.optional(DateTime),
  extraAttempts: Schema.Int,
  /** Waits for `enrollments.start` (self-paced). */
  startRequired: Schema.optional(Schema.Boolean),
  provenance: Schema.Array(Provenance)
}).annotations({ identifier: "LearningCalendarItem" })

export const Calendar = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  runUuid: Schema.UUID,
  courseUuid: Schema.UUID,
  format: Schema.Literal("json", "ics"),
  generatedAt: DateTime,
  items: Schema.Array(CalendarItem),
  /** With format ics: the same dates as an iCalendar (RFC 5545) document. */
  ics: Schema.optional(Schema.String)
}).annotations({ identifier: "LearningCalendar" })

export const Completion = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  status: EnrollmentStatus,
  criteria: Schema.Struct({ requiredNodeKeys: Schema.Array(Schema.String), minScorePercent: Schema.optional(Schema.Int) }),
  requiredSteps: Schema.Int,
  completedRequiredSteps: Schema.Int,
  percent: Schema.Int,
  criteriaMet: Schema.Boolean,
  criteriaMetAt: Schema.optional(DateTime),
  completedAt: Schema.optional(DateTime),
  steps: Schema.Array(Schema.Struct({ nodeKey: Schema.String, required: Schema.Boolean, status: StepStatus, completedAt: Schema.optional(DateTime) })),
  modules: Schema.Array(Schema.Struct({ nodeKey: Schema.String, completed: Schema.Boolean, completedAt: Schema.optional(DateTime) }))
}).annotations({ identifier: "LearningCompletion" })

export const MediaProgress = Schema.Struct({
  nodeKey: Schema.String,
  positionSec: Schema.Number,
  ranges: Schema.Array(MediaRange),
  durationSec: Schema.optional(Schema.Number),
  watchedPct: Schema.Int,
  status: StepStatus,
  completedAt: Schema.optional(DateTime),
  revision: Schema.Int
}).annotations({ identifier: "LearningMediaProgress" })

export const MediaList = Schema.Struct({
  items: Schema.Array(Schema.Struct({
    nodeKey: Schema.String,
    position: Schema.Number,
    watchedPct: Schema.Int,
    completedAt: Schema.optional(DateTime)
  }))
}).annotations({ identifier: "LearningMediaList" })

export const TransferItem = Schema.Struct({
  enrollmentUuid: Schema.UUID,
  profileUuid: Schema.UUID,
  status: EnrollmentStatus,
  /** Progress rows kept (nodeKeys present in the target run's version). */
  mappedSteps: Schema.Array(Schema.String),
  /** Progress on steps the target version no longer has (kept, not shown). */
  unmappedSteps: Schema.Array(Schema.String)
}).annotations({ identifier: "LearningTransferItem" })

export const TransferPlan = Schema.Struct({
  uuid: Schema.UUID,
  kind: Schema.Literal("transfer"),
  status: Schema.Literal("ready", "applied", "stale", "expired"),
  courseUuid: Schema.UUID,
  fromRunUuid: Schema.UUID,
  toRunUuid: Schema.UUID,
  baseRevisions: Schema.Struct({ fromRun: Schema.Int, toRun: Schema.Int, enrollments: Schema.Record({ key: Schema.String, value: Schema.Int }) }),
  items: Schema.Array(TransferItem),
  skipped: Schema.Array(Schema.Struct({ enrollmentUuid: Schema.UUID, reason: Schema.String })),
  blocking: Schema.Array(Schema.Struct({ code: Schema.String, message: Schema.String })),
  expiresAt: DateTime,
  createdAt: DateTime
}).annotations({ identifier: "LearningTransferPlan" })

export const TransferApplied = Schema.Struct({
  transferred: Schema.Int,
  skipped: Schema.Array(Schema.Struct({ enrollmentUuid: Schema.UUID, reason: Schema.String }))
}).annotations({ identifier: "LearningTransferApplied" })
