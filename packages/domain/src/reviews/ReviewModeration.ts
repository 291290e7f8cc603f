import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { type InvalidRequest, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../kernel/ApiError.js"
import { openCountsOnRelations } from "../complaints/ComplaintRepository.js"
import { recordDecision } from "../complaints/ModerationRepository.js"
import type { Moderator } from "../publications/Moderation.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { requireRevision } from "../store/Revision.js"
import { type ModeratedReview, type ReviewDecisionInput, type ReviewStatus, ReviewView } from "./Review.js"
import { lockReview, moderationPage, reviewViewRow } from "./ReviewRepository.js"
import { moveReview, reviewView } from "./Reviews.js"

/** `moderation.reviews.list`: reviews newest first, by status and subject, with the open complaints about their relation. */
export const moderationReviews = (
  query: { status?: ReviewStatus | undefined; profileUuid?: string | undefined; cursor?: string | undefined; limit?: number | undefined }
): Effect.Effect<{ readonly items: ReadonlyArray<ModeratedReview>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    const rows = yield* moderationPage({ status: query.status, profileUuid: query.profileUuid, after, limit: limit + 1 })
    const counts = yield* openCountsOnRelations([...new Set(rows.map((row) => row.relation_uuid))])
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => ({
      ...reviewView(row, "moderator"),
      authorProfileUuid: row.author_profile_uuid,
      openComplaints: counts.get(row.relation_uuid) ?? 0
    }))
  })

/**
 * `moderation.reviews.decide`, once per `requestUuid`: remove a published review or
 * restore a removed one, at `expectedRevision`, with a reason; `review.moderated` to the author and
 * the subject (no `profileUuid`), `review_stats` recomputed.
 */
export const decideReviewModeration = (
  moderator: Moderator,
  input: ReviewDecisionInput
): Effect.Effect<ReviewView, NotFound | InvalidState | RevisionConflict | RequestConflict | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { scope: moderator.accountUuid ?? "cli", operationId: "moderation.reviews.decide", requestUuid: input.requestUuid, request: input, result: ReviewView },
    Effect.gen(function*() {
      const row = Option.getOrUndefined(yield* lockReview(input.reviewUuid))
      if (row === undefined) return yield* new NotFound({ message: "No such review" })
      yield* requireRevision("review", row.revision, input.expectedRevision)
      const from: ReviewStatus = input.decision === "remove" ? "published" : "removed"
      if (row.status !== from) {
        return yield* new InvalidState({ message: `The review is ${row.status}; ${input.decision} needs a ${from} review` })
      }
      const to = input.decision === "remove" ? "removed" as const : "published" as const
      const revision = yield* moveReview(row, to, { reason: input.reason, context: { moderation: input.decision } })
      yield* recordDecision({
        subjectKind: "review",
        subjectUuid: row.uuid,
        subjectRevision: revision,
        moderatorAccountUuid: moderator.accountUuid,
        moderator: moderator.name,
        decision: input.decision,
        action: null,
        reason: input.reason
      })
      return reviewView(yield* reviewViewRow(row.uuid), "moderator")
    })
  )
