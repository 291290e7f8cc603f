import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { InvalidState, NotFound, RevisionConflict } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { requireRevision } from "../../store/Revision.js"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import { once } from "../Commands.js"
import { NotEligible } from "../LearningErrors.js"
import { authorizedCourse } from "../staff/Staff.js"
import { CourseReview, type CourseReview as CourseReviewType, CourseReviewStatus } from "../staff/StaffModel.js"

/**
 * Course reviews: one per learner per course, written from an
 * enrollment. Eligible: a completed enrollment, or an active, paused or withdrawal-requested one
 * whose learner has started (`startedAt`): someone who has seen the course. The public list shows
 * visible reviews with a rating summary; the author removes theirs (a later save revives it).
 */

export const eligibleStatuses = ["completed", "active", "paused", "withdrawal_requested"] as const

const EnrollmentFacts = Schema.Struct({
  uuid: Schema.String,
  course_uuid: Schema.String,
  profile_uuid: Schema.String,
  status: Schema.String,
  started_at: Schema.NullOr(Timestamp)
})
type EnrollmentFacts = typeof EnrollmentFacts.Type
const enrollmentColumns = selectList(EnrollmentFacts)
const decodeEnrollments = rowsDecoder(EnrollmentFacts)

/** Whether an enrollment may review its course, and why not. */
export const eligibility = (enrollment: Pick<EnrollmentFacts, "status" | "started_at">): { readonly eligible: boolean; readonly reason?: string } => {
  if (enrollment.status === "completed") return { eligible: true }
  if (!(eligibleStatuses as ReadonlyArray<string>).includes(enrollment.status)) {
    return { eligible: false, reason: `A ${enrollment.status} enrollment cannot review the course` }
  }
  return enrollment.started_at !== null ? { eligible: true } : { eligible: false, reason: "Start the course before reviewing it" }
}

const ReviewRow = Schema.Struct({
  uuid: Schema.String,
  revision: Schema.Number,
  course_uuid: Schema.String,
  enrollment_uuid: Schema.String,
  /** The author's name when their profile is public, else null. */
  author_name: Schema.NullOr(Schema.String),
  rating: Schema.Number,
  text: Schema.String,
  status: CourseReviewStatus,
  created_at: Timestamp,
  updated_at: Timestamp,
  position: Schema.String
})
type ReviewRow = typeof ReviewRow.Type

const reviewSelect = `SELECT ${
  selectList(ReviewRow, "r", {
    author_name: "CASE WHEN p.is_public AND p.hidden_by_moderation_at IS NULL THEN p.name END",
    position: "r.created_at::text"
  })
}
  FROM learning_course_reviews r JOIN profiles p ON p.uuid = r.profile_uuid`
const decodeReviews = rowsDecoder(ReviewRow)
const decodeCounts = rowsDecoder(Schema.Struct({ rating: Schema.Number, n: Schema.Number }))

/** The public view names the author only when their profile is public; the author's own view carries the enrollment. */
const view = (row: ReviewRow, own: boolean): CourseReviewType => ({
  uuid: row.uuid,
  revision: row.revision,
  courseUuid: row.course_uuid,
  ...(own ? { enrollmentUuid: row.enrollment_uuid } : {}),
  ...(row.author_name !== null ? { authorName: row.author_name } : {}),
  rating: row.rating,
  text: row.text,
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** The caller's own enrollment (anyone else's: 404). */
const ownEnrollment = (actor: Actor, enrollmentUuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(enrollmentColumns)} FROM learning_enrollments WHERE uuid = ${enrollmentUuid} ${lock ? sql`FOR UPDATE` : sql``}`,
      decodeEnrollments
    )
    if (row === undefined || row.profile_uuid !== actor.profileUuid) return yield* new NotFound({ message: `No enrollment ${enrollmentUuid}` })
    return row
  })

const reviewOf = (courseUuid: string, profileUuid: string, lock: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (lock) yield* sql`SELECT 1 FROM learning_course_reviews WHERE course_uuid = ${courseUuid} AND profile_uuid = ${profileUuid} FOR UPDATE`
    const [row] = yield* Effect.flatMap(
      sql`${sql.literal(reviewSelect)} WHERE r.course_uuid = ${courseUuid} AND r.profile_uuid = ${profileUuid}`,
      decodeReviews
    )
    return row
  })

/** learning.course_reviews.own: the learner's review of the course (unless removed) and whether they may write one. */
export const ownCourseReview = (actor: Actor, enrollmentUuid: string) =>
  Effect.gen(function*() {
    const enrollment = yield* ownEnrollment(actor, enrollmentUuid, false)
    const review = yield* reviewOf(enrollment.course_uuid, actor.profileUuid, false)
    const { eligible, reason } = eligibility(enrollment)
    return {
      ...(review !== undefined && review.status !== "removed" ? { review: view(review, true) } : {}),
      eligible,
      ...(reason !== undefined ? { reason } : {})
    }
  })

/**
 * learning.course_reviews.save: creates the learner's review of the course or replaces it (at
 * `expectedRevision`, required once a visible one exists). A hidden review stays hidden (409).
 */
export const saveCourseReview = (
  actor: Actor,
  enrollmentUuid: string,
  input: { readonly requestUuid: string; readonly expectedRevision?: number | undefined; readonly rating: number; readonly text: string }
) =>
  once(actor, "learning.course_reviews.save", input, CourseReview, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const enrollment = yield* ownEnrollment(actor, enrollmentUuid, true)
    const { eligible, reason } = eligibility(enrollment)
    if (!eligible) return yield* new NotEligible({ message: reason ?? "Not eligible to review this course" })
    const existing = yield* reviewOf(enrollment.course_uuid, actor.profileUuid, true)
    if (existing === undefined) {
      if (input.expectedRevision !== undefined) return yield* new RevisionConflict({ message: "There is no review yet; send no expectedRevision" })
      const inserted = yield* sql`INSERT INTO learning_course_reviews (uuid, course_uuid, profile_uuid, enrollment_uuid, rating, text)
        VALUES (${randomUUID()}, ${enrollment.course_uuid}, ${actor.profileUuid}, ${enrollment.uuid}, ${input.rating}, ${input.text})
        ON CONFLICT (course_uuid, profile_uuid) DO NOTHING RETURNING uuid`
      // Another save of the same learner won the race: this one is stale.
      if (inserted.length === 0) return yield* new RevisionConflict({ message: "The review was just written; read it and retry with its revision" })
    } else {
      if (existing.status === "hidden") return yield* new InvalidState({ message: "A moderator hid this review; it cannot be changed" })
      if (existing.status === "visible") {
        if (input.expectedRevision === undefined) {
          return yield* new RevisionConflict({ message: `The review exists at revision ${existing.revision}; send it as expectedRevision to replace it` })
        }
        yield* requireRevision("course review", existing.revision, input.expectedRevision)
      } else if (input.expectedRevision !== undefined) {
        yield* requireRevision("course review", existing.revision, input.expectedRevision)
      }
      yield* sql`UPDATE learning_course_reviews SET rating = ${input.rating}, text = ${input.text}, status = 'visible',
          enrollment_uuid = ${enrollment.uuid}, revision = revision + 1, updated_at = now()
        WHERE uuid = ${existing.uuid}`
    }
    return view((yield* reviewOf(enrollment.course_uuid, actor.profileUuid, false))!, true)
  }))

/** learning.course_reviews.remove: the author removes their visible review. */
export const removeCourseReview = (actor: Actor, enrollmentUuid: string, input: { readonly requestUuid: string; readonly expectedRevision: number }) =>
  once(actor, "learning.course_reviews.remove", input, CourseReview, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const enrollment = yield* ownEnrollment(actor, enrollmentUuid, false)
    const existing = yield* reviewOf(enrollment.course_uuid, actor.profileUuid, true)
    if (existing === undefined) return yield* new NotFound({ message: "You have not reviewed this course" })
    if (existing.status !== "visible") return yield* new InvalidState({ message: `A ${existing.status} review cannot be removed` })
    yield* requireRevision("course review", existing.revision, input.expectedRevision)
    yield* sql`UPDATE learning_course_reviews SET status = 'removed', revision = revision + 1, updated_at = now() WHERE uuid = ${existing.uuid}`
    return view((yield* reviewOf(enrollment.course_uuid, actor.profileUuid, false))!, true)
  }))

/** learning.course_reviews.list: visible reviews, newest first (optionally one rating), with the summary of all visible ones. */
export const listCourseReviews = (
  actor: Actor | undefined,
  courseUuid: string,
  filter: { readonly rating?: number | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* authorizedCourse(actor, "learning.course_reviews.list", courseUuid, false)
    const position = yield* decodeCursor(filter.cursor)
    const limit = filter.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`${sql.literal(reviewSelect)} WHERE r.course_uuid = ${courseUuid} AND r.status = 'visible'
        ${filter.rating !== undefined ? sql`AND r.rating = ${filter.rating}` : sql``}
        ${position._tag === "Some" ? sql`AND (r.created_at, r.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY r.created_at DESC, r.uuid DESC LIMIT ${limit + 1}`,
      decodeReviews
    )
    const counts = yield* Effect.flatMap(
      sql`SELECT rating, count(*)::int AS n FROM learning_course_reviews
      WHERE course_uuid = ${courseUuid} AND status = 'visible' GROUP BY rating`,
      decodeCounts
    )
    const histogram = [1, 2, 3, 4, 5].map((rating) => counts.find((c) => c.rating === rating)?.n ?? 0)
    const count = histogram.reduce((a, b) => a + b, 0)
    const sum = histogram.reduce((total, n, i) => total + n * (i + 1), 0)
    return {
      ...pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => view(row, false)),
      summary: { count, ...(count > 0 ? { average: Math.round((sum / count) * 100) / 100 } : {}), histogram }
    }
  })
