import { HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CommentCreate,
  CommentListQuery,
  PublicationCommentPage,
  PublicationCommentResult
} from "./PublicationComment.js"
import { Forbidden, NotFound, RequestConflict, wire } from "../kernel/ApiError.js"
import { Authentication } from "../kernel/Authentication.js"
import { operation } from "../kernel/Operation.js"

const PublicationPath = Schema.Struct({ uuid: Schema.UUID })
const CommentPath = Schema.Struct({ uuid: Schema.UUID, commentUuid: Schema.UUID })

/**
 * Comments on publications. The spec defines the PublicationComment resource but lists no
 * operations for it, so these four are ours (`x-extension`). Comments of a publication that is
 * absent or not publicly visible answer 404.
 */
export const CommentsApi = HttpApiGroup.make("comments", { topLevel: true })
  .add(
    operation("GET", "comments.list", "/api/v1/publications/:uuid/comments", {
      extension: true,
      // canDelete depends on the caller: never kept by a shared cache.
      noStore: true,
      summary: "A page of a public publication's comments: roots oldest first, each followed by its answers; " +
        "with a session, canDelete reflects the caller"
    })
      .setPath(PublicationPath)
      .setUrlParams(CommentListQuery)
      .addSuccess(PublicationCommentPage)
      .addError(wire(NotFound))
  )
  .add(
    operation("POST", "comments.create", "/api/v1/publications/:uuid/comments", {
      extension: true,
      scopes: ["comments:write"],
      summary: "Comment on a public publication (idempotent by requestUuid)"
    })
      .middleware(Authentication)
      .setPath(PublicationPath)
      .setPayload(CommentCreate)
      .addSuccess(PublicationCommentResult)
      .addError(wire(NotFound))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "comments.reply", "/api/v1/publications/:uuid/comments/:commentUuid/replies", {
      extension: true,
      scopes: ["comments:write"],
      summary: "Answer a live root comment; threads are one level deep (idempotent by requestUuid)"
    })
      .middleware(Authentication)
      .setPath(CommentPath)
      .setPayload(CommentCreate)
      .addSuccess(PublicationCommentResult)
      .addError(wire(NotFound))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("DELETE", "comments.delete", "/api/v1/publications/:uuid/comments/:commentUuid", {
      extension: true,
      scopes: ["comments:write"],
      summary: "Delete a comment: its author or the publication's current owner"
    })
      .middleware(Authentication)
      .setPath(CommentPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(wire(NotFound))
      .addError(wire(Forbidden))
  )
  .annotate(OpenApi.Description, "Comments on publications: roots and one level of answers")
