import { HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CommentCreate,
  CommentListQuery,
  PublicationCommentPage,
  PublicationCommentResult
} from "./PublicationComment.js"
import { Forbidden, NotFound, RequestConflict, wire } from "../kernel/ApiError.js"
import { anyone, authenticated } from "../kernel/Operation.js"

const PublicationPath = Schema.Struct({ uuid: Schema.UUID })
const CommentPath = Schema.Struct({ uuid: Schema.UUID, commentUuid: Schema.UUID })
const write = { extension: true, scopes: ["comments:write"] }

/**
 * Comments on publications. The spec defines the PublicationComment resource but lists no
 * operations for it, so these four are ours (`x-extension`). Comments of a publication that is
 * absent or not publicly visible answer 404.
 */
export const CommentsApi = HttpApiGroup.make("comments", { topLevel: true })
  .add(
    anyone("GET", "comments.list", "/api/v1/publications/:uuid/comments", {
      extension: true,
      // canDelete depends on the caller: never kept by a shared cache.
      noStore: true,
      summary: "A page of a public publication's comments: roots oldest first, each followed by its answers; " +
        "with a session, canDelete reflects the caller"
    }, [wire(NotFound)])
      .setPath(PublicationPath)
      .setUrlParams(CommentListQuery)
      .addSuccess(PublicationCommentPage)
  )
  .add(
    authenticated("POST", "comments.create", "/api/v1/publications/:uuid/comments", {
      ...write,
      summary: "Comment on a public publication (idempotent by requestUuid)"
    }, [wire(NotFound), wire(RequestConflict)])
      .setPath(PublicationPath)
      .setPayload(CommentCreate)
      .addSuccess(PublicationCommentResult)
  )
  .add(
    authenticated("POST", "comments.reply", "/api/v1/publications/:uuid/comments/:commentUuid/replies", {
      ...write,
      summary: "Answer a live root comment; threads are one level deep (idempotent by requestUuid)"
    }, [wire(NotFound), wire(RequestConflict)])
      .setPath(CommentPath)
      .setPayload(CommentCreate)
      .addSuccess(PublicationCommentResult)
  )
  .add(
    authenticated("DELETE", "comments.delete", "/api/v1/publications/:uuid/comments/:commentUuid", {
      ...write,
      summary: "Delete a comment: its author or the publication's current owner"
    }, [wire(NotFound), wire(Forbidden)])
      .setPath(CommentPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .annotate(OpenApi.Description, "Comments on publications: roots and one level of answers")
