import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, type Types } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { lockRelation } from "../relations/RelationRepository.js"
import { partyOf } from "../relations/Relations.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { makePooledRead } from "../store/PooledReads.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { requireRevision } from "../store/Revision.js"
import { aliasPattern, customerReadsWith, ensureCustomerAlias } from "./CustomerAliasRepository.js"
import {
  type CustomerReviews,
  type PublicReviews,
  type RatingSummary,
  type ReplyInput,
  type ReplyRemoveInput,
  ReviewAuthor,
  type ReviewInput,
  type ReviewPage,
  type ReviewStatus,
  reviewWindowMs,
  ReviewView,
  type SubjectRole
} from "./Review.js"
import {
  accountsOf,
  insertReview,
  lockDueSealed,
  lockRelationReviews,
  lockReview,
  ownPage,
  type PublicReviewReads,
  publicReviewReadsWith,
  recomputeStats,
  type ReviewRow,
  reviewViewRow,
  type ReviewViewRow,
  setReply,
  setReviewStatus
} from "./ReviewRepository.js"

type Sql = SqlClient.SqlClient

export { reviewWindowMs } from "./Review.js"

/** Who reads a review: its author, its subject, a moderator, or anyone (published only). */
export type Reader = "author" | "subject" | "moderator" | "public"

export const readerOf = (row: Pick<ReviewRow, "author_profile_uuid" | "subject_profile_uuid">, me: string | undefined): Reader =>
  me === row.author_profile_uuid ? "author" : me === row.subject_profile_uuid ? "subject" : "public"

/**
 * A review in the reader's view: sealed for its subject while submitted (only
 * that it exists); the moderator's reason for the author, the subject and moderators.
 */
export const reviewView = (row: ReviewViewRow, reader: Reader): ReviewView => {
  // Built by assignment, not by spreading conditional objects: a page of views is built on every
  // public read (spreads took 8 µs per review in the reviews benchmark's profile).
  const sealed = row.status === "submitted" && reader !== "author" && reader !== "moderator"
  const view: Types.Mutable<ReviewView> = {
    uuid: row.uuid,
    relationUuid: row.relation_uuid,
    subjectProfileUuid: row.subject_profile_uuid,
    subjectRole: row.subject_role,
    status: row.status,
    sealed,
    revision: row.revision,
    createdAt: row.created_at
  }
  if (row.published_at !== null) view.publishedAt = row.published_at
  if (sealed) return view
  const author: Types.Mutable<typeof ReviewAuthor.Type> = { name: row.author_name, type: row.author_type }
  if (row.author_public) author.profileUuid = row.author_profile_uuid
  if (row.author_avatar_url !== null) author.avatarUrl = row.author_avatar_url
  if (row.author_alias !== null) author.customerAlias = row.author_alias
  view.author = author
  view.rating = row.rating
  view.body = row.body
  if (row.reply_body !== null && row.reply_created_at !== null) {
    view.reply = { body: row.reply_body, createdAt: row.reply_created_at, updatedAt: row.reply_updated_at ?? row.reply_created_at }
  }
  if (row.moderation_reason !== null && reader !== "public") view.moderationReason = row.moderation_reason
  return view
}

const audienceOf = (row: Pick<ReviewRow, "author_profile_uuid" | "subject_profile_uuid">) => [row.author_profile_uuid, row.subject_profile_uuid]

/**
 * Moves a review to `status` with its `review.moderated` event and the subject's statistics
 * recomputed. `cause` names why (revealed); `moderation` the moderator's decision.
 */
export const moveReview = (
  row: ReviewRow,
  status: Exclude<ReviewStatus, "submitted">,
  extra: { readonly reason?: string | null; readonly context: Readonly<Record<string, unknown>> }
): Effect.Effect<number, SqlError, Sql> =>
  Effect.gen(function*() {
    const revision = yield* setReviewStatus(row.uuid, status, extra.reason === undefined ? row.moderation_reason : extra.reason)
    yield* recomputeStats(row.subject_profile_uuid, row.subject_role)
    yield* appendEvent({
      type: "review.moderated",
      aggregate: { kind: "review", uuid: row.uuid, revision },
      data: { objectUuid: row.uuid, status, relationUuid: row.relation_uuid },
      context: { audience: audienceOf(row), ...extra.context }
    })
    return revision
  })

const loadView = (uuid: string, reader: Reader) => Effect.map(reviewViewRow(uuid), (row) => reviewView(row, reader))

/**
 * `reviews.create`, once per `requestUuid`: a party of a completed deal (404 for
 * anyone else), within 14 days of completion, once per party (409), never between two profiles of
 * one account (403). Sealed until the other party writes too (both are revealed in this
 * transaction) or the window closes (the worker job `reviews`).
 */
export const createReview = (
  actor: Actor,
  input: ReviewInput
): Effect.Effect<ReviewView, NotFound | Forbidden | InvalidState | RequestConflict | SqlError, Sql> =>
  idempotent(
    { scope: actor.profileUuid, operationId: "reviews.create", requestUuid: input.requestUuid, request: input, result: ReviewView },
    Effect.gen(function*() {
      const me = actor.profileUuid
      const deal = Option.getOrUndefined(yield* lockRelation(input.relationUuid))
      if (deal === undefined || (deal.initiator_profile_uuid !== me && deal.recipient_profile_uuid !== me)) {
        return yield* new NotFound({ message: "No such relation" })
      }
      if (deal.kind !== "deal") return yield* new InvalidState({ message: `Reviews are of completed deals; this is a ${deal.kind}` })
      if (deal.status !== "completed" || deal.completed_at === null) {
        return yield* new InvalidState({ message: `The deal is ${deal.status}; reviews are written once it is completed` })
      }
      const subject = deal.initiator_profile_uuid === me ? deal.recipient_profile_uuid : deal.initiator_profile_uuid
      const accounts = yield* accountsOf([me, subject])
      if (accounts.get(me) !== null && accounts.get(me) === accounts.get(subject)) {
        return yield* new Forbidden({ message: "Reviews between two profiles of one account are not allowed" })
      }
      const windowEndsAt = new Date(deal.completed_at.getTime() + reviewWindowMs)
      if (Date.now() >= windowEndsAt.getTime()) {
        return yield* new InvalidState({ message: `The review window closed at ${windowEndsAt.toISOString()} (14 days after completion)` })
      }
      const existing = yield* lockRelationReviews(deal.uuid)
      if (existing.some((review) => review.author_profile_uuid === me)) {
        return yield* new InvalidState({ message: "You already reviewed this deal; a review cannot be changed" })
      }
      const myRole = partyOf(deal, me).role
      const subjectRole: SubjectRole = myRole === "customer" ? "specialist" : "customer"
      yield* ensureCustomerAlias(myRole === "customer" ? me : subject)
      const row = yield* insertReview({
        relationUuid: deal.uuid,
        authorProfileUuid: me,
        subjectProfileUuid: subject,
        subjectRole,
        rating: input.rating,
        body: input.body ?? "",
        windowEndsAt
      })
      yield* appendEvent({
        type: "review.submitted",
        aggregate: { kind: "review", uuid: row.uuid, revision: row.revision },
        data: { objectUuid: row.uuid, status: "submitted", relationUuid: deal.uuid },
        context: { profileUuid: me, audience: [subject] }
      })
      const other = existing.find((review) => review.status === "submitted")
      if (other !== undefined) {
        // Both have written: both are revealed together.
        yield* moveReview(other, "published", { context: { cause: "revealed" } })
        yield* moveReview(row, "published", { context: { cause: "revealed" } })
      }
      return yield* loadView(row.uuid, "author")
    })
  )

/** Publishes sealed reviews whose window closed (worker job `reviews`); returns how many. */
export const revealDueReviews = (limit = 100): Effect.Effect<number, SqlError, Sql> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const rows = yield* lockDueSealed(limit)
      for (const row of rows) yield* moveReview(row, "published", { context: { cause: "revealed" } })
      return rows.length
    })))

/** A review the caller is the subject of, locked, for a reply: anyone else's is 404, the author's own 403. */
const lockOwnReceived = (me: string, uuid: string) =>
  Effect.gen(function*() {
    const row = Option.getOrUndefined(yield* lockReview(uuid))
    if (row === undefined) return yield* new NotFound({ message: "No such review" })
    const reader = readerOf(row, me)
    // A published review is public: a third party sees it exists, and is refused (403).
    if (reader === "public" && row.status !== "published") return yield* new NotFound({ message: "No such review" })
    if (reader !== "subject") return yield* new Forbidden({ message: "Only the reviewed profile may reply" })
    return row
  })

/** `reviews.reply`: once, to a published review; with `expectedRevision` it replaces the reply. */
export const replyToReview = (
  actor: Actor,
  input: ReplyInput
): Effect.Effect<ReviewView, NotFound | Forbidden | InvalidState | RevisionConflict | RequestConflict | SqlError, Sql> =>
  idempotent(
    { scope: actor.profileUuid, operationId: "reviews.reply", requestUuid: input.requestUuid, request: input, result: ReviewView },
    Effect.gen(function*() {
      const row = yield* lockOwnReceived(actor.profileUuid, input.reviewUuid)
      if (row.status !== "published") return yield* new InvalidState({ message: `The review is ${row.status}; replies are to published reviews` })
      if (input.expectedRevision === undefined) {
        if (row.reply_body !== null) {
          return yield* new InvalidState({ message: "You already replied; send expectedRevision to replace the reply" })
        }
      } else {
        yield* requireRevision("review", row.revision, input.expectedRevision)
      }
      yield* setReply(row.uuid, input.body)
      return yield* loadView(row.uuid, "subject")
    })
  )

/** `reviews.reply_remove`: deletes the reply. */
export const removeReply = (
  actor: Actor,
  input: ReplyRemoveInput
): Effect.Effect<ReviewView, NotFound | Forbidden | InvalidState | RevisionConflict | RequestConflict | SqlError, Sql> =>
  idempotent(
    { scope: actor.profileUuid, operationId: "reviews.reply_remove", requestUuid: input.requestUuid, request: input, result: ReviewView },
    Effect.gen(function*() {
      const row = yield* lockOwnReceived(actor.profileUuid, input.reviewUuid)
      yield* requireRevision("review", row.revision, input.expectedRevision)
      if (row.reply_body === null) return yield* new InvalidState({ message: "The review has no reply" })
      yield* setReply(row.uuid, null)
      return yield* loadView(row.uuid, "subject")
    })
  )

interface PageQuery {
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/** `reviews.list_own`: received (default; sealed ones sealed) or written, newest first. */
export const listOwnReviews = (
  actor: Actor,
  query: PageQuery & { readonly role?: "received" | "written" | undefined; readonly relationUuid?: string | undefined }
): Effect.Effect<ReviewPage, InvalidRequest | SqlError, Sql> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const role = query.role ?? "received"
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    const rows = yield* ownPage(actor.profileUuid, { role, relationUuid: query.relationUuid, after, limit: limit + 1 })
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => reviewView(row, role === "received" ? "subject" : "author"))
  })

export const summaryOf = (stats: { review_count: number; rating_sum: number; ratings: ReadonlyArray<number> }): RatingSummary => ({
  reviewCount: stats.review_count,
  ratingAverage: stats.review_count === 0 ? null : Math.round((stats.rating_sum / stats.review_count) * 100) / 100,
  ratings: { "1": stats.ratings[0] ?? 0, "2": stats.ratings[1] ?? 0, "3": stats.ratings[2] ?? 0, "4": stats.ratings[3] ?? 0, "5": stats.ratings[4] ?? 0 }
})

/** `reviews.list_public`: a public profile's published reviews as a specialist, with the summary. */
const listPublicReviewsWith = (reads: PublicReviewReads) =>
(
  query: PageQuery & { readonly profileUuid: string }
): Effect.Effect<PublicReviews, NotFound | InvalidRequest | SqlError> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    // Both at once: the page of a profile that is not public is read and dropped, never shown.
    const [found, rows] = yield* Effect.all([
      reads.publicStatsOf(query.profileUuid, "specialist"),
      reads.publishedPage(query.profileUuid, "specialist", after, limit + 1)
    ], { concurrency: 2 })
    if (Option.isNone(found)) return yield* new NotFound({ message: "No such profile" })
    const stats = found.value
    return {
      summary: summaryOf(stats),
      ...pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => reviewView(row, "public"))
    }
  })

/** `customers.get`: by alias; an unknown or malformed alias is 404. `limit` 0 is 20, above 100 is 100. */
const getCustomerWith = (reads: PublicReviewReads & ReturnType<typeof customerReadsWith>) =>
(
  query: PageQuery & { readonly customerAlias?: string | undefined }
): Effect.Effect<CustomerReviews, NotFound | InvalidRequest | SqlError> =>
  Effect.gen(function*() {
    if (query.customerAlias === undefined) return yield* new InvalidRequest({ message: "customerAlias: required, the customer's alias (c-…)" })
    const limit = query.limit === undefined || query.limit === 0 ? 20 : Math.min(query.limit, 100)
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    const alias = query.customerAlias
    const found = aliasPattern.test(alias) ? Option.getOrUndefined(yield* reads.profileOfAlias(alias)) : undefined
    if (found === undefined) return yield* new NotFound({ message: "No such customer" })
    const [stats, deals, rows] = yield* Effect.all([
      reads.statsOf(found.profile_uuid, "customer"),
      reads.completedDealsOf(found.profile_uuid),
      reads.publishedPage(found.profile_uuid, "customer", after, limit + 1)
    ], { concurrency: 3 })
    const summary = summaryOf(stats)
    return {
      customer: {
        alias,
        reviewCount: summary.reviewCount,
        ratingAverage: summary.ratingAverage,
        completedDeals: deals,
        since: found.created_at.toISOString().slice(0, 7)
      },
      ...pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => reviewView(row, "public"))
    }
  })

/**
 * The public review reads on pooled reads, resolved once (`implementWith`): `reviews.list_public`
 * and `customers.get` answer anonymous visitors, outside any transaction.
 */
export const makePublicReviews = Effect.map(makePooledRead, (read) => {
  const reads = { ...publicReviewReadsWith(read), ...customerReadsWith(read) }
  return { listPublicReviews: listPublicReviewsWith(reads), getCustomer: getCustomerWith(reads) }
})

