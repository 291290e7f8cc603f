import { Schema } from "effect"
import { AnyJson, DateTime, maxChars, meanings, minChars, optionalField, RequestUuid, strict } from "../kernel/Common.js"
import { Cursor, Limit } from "../publications/OwnerCommandsApi.js"

/** Exactly the spec's four subject kinds. */
export const ComplaintSubjectKind = Schema.Literal("profile", "publication", "message", "relation").annotations({ identifier: "ComplaintSubjectKind" })
export type ComplaintSubjectKind = typeof ComplaintSubjectKind.Type

export const ComplaintStatus = Schema.Literal("open", "upheld", "dismissed").annotations({ identifier: "ComplaintStatus" })
export type ComplaintStatus = typeof ComplaintStatus.Type

export const ComplaintDecision = Schema.Literal("uphold", "dismiss").annotations({ identifier: "ComplaintDecision" })
export const ComplaintAction = Schema.Literal("unpublish", "hide_message", "hide_profile", "remove_review", "none").annotations({ identifier: "ComplaintAction" })
export type ComplaintAction = typeof ComplaintAction.Type

/** `complaints.create` (spec): requestUuid, subjectKind, subjectUuid, body; all required. body 1-5000 (ours). */
export const ComplaintInput = Schema.Struct({
  requestUuid: RequestUuid,
  subjectKind: ComplaintSubjectKind,
  subjectUuid: Schema.UUID,
  body: Schema.String.pipe(minChars(1), maxChars(5000))
}).annotations({ identifier: "ComplaintInput", ...strict })
export type ComplaintInput = typeof ComplaintInput.Type

/** `complaints.get` (spec): query complaintUuid. */
export const ComplaintQuery = Schema.Struct({ complaintUuid: Schema.UUID }).annotations(strict)

/** A complaint in its author's view: the decision and reason, never the moderator or the snapshot. */
export const ComplaintView = Schema.Struct({
  uuid: Schema.UUID,
  subjectKind: ComplaintSubjectKind,
  subjectUuid: Schema.UUID,
  body: Schema.String,
  status: ComplaintStatus,
  decision: Schema.optional(Schema.Struct({
    decision: ComplaintDecision,
    action: ComplaintAction,
    reason: Schema.String,
    decidedAt: DateTime
  })),
  revision: Schema.Int,
  createdAt: DateTime
}).annotations({ identifier: "Complaint" })
export type ComplaintView = typeof ComplaintView.Type

export const ComplaintPage = Schema.Struct({
  items: Schema.Array(ComplaintView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ComplaintPage" })

/** moderation.complaints.queue: O status (default open), subjectKind, cursor, limit. */
export const ComplaintQueueQuery = Schema.Struct({
  status: Schema.optional(ComplaintStatus),
  subjectKind: Schema.optional(ComplaintSubjectKind),
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
}).annotations(strict)

/** A complaint as a moderator reviews it: the author's snapshot, the subject now, the other open complaints on it. */
export const ComplaintQueueItem = Schema.Struct({
  ...ComplaintView.fields,
  authorProfileUuid: Schema.UUID,
  subjectSnapshot: AnyJson,
  /** The subject as it is now; absent when it no longer exists. */
  subjectNow: Schema.optional(AnyJson),
  /** The other open complaints on the same subject (Discourse groups flags per post). */
  otherOpenComplaints: Schema.Array(Schema.Struct({ uuid: Schema.UUID, body: Schema.String, createdAt: DateTime })),
  /** For a relation: its reviews, so a reported review can be removed with `remove_review`. */
  reviews: Schema.optional(Schema.Array(Schema.Struct({ uuid: Schema.UUID, status: Schema.String, rating: Schema.Int, body: Schema.String, authorProfileUuid: Schema.UUID })))
}).annotations({ identifier: "ComplaintQueueItem" })
export type ComplaintQueueItem = typeof ComplaintQueueItem.Type

export const ComplaintQueuePage = Schema.Struct({
  items: Schema.Array(ComplaintQueueItem),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ComplaintQueuePage" })

/** moderation.complaints.decide. */
export const ComplaintDecisionInput = Schema.Struct({
  requestUuid: RequestUuid,
  complaintUuid: Schema.UUID,
  expectedRevision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)),
  decision: ComplaintDecision,
  reason: Schema.String.pipe(minChars(1), maxChars(2000)),
  action: Schema.optional(ComplaintAction),
  reviewUuid: Schema.optional(Schema.UUID)
}).annotations({ identifier: "ComplaintDecisionInput", ...strict })
export type ComplaintDecisionInput = typeof ComplaintDecisionInput.Type

/** The decision: the complaint in its author's view and every other open complaint on the subject it also decided. */
export const ComplaintDecisionResult = Schema.Struct({
  complaint: ComplaintView,
  alsoDecided: Schema.Array(Schema.UUID)
}).annotations({ identifier: "ComplaintDecisionResult" })
export type ComplaintDecisionResult = typeof ComplaintDecisionResult.Type
