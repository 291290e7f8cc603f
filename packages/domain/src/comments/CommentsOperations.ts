import { CommentsApi } from "./CommentsApi.js"
import { implement } from "../operations/Implementation.js"
import { createComment, deleteComment, listComments, replyToComment } from "./Comments.js"

export const CommentsOperations = implement(CommentsApi)({
  "comments.list": ({ path, urlParams }, viewer) => listComments(viewer, path.uuid, urlParams),
  "comments.create": ({ path, payload }, actor) => createComment(actor, path.uuid, payload),
  "comments.reply": ({ path, payload }, actor) => replyToComment(actor, path.uuid, path.commentUuid, payload),
  "comments.delete": ({ path }, actor) => deleteComment(actor, path.uuid, path.commentUuid)
})
