import { Schema } from "effect"
import { codePoints, DateTime, meanings, optionalField, PageLimit, RequestUuid, strict } from "../kernel/Common.js"

/** Spec limit: a comment body has at most 5000 characters. */
export const maxCommentBody = 5000

/**
 * A comment's text: trimmed, then 1 to 5000 characters. NUL is refused here because Postgres
 * text cannot hold it (it would otherwise fail in the database instead of answering 400).
 */
export const CommentBody = Schema.Trim.pipe(
  Schema.compose(
    Schema.String.pipe(
      Schema.filter((value) => value.length > 0, { message: () => "a comment must not be blank" }),
      Schema.filter((value) => codePoints(value) <= maxCommentBody, {
        message: () => `a comment has at most ${maxCommentBody} characters`
      }),
      Schema.filter((value) => !value.includes("\u0000"), { message: () => "a comment must not contain NUL characters" })
    )
  )
).annotations({
  identifier: "CommentBody",
  description: "1 to 5000 characters after trimming surrounding white space",
  jsonSchema: { type: "string", minLength: 1, maxLength: maxCommentBody }
})

/** `Person` for individuals, the self-employed and sole traders; `Organization` for companies. */
export const CommentAuthorType = Schema.Literal("Person", "Organization").annotations({ identifier: "CommentAuthorType" })
export type CommentAuthorType = typeof CommentAuthorType.Type

/**
 * The spec's PublicationComment, exactly its fields and no others. `canDelete` is about the
 * caller (false for anonymous readers); `isPublicationAuthor` about the publication's current
 * owner profile. A deleted root that still has live answers keeps its place with `deleted: true`,
 * an empty body and empty author name, and none of the optional author fields.
 */
export const PublicationComment = Schema.Struct({
  uuid: Schema.UUID,
  publicationUuid: Schema.UUID,
  authorName: Schema.String,
  // Bounded on the way in (CommentBody); not re-checked here, where UTF-16 length would misjudge emoji.
  body: Schema.String.annotations({ jsonSchema: { type: "string", maxLength: maxCommentBody } }),
  createdAt: DateTime,
  canDelete: Schema.Boolean,
  isPublicationAuthor: Schema.Boolean,
  deleted: Schema.Boolean,
  replyCount: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)),
  authorId: Schema.optional(Schema.String),
  authorProfileUuid: Schema.optional(Schema.UUID),
  authorType: Schema.optional(CommentAuthorType),
  avatarUrl: Schema.optional(Schema.String),
  parentCommentUuid: Schema.optional(Schema.UUID)
}).annotations({ identifier: "PublicationComment" })
export type PublicationComment = typeof PublicationComment.Type

/**
 * One page of a publication's comments in reading order: each root (oldest first) followed by
 * its visible answers (oldest first, with `parentCommentUuid`). `limit` counts roots; a root's
 * answers always come on the same page as the root. `nextCursor` is absent on the last page.
 */
export const PublicationCommentPage = Schema.Struct({
  items: Schema.Array(PublicationComment),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "PublicationCommentPage" })
export type PublicationCommentPage = typeof PublicationCommentPage.Type

export const PublicationCommentResult = Schema.Struct({ comment: PublicationComment }).annotations({
  identifier: "PublicationCommentResult"
})
export type PublicationCommentResult = typeof PublicationCommentResult.Type

export const CommentCreate = Schema.Struct({
  requestUuid: RequestUuid,
  body: CommentBody
}).annotations({ identifier: "CommentCreate", ...strict })
export type CommentCreate = typeof CommentCreate.Type

/** An opaque position in a thread, from a previous page's `nextCursor`. */
export const CommentCursor = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,200}$/)).annotations({
  identifier: "CommentCursor",
  description: "nextCursor of the previous page"
})

// No identifier: OpenAPI lists query parameters only from an inline (not $ref) object schema.
export const CommentListQuery = Schema.Struct({
  cursor: optionalField(CommentCursor, meanings.cursor),
  limit: Schema.optional(PageLimit)
})
