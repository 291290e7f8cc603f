import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { rowsDecoder, selectList } from "../store/Rows.js"

/** `publication_comments` as the service reads it: the one module that reads and writes the table. */
export const StoredCommentRow = Schema.Struct({
  uuid: Schema.String,
  /** bigint, read as text: the creation order, compared as a decimal string. */
  seq: Schema.String,
  publication_uuid: Schema.String,
  parent_comment_uuid: Schema.NullOr(Schema.String),
  author_profile_uuid: Schema.String,
  body: Schema.String,
  created_at: Schema.DateFromSelf
})

/** A comment with what its view needs: whether it still shows, its author profile, and its visible answers. */
export const CommentRow = Schema.Struct({
  ...StoredCommentRow.fields,
  live: Schema.Boolean,
  author_id: Schema.String,
  author_name: Schema.String,
  author_type: ProfileType,
  avatar_url: Schema.NullOr(Schema.String),
  reply_count: Schema.Number
})
export type CommentRow = typeof CommentRow.Type
const decodeRows = Schema.decodeUnknown(Schema.Array(CommentRow))
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decoded = <E, R>(rows: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
  Effect.flatMap(rows, (found) => Effect.orDie(decodeRows(found)))

/** Comments `c` with their author profile `ap` and its account `aa` (absent for imported profiles). */
const commentsFrom = `publication_comments c
  JOIN profiles ap ON ap.uuid = c.author_profile_uuid
  LEFT JOIN accounts aa ON aa.uuid = ap.account_uuid`

/** Shown as a comment: not deleted, and its author's profile and account are live (a deleted author's words go with them). */
const commentLive = `(c.deleted_at IS NULL AND ap.deleted_at IS NULL AND aa.deleted_at IS NULL)`

const commentColumns = `${selectList(StoredCommentRow, "c")}, ${commentLive} AS live,
  ap.id AS author_id, ap.name AS author_name, ap.type AS author_type, ap.avatar_url`

/** Currently visible answers of the root `c`. */
const replyCount = `(SELECT count(*) FROM publication_comments x
    JOIN profiles xp ON xp.uuid = x.author_profile_uuid
    LEFT JOIN accounts xa ON xa.uuid = xp.account_uuid
    WHERE x.parent_comment_uuid = c.uuid AND x.deleted_at IS NULL AND xp.deleted_at IS NULL AND xa.deleted_at IS NULL)::int`

/**
 * Up to `roots` roots after `afterSeq` (those live or with live answers), each with its reply
 * count, and the live answers of those roots, in no particular order. One statement, so counts
 * and answers agree.
 */
export const commentPageRows = (
  publicationUuid: string,
  afterSeq: string,
  roots: number
): Effect.Effect<ReadonlyArray<CommentRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decoded(sql`
      WITH roots AS (
        SELECT r.* FROM (
          SELECT ${sql.literal(commentColumns)}, ${sql.literal(replyCount)} AS reply_count
          FROM ${sql.literal(commentsFrom)}
          WHERE c.publication_uuid = ${publicationUuid} AND c.parent_comment_uuid IS NULL AND c.seq > ${afterSeq}
        ) r
        WHERE r.live OR r.reply_count > 0
        ORDER BY r.seq
        LIMIT ${roots}
      )
      SELECT * FROM roots
      UNION ALL
      SELECT ${sql.literal(commentColumns)}, 0 AS reply_count
      FROM ${sql.literal(commentsFrom)}
      WHERE c.parent_comment_uuid IN (SELECT uuid FROM roots) AND ${sql.literal(commentLive)}`))

/** One comment as shown, counting no answers (a new one has none). */
export const commentRow = (uuid: string): Effect.Effect<Option.Option<CommentRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decoded(sql`SELECT ${sql.literal(commentColumns)}, 0 AS reply_count FROM ${sql.literal(commentsFrom)}
      WHERE c.uuid = ${uuid}`).pipe(Effect.map((rows) => Option.fromNullable(rows[0]))))

const CommentState = Schema.Struct({
  author_profile_uuid: StoredCommentRow.fields.author_profile_uuid,
  parent_comment_uuid: StoredCommentRow.fields.parent_comment_uuid,
  deleted: Schema.Boolean,
  live: Schema.Boolean
})
export type CommentState = typeof CommentState.Type
const decodeStates = Schema.decodeUnknown(Schema.Array(CommentState))

/**
 * A comment of the publication, row-locked: `share` for a reply to it (a concurrent delete of the
 * root waits for the reply, or the reply sees it deleted), `update` to delete it.
 */
export const lockedComment = (
  publicationUuid: string,
  uuid: string,
  lock: "share" | "update"
): Effect.Effect<Option.Option<CommentState>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT c.author_profile_uuid, c.parent_comment_uuid, c.deleted_at IS NOT NULL AS deleted, ${sql.literal(commentLive)} AS live
      FROM ${sql.literal(commentsFrom)}
      WHERE c.uuid = ${uuid} AND c.publication_uuid = ${publicationUuid}
      ${sql.literal(lock === "share" ? "FOR SHARE OF c" : "FOR UPDATE OF c")}`.pipe(
      Effect.flatMap((rows) => Effect.orDie(decodeStates(rows))),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

/** A new comment; returns its uuid. */
export const insertComment = (comment: {
  readonly publicationUuid: string
  readonly parentCommentUuid: string | null
  readonly authorProfileUuid: string
  readonly body: string
}): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO publication_comments (publication_uuid, parent_comment_uuid, author_profile_uuid, body)
      VALUES (${comment.publicationUuid}, ${comment.parentCommentUuid}, ${comment.authorProfileUuid}, ${comment.body})
      RETURNING uuid`.pipe(Effect.flatMap(decodeUuids), Effect.map((rows) => rows[0]!.uuid)))

export const softDeleteComment = (uuid: string, byProfileUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE publication_comments
      SET deleted_at = now(), deleted_by_profile_uuid = ${byProfileUuid}, revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid}`.pipe(Effect.asVoid))
