import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { publiclyVisibleProfile } from "../profiles/ProfileRepository.js"
import type { PooledRead } from "../store/PooledReads.js"
import { rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"
import { ReviewStatus, SubjectRole } from "./Review.js"

/** `reviews` (and `review_stats`): this module is the tables' one reader and writer. */
export const ReviewRow = Schema.Struct({
  uuid: Schema.String,
  relation_uuid: Schema.String,
  author_profile_uuid: Schema.String,
  subject_profile_uuid: Schema.String,
  subject_role: SubjectRole,
  rating: Schema.Number,
  body: Schema.String,
  status: ReviewStatus,
  window_ends_at: Schema.DateFromSelf,
  reply_body: Schema.NullOr(Schema.String),
  reply_created_at: Schema.NullOr(Schema.DateFromSelf),
  reply_updated_at: Schema.NullOr(Schema.DateFromSelf),
  moderation_reason: Schema.NullOr(Schema.String),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  published_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ReviewRow = typeof ReviewRow.Type

/** A review with its author as readers see it and the list's keyset position. */
export const ReviewViewRow = Schema.Struct({
  ...ReviewRow.fields,
  position: Schema.String,
  author_name: Schema.String,
  author_type: ProfileType,
  author_public: Schema.Boolean,
  author_avatar_url: Schema.NullOr(Schema.String),
  author_alias: Schema.NullOr(Schema.String)
})
export type ReviewViewRow = typeof ReviewViewRow.Type

const columns = selectList(ReviewRow, "v")
const decodeRow = rowDecoder(ReviewRow)
const decodeRows = rowsDecoder(ReviewRow)
const decodeViewRows = rowsDecoder(ReviewViewRow)

const viewSelectText = (position: "created_at" | "published_at") =>
  `SELECT ${columns}, v.${position}::text AS position,
      a.name AS author_name, a.type AS author_type, (a.is_public AND a.deleted_at IS NULL) AS author_public, a.avatar_url AS author_avatar_url,
      CASE WHEN v.subject_role = 'specialist' THEN ca.alias END AS author_alias
    FROM reviews v JOIN profiles a ON a.uuid = v.author_profile_uuid
    LEFT JOIN customer_aliases ca ON ca.profile_uuid = v.author_profile_uuid`
const viewSelect = (sql: SqlClient.SqlClient, position: "created_at" | "published_at") => sql.literal(viewSelectText(position))

export const insertReview = (review: {
  relationUuid: string
  authorProfileUuid: string
  subjectProfileUuid: string
  subjectRole: SubjectRole
  rating: number
  body: string
  windowEndsAt: Date
}): Effect.Effect<ReviewRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO reviews (relation_uuid, author_profile_uuid, subject_profile_uuid, subject_role, rating, body, status, window_ends_at)
      VALUES (${review.relationUuid}, ${review.authorProfileUuid}, ${review.subjectProfileUuid}, ${review.subjectRole},
        ${review.rating}, ${review.body}, 'submitted', ${review.windowEndsAt})
      RETURNING ${sql.literal(selectList(ReviewRow))}`.pipe(Effect.flatMap((rows) => decodeRow(rows[0]))))

/** The reviews of a relation, locked (the second review reveals both). */
export const lockRelationReviews = (relationUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM reviews v WHERE v.relation_uuid = ${relationUuid} ORDER BY v.created_at FOR UPDATE`.pipe(
      Effect.flatMap(decodeRows)
    ))

export const lockReview = (uuid: string): Effect.Effect<Option.Option<ReviewRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM reviews v WHERE v.uuid = ${uuid} FOR UPDATE`.pipe(
      Effect.flatMap((rows) => rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(decodeRow(rows[0]), Option.some))
    ))

/** Sealed reviews whose window closed, locked; rows another worker holds are skipped. */
export const lockDueSealed = (limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM reviews v WHERE v.status = 'submitted' AND v.window_ends_at <= now()
      ORDER BY v.window_ends_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`.pipe(Effect.flatMap(decodeRows)))

const decodeMoments = rowsDecoder(Schema.Struct({ at: Schema.NullOr(Timestamp) }))
const decodeRevisions = rowsDecoder(Schema.Struct({ revision: Schema.Number }))
const decodeAccounts = rowsDecoder(Schema.Struct({ uuid: Schema.String, account_uuid: Schema.NullOr(Schema.String) }))
const Standing = Schema.Struct({ status: Schema.String, revision: Schema.Number })
const decodeStanding = rowsDecoder(Standing)

/** When `lockDueSealed` next has a review (index `reviews_sealed`); `undefined`: none. */
export const nextSealedRevealMoment: Effect.Effect<Date | undefined, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT min(window_ends_at) AS at FROM reviews WHERE status = 'submitted'`.pipe(
    Effect.flatMap(decodeMoments),
    Effect.map(([row]) => row?.at == null ? undefined : new Date(row.at))
  ))

/** Sets a review's status (published: `published_at` now unless already set); returns the new revision. */
export const setReviewStatus = (uuid: string, status: ReviewStatus, moderationReason: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE reviews SET status = ${status}, moderation_reason = ${moderationReason},
        published_at = CASE WHEN ${status} = 'published' THEN coalesce(published_at, now()) ELSE published_at END,
        revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid} RETURNING revision`.pipe(Effect.flatMap(decodeRevisions), Effect.map((rows) => rows[0]!.revision)))

export const setReply = (uuid: string, body: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE reviews SET reply_body = ${body},
        reply_created_at = CASE WHEN ${body}::text IS NULL THEN NULL ELSE coalesce(reply_created_at, now()) END,
        reply_updated_at = CASE WHEN ${body}::text IS NULL THEN NULL ELSE now() END,
        revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid} RETURNING revision`.pipe(Effect.flatMap(decodeRevisions), Effect.map((rows) => rows[0]!.revision)))

/** Recomputes `review_stats` of one profile and role from its published reviews. */
export const recomputeStats = (profileUuid: string, role: SubjectRole) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO review_stats (profile_uuid, subject_role, review_count, rating_sum, ratings)
      SELECT ${profileUuid}, ${role}, count(*), coalesce(sum(rating), 0),
        ARRAY[count(*) FILTER (WHERE rating = 1), count(*) FILTER (WHERE rating = 2), count(*) FILTER (WHERE rating = 3),
          count(*) FILTER (WHERE rating = 4), count(*) FILTER (WHERE rating = 5)]::int[]
      FROM reviews WHERE subject_profile_uuid = ${profileUuid} AND subject_role = ${role} AND status = 'published'
      ON CONFLICT (profile_uuid, subject_role) DO UPDATE
        SET review_count = EXCLUDED.review_count, rating_sum = EXCLUDED.rating_sum, ratings = EXCLUDED.ratings`.pipe(Effect.asVoid))

type After = { readonly key: string; readonly uuid: string } | undefined

/** The uuid of `me`'s review of the relation `r` (a column for other areas' views: the relation view's `review` hint). */
export const ownReviewColumn = (sql: SqlClient.SqlClient, me: string) =>
  sql`(SELECT v.uuid FROM reviews v WHERE v.relation_uuid = r.uuid AND v.author_profile_uuid = ${me}::uuid)`

const Stats = Schema.Struct({ review_count: Schema.Number, rating_sum: Schema.Number, ratings: Schema.Array(Schema.Number) })
const decodeStats = rowsDecoder(Stats)
const noStats: typeof Stats.Type = { review_count: 0, rating_sum: 0, ratings: [0, 0, 0, 0, 0] }
const statsText = "SELECT review_count, rating_sum, ratings FROM review_stats WHERE profile_uuid = $1 AND subject_role = $2"
const publishedText = (after: boolean) =>
  `${viewSelectText("published_at")}
      WHERE v.subject_profile_uuid = $1 AND v.subject_role = $2 AND v.status = 'published'
        ${after ? "AND (v.published_at, v.uuid) < ($4::timestamptz, $5::uuid)" : ""}
      ORDER BY v.published_at DESC, v.uuid DESC LIMIT $3`
const publishedFirst = publishedText(false)
const publishedAfter = publishedText(true)
// Whose reviews are public: the profiles anyone may read (public, or the author of a publicly visible
// publication); with the profile's counters in the role, in the same statement (one round trip).
const publicStatsText = `SELECT s.review_count, s.rating_sum, s.ratings FROM profiles p LEFT JOIN accounts a ON a.uuid = p.account_uuid
  LEFT JOIN review_stats s ON s.profile_uuid = p.uuid AND s.subject_role = $2
  WHERE p.uuid = $1 AND ${publiclyVisibleProfile}`
const PublicStats = Schema.Struct({
  review_count: Schema.NullOr(Schema.Number),
  rating_sum: Schema.NullOr(Schema.Number),
  ratings: Schema.NullOr(Schema.Array(Schema.Number))
})
const decodePublicStats = rowsDecoder(PublicStats)

/**
 * The reads of the public review pages (`reviews.list_public`, `customers.get`), through a pooled
 * read (`makePooledRead`): no transaction, every anonymous visitor's request.
 */
export const publicReviewReadsWith = (read: PooledRead) => ({
  /** The rating counters of a profile in one role (zeros when it has none), or none when the profile is not public and live. */
  publicStatsOf: (profileUuid: string, role: SubjectRole): Effect.Effect<Option.Option<typeof Stats.Type>, SqlError> =>
    Effect.map(Effect.flatMap(read(publicStatsText, [profileUuid, role]), decodePublicStats), (rows) => {
      const row = rows[0]
      if (row === undefined) return Option.none()
      return Option.some(row.review_count === null || row.rating_sum === null || row.ratings === null ? noStats : {
        review_count: row.review_count,
        rating_sum: row.rating_sum,
        ratings: row.ratings
      })
    }),
  /** The rating counters of a profile in one role (zeros when it has none). */
  statsOf: (profileUuid: string, role: SubjectRole) =>
    Effect.map(Effect.flatMap(read(statsText, [profileUuid, role]), decodeStats), (rows) => rows[0] ?? noStats),
  /** Published reviews of a profile in one role, newest publication first. */
  publishedPage: (profileUuid: string, role: SubjectRole, after: After, limit: number): Effect.Effect<ReadonlyArray<ReviewViewRow>, SqlError> =>
    Effect.flatMap(
      after === undefined
        ? read(publishedFirst, [profileUuid, role, limit])
        : read(publishedAfter, [profileUuid, role, limit, after.key, after.uuid]),
      decodeViewRows
    )
})
export type PublicReviewReads = ReturnType<typeof publicReviewReadsWith>

/** Reviews a profile received or wrote, newest first. */
export const ownPage = (
  me: string,
  filter: { role: "received" | "written"; relationUuid?: string | undefined; after: After; limit: number }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`${viewSelect(sql, "created_at")}
      WHERE ${filter.role === "received" ? sql`v.subject_profile_uuid = ${me}` : sql`v.author_profile_uuid = ${me}`}
        ${filter.relationUuid === undefined ? sql`` : sql`AND v.relation_uuid = ${filter.relationUuid}`}
        ${filter.after === undefined ? sql`` : sql`AND (v.created_at, v.uuid) < (${filter.after.key}::timestamptz, ${filter.after.uuid}::uuid)`}
      ORDER BY v.created_at DESC, v.uuid DESC LIMIT ${filter.limit}`.pipe(Effect.flatMap(decodeViewRows)))

/** Reviews for moderators: by status and subject, newest first. */
export const moderationPage = (filter: { status?: string | undefined; profileUuid?: string | undefined; after: After; limit: number }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`${viewSelect(sql, "created_at")}
      WHERE true
        ${filter.status === undefined ? sql`` : sql`AND v.status = ${filter.status}`}
        ${filter.profileUuid === undefined ? sql`` : sql`AND v.subject_profile_uuid = ${filter.profileUuid}`}
        ${filter.after === undefined ? sql`` : sql`AND (v.created_at, v.uuid) < (${filter.after.key}::timestamptz, ${filter.after.uuid}::uuid)`}
      ORDER BY v.created_at DESC, v.uuid DESC LIMIT ${filter.limit}`.pipe(Effect.flatMap(decodeViewRows)))

/** One review with its author, for the answer of a command. */
export const reviewViewRow = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`${viewSelect(sql, "created_at")} WHERE v.uuid = ${uuid}`.pipe(Effect.flatMap(decodeViewRows), Effect.map((rows) => rows[0]!)))

/** The reviews of a relation, for the moderators' queue. */
export const relationReviews = (relationUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM reviews v WHERE v.relation_uuid = ${relationUuid} ORDER BY v.created_at`.pipe(
      Effect.flatMap(decodeRows)
    ))

/** The account of each of some profiles (the same-account guard). */
export const accountsOf = (profiles: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT uuid, account_uuid FROM profiles WHERE ${sql.in("uuid", profiles)}`.pipe(
      Effect.flatMap(decodeAccounts),
      Effect.map((rows) => new Map(rows.map((row) => [row.uuid, row.account_uuid])))
    ))


/** A review's status and revision (the CLI decides at the revision it read). */
export const reviewStanding = (uuid: string): Effect.Effect<Option.Option<typeof Standing.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT status, revision FROM reviews WHERE uuid = ${uuid}`.pipe(
      Effect.flatMap(decodeStanding),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))
