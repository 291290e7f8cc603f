import { Schema } from "effect"
import { DateTime, maxChars, meanings, minChars, optionalField, RequestUuid, strict } from "../kernel/Common.js"
import { Cursor, Limit } from "../publications/OwnerCommandsApi.js"
import { ProfileType } from "../profiles/Profile.js"

/** Reviews are written within this long after the deal's completion (Upwork, Airbnb: 14 days). */
export const reviewWindowMs = 14 * 24 * 60 * 60 * 1000

export const SubjectRole = Schema.Literal("specialist", "customer").annotations({ identifier: "ReviewSubjectRole" })
export type SubjectRole = typeof SubjectRole.Type

export const ReviewStatus = Schema.Literal("submitted", "published", "removed").annotations({ identifier: "ReviewStatus" })
export type ReviewStatus = typeof ReviewStatus.Type

const expectedRevision = Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))

/** reviews.create: R requestUuid, relationUuid (a completed deal), rating 1-5; O body 0-5000. */
export const ReviewInput = Schema.Struct({
  requestUuid: RequestUuid,
  relationUuid: Schema.UUID,
  rating: Schema.Int.pipe(Schema.between(1, 5)),
  body: Schema.optional(Schema.String.pipe(maxChars(5000)))
}).annotations({ identifier: "ReviewInput", ...strict })
export type ReviewInput = typeof ReviewInput.Type

/** reviews.reply: R requestUuid, reviewUuid, body 1-2000; O expectedRevision (required to replace a reply). */
export const ReplyInput = Schema.Struct({
  requestUuid: RequestUuid,
  reviewUuid: Schema.UUID,
  body: Schema.String.pipe(minChars(1), maxChars(2000)),
  expectedRevision: Schema.optional(expectedRevision)
}).annotations({ identifier: "ReviewReplyInput", ...strict })
export type ReplyInput = typeof ReplyInput.Type

/** reviews.reply_remove: R requestUuid, reviewUuid, expectedRevision. */
export const ReplyRemoveInput = Schema.Struct({
  requestUuid: RequestUuid,
  reviewUuid: Schema.UUID,
  expectedRevision
}).annotations({ identifier: "ReviewReplyRemoveInput", ...strict })
export type ReplyRemoveInput = typeof ReplyRemoveInput.Type

/** reviews.list_own: O role (received, written; default received), relationUuid, cursor, limit 1-100. */
export const OwnReviewsQuery = Schema.Struct({
  role: Schema.optional(Schema.Literal("received", "written")),
  relationUuid: Schema.optional(Schema.UUID),
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
}).annotations(strict)

/** reviews.list_public: R profileUuid (a public profile); O cursor, limit 1-100. */
export const PublicReviewsQuery = Schema.Struct({
  profileUuid: Schema.UUID,
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
}).annotations(strict)

/** customers.get (spec): query cursor, customerAlias, limit (integer min 0; 0 is the default 20, above 100 reads as 100). */
export const CustomerQuery = Schema.Struct({
  cursor: optionalField(Cursor, meanings.cursor),
  customerAlias: Schema.optional(Schema.String.pipe(maxChars(64))),
  limit: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(0)).annotations({ jsonSchema: { type: "integer", minimum: 0 } })
  )
}).annotations(strict)

/** Who wrote a review, as readers see it: the name and type; the profile only when public; the alias when the author was the customer. */
export const ReviewAuthor = Schema.Struct({
  name: Schema.String,
  type: ProfileType,
  profileUuid: Schema.optional(Schema.UUID),
  avatarUrl: Schema.optional(Schema.String),
  customerAlias: Schema.optional(Schema.String)
}).annotations({ identifier: "ReviewAuthor" })

export const ReviewReply = Schema.Struct({
  body: Schema.String,
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "ReviewReply" })

/**
 * A review in the reader's view. Sealed (submitted, read by its subject): only
 * that it exists, `sealed: true`, no rating, body or author. Removed: the author and the subject,
 * with the moderator's reason.
 */
export const ReviewView = Schema.Struct({
  uuid: Schema.UUID,
  relationUuid: Schema.UUID,
  subjectProfileUuid: Schema.UUID,
  subjectRole: SubjectRole,
  status: ReviewStatus,
  sealed: Schema.Boolean,
  author: Schema.optional(ReviewAuthor),
  rating: Schema.optional(Schema.Int),
  body: Schema.optional(Schema.String),
  reply: Schema.optional(ReviewReply),
  moderationReason: Schema.optional(Schema.String),
  revision: Schema.Int,
  createdAt: DateTime,
  publishedAt: Schema.optional(DateTime)
}).annotations({ identifier: "Review" })
export type ReviewView = typeof ReviewView.Type

export const ReviewPage = Schema.Struct({
  items: Schema.Array(ReviewView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ReviewPage" })
export type ReviewPage = typeof ReviewPage.Type

/** review_stats of one profile and role: count, average (null without reviews) and counts per rating 1-5. */
export const RatingSummary = Schema.Struct({
  reviewCount: Schema.Int,
  ratingAverage: Schema.NullOr(Schema.Number),
  ratings: Schema.Struct({ "1": Schema.Int, "2": Schema.Int, "3": Schema.Int, "4": Schema.Int, "5": Schema.Int })
}).annotations({ identifier: "RatingSummary" })
export type RatingSummary = typeof RatingSummary.Type

export const PublicReviews = Schema.Struct({
  summary: RatingSummary,
  items: Schema.Array(ReviewView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "PublicReviews" })
export type PublicReviews = typeof PublicReviews.Type

export const CustomerReviews = Schema.Struct({
  customer: Schema.Struct({
    alias: Schema.String,
    reviewCount: Schema.Int,
    ratingAverage: Schema.NullOr(Schema.Number),
    /** Completed deals as the customer, with profiles of other accounts. */
    completedDeals: Schema.Int,
    /** The month the alias was made, YYYY-MM. */
    since: Schema.String
  }),
  items: Schema.Array(ReviewView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "CustomerReviews" })
export type CustomerReviews = typeof CustomerReviews.Type

/** moderation.reviews.list: O status, profileUuid (the subject), cursor, limit. */
export const ReviewModerationQuery = Schema.Struct({
  status: Schema.optional(ReviewStatus),
  profileUuid: Schema.optional(Schema.UUID),
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
}).annotations(strict)

/** A review as a moderator sees it: in full, with its author and the open complaints about its relation. */
export const ModeratedReview = Schema.Struct({
  ...ReviewView.fields,
  authorProfileUuid: Schema.UUID,
  openComplaints: Schema.Int
}).annotations({ identifier: "ModeratedReview" })
export type ModeratedReview = typeof ModeratedReview.Type

export const ModeratedReviewPage = Schema.Struct({
  items: Schema.Array(ModeratedReview),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ModeratedReviewPage" })

/** moderation.reviews.decide: R requestUuid, reviewUuid, expectedRevision, decision (remove, restore), reason 1-2000. */
export const ReviewDecisionInput = Schema.Struct({
  requestUuid: RequestUuid,
  reviewUuid: Schema.UUID,
  expectedRevision,
  decision: Schema.Literal("remove", "restore"),
  reason: Schema.String.pipe(minChars(1), maxChars(2000))
}).annotations({ identifier: "ReviewDecisionInput", ...strict })
export type ReviewDecisionInput = typeof ReviewDecisionInput.Type
