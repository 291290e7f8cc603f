import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Forbidden, InvalidRequest, NotFound, type RequestConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import type { ProfileType } from "../profiles/Profile.js"
import {
  commentPageRows,
  commentRow,
  type CommentRow,
  insertComment,
  lockedComment,
  softDeleteComment
} from "./CommentRepository.js"
import { publiclyVisible, publicationsJoin } from "../publications/Visibility.js"
import { decodeCursor, encodeCursor } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { rowsDecoder } from "../store/Rows.js"
import {
  type CommentAuthorType,
  type CommentCreate,
  type PublicationComment,
  type PublicationCommentPage,
  PublicationCommentResult
} from "./PublicationComment.js"

/** Roots per page when the caller names no `limit`. */
export const defaultCommentPageSize = 20

const authorTypeOf = (type: ProfileType): CommentAuthorType => (type === "Компания" ? "Organization" : "Person")

/**
 * The wire view of a row for `viewer` (undefined: anonymous). A deleted comment (only roots with
 * live answers get this far) shows its place and time, never its text or author.
 */
const view = (row: CommentRow, ownerProfileUuid: string, viewer: Actor | undefined): PublicationComment => {
  const parent = row.parent_comment_uuid === null ? {} : { parentCommentUuid: row.parent_comment_uuid }
  if (!row.live) {
    return {
      uuid: row.uuid,
      publicationUuid: row.publication_uuid,
      authorName: "",
      body: "",
      createdAt: row.created_at,
      canDelete: false,
      isPublicationAuthor: false,
      deleted: true,
      replyCount: row.reply_count,
      ...parent
    }
  }
  return {
    uuid: row.uuid,
    publicationUuid: row.publication_uuid,
    authorName: row.author_name,
    body: row.body,
    createdAt: row.created_at,
    canDelete: viewer !== undefined &&
      (viewer.profileUuid === row.author_profile_uuid || viewer.profileUuid === ownerProfileUuid),
    isPublicationAuthor: row.author_profile_uuid === ownerProfileUuid,
    deleted: false,
    replyCount: row.reply_count,
    authorId: row.author_id,
    authorProfileUuid: row.author_profile_uuid,
    authorType: authorTypeOf(row.author_type),
    ...(row.avatar_url === null ? {} : { avatarUrl: row.avatar_url }),
    ...parent
  }
}

const notFound = () => new NotFound({ message: "No such publication" })
const noSuchComment = () => new NotFound({ message: "No such comment on this publication" })

/** The publication if it is publicly visible; absent and not public read the same. */
const decodeOwner = rowsDecoder(Schema.Struct({ owner_profile_uuid: Schema.String }))

const visiblePublication = (publicationUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`
      SELECT p.owner_profile_uuid FROM ${sql.literal(publicationsJoin)}
      WHERE p.uuid = ${publicationUuid} AND ${sql.literal(publiclyVisible)}`,
      decodeOwner
    )
    return row === undefined ? yield* notFound() : row
  })

// Keyset on the root's `seq` (its creation order), in the service's one cursor format.
const afterSeq = (cursor: string | undefined): Effect.Effect<string, InvalidRequest> =>
  Effect.flatMap(decodeCursor(cursor), Option.match({
    onNone: () => Effect.succeed("0"),
    onSome: ({ key }) =>
      /^[1-9][0-9]{0,17}$/.test(key)
        ? Effect.succeed(key)
        : Effect.fail(new InvalidRequest({ message: "cursor is not a cursor of this list; start again without it" }))
  }))

/**
 * A page of a publicly visible publication's comments, for `viewer` (undefined: anonymous):
 * roots oldest first, each followed by its visible answers. A root shows while it is live or
 * has live answers; deleted answers never show. One statement, so counts and answers agree.
 */
export const listComments = (
  viewer: Actor | undefined,
  publicationUuid: string,
  query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
): Effect.Effect<PublicationCommentPage, NotFound | InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const limit = query.limit ?? defaultCommentPageSize
    const after = yield* afterSeq(query.cursor)
    const publication = yield* visiblePublication(publicationUuid)
    // One root more than asked tells whether a next page exists.
    const rows = yield* commentPageRows(publicationUuid, after, limit + 1)
    const bySeq = (a: CommentRow, b: CommentRow) => compareSeq(a.seq, b.seq)
    const roots = rows.filter((row) => row.parent_comment_uuid === null).sort(bySeq)
    const page = roots.slice(0, limit)
    const answers = new Map<string, Array<CommentRow>>()
    for (const row of rows) {
      if (row.parent_comment_uuid === null) continue
      const list = answers.get(row.parent_comment_uuid) ?? []
      list.push(row)
      answers.set(row.parent_comment_uuid, list)
    }
    const items = page.flatMap((root) => [root, ...(answers.get(root.uuid) ?? []).sort(bySeq)])
      .map((row) => view(row, publication.owner_profile_uuid, viewer))
    const last = page[page.length - 1]
    return roots.length > limit && last !== undefined
      ? { items, nextCursor: encodeCursor({ key: last.seq, uuid: last.uuid }) }
      : { items }
  })

// Sequence numbers arrive as decimal text; compare them as numbers without losing precision.
const compareSeq = (a: string, b: string): number => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0)

const post = (
  operationId: "comments.create" | "comments.reply",
  actor: Actor,
  publicationUuid: string,
  parentCommentUuid: string | undefined,
  input: CommentCreate
): Effect.Effect<PublicationCommentResult, NotFound | InvalidRequest | RequestConflict | SqlError, SqlClient.SqlClient> =>
  idempotent(
    {
      scope: actor.profileUuid,
      operationId,
      requestUuid: input.requestUuid,
      request: { publicationUuid, parentCommentUuid: parentCommentUuid ?? null, body: input.body },
      result: PublicationCommentResult
    },
    Effect.gen(function*() {
      const publication = yield* visiblePublication(publicationUuid)
      if (parentCommentUuid !== undefined) {
        // FOR SHARE: a concurrent delete of the root waits for this reply, or this reply sees it deleted.
        const parent = Option.getOrUndefined(yield* lockedComment(publicationUuid, parentCommentUuid, "share"))
        if (parent === undefined || !parent.live) return yield* noSuchComment()
        if (parent.parent_comment_uuid !== null) {
          return yield* new InvalidRequest({ message: "Threads are one level deep: reply to the root comment instead" })
        }
      }
      const uuid = yield* insertComment({
        publicationUuid,
        parentCommentUuid: parentCommentUuid ?? null,
        authorProfileUuid: actor.profileUuid,
        body: input.body
      })
      const row = yield* Effect.flatMap(commentRow(uuid), Option.match({
        onNone: () => Effect.dieMessage(`the new comment ${uuid} is missing`),
        onSome: Effect.succeed
      }))
      return { comment: view(row, publication.owner_profile_uuid, actor) }
    })
  )

/** A new root comment on a publicly visible publication, once per `requestUuid` of the acting profile. */
export const createComment = (actor: Actor, publicationUuid: string, input: CommentCreate) =>
  post("comments.create", actor, publicationUuid, undefined, input)

/** An answer to a live root comment (threads are one level deep), once per `requestUuid`. */
export const replyToComment = (actor: Actor, publicationUuid: string, commentUuid: string, input: CommentCreate) =>
  post("comments.reply", actor, publicationUuid, commentUuid, input)

/**
 * Soft-deletes a comment. Its author and the publication's current owner profile may; anyone
 * else gets 403 for a live comment and 404 for one that no longer shows. Deleting a deleted
 * comment again succeeds without a change.
 */
export const deleteComment = (
  actor: Actor,
  publicationUuid: string,
  commentUuid: string
): Effect.Effect<void, NotFound | Forbidden | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const publication = yield* visiblePublication(publicationUuid)
      const row = Option.getOrUndefined(yield* lockedComment(publicationUuid, commentUuid, "update"))
      if (row === undefined) return yield* noSuchComment()
      const allowed = actor.profileUuid === row.author_profile_uuid || actor.profileUuid === publication.owner_profile_uuid
      if (!allowed) {
        return yield* row.live
          ? new Forbidden({ message: "Only the comment's author or the publication's owner may delete it" })
          : noSuchComment()
      }
      if (row.deleted) return
      yield* softDeleteComment(commentUuid, actor.profileUuid)
    })))
