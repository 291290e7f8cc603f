import { BirzhaApi, CurrentActor } from "@birzha/domain"
import { createComment, deleteComment, listComments, replyToComment, ServerSecret } from "@birzha/domain/server"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { optionalActor } from "../OptionalActor.js"
import { noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

export const CommentsHandlers = HttpApiBuilder.group(BirzhaApi, "comments", (handlers) =>
  Effect.gen(function*() {
    const withServices = using(yield* Effect.context<SqlClient.SqlClient | ServerSecret>())
    return handlers
      .handle("comments.list", ({ path, urlParams }) =>
        Effect.gen(function*() {
          // canDelete depends on the caller: never kept by a shared cache.
          yield* noStore
          const viewer = yield* withServices(optionalActor)
          return yield* withServices(listComments(viewer, path.uuid, urlParams))
        }))
      .handle("comments.create", ({ path, payload }) =>
        Effect.flatMap(CurrentActor, (actor) => withServices(createComment(actor, path.uuid, payload))))
      .handle("comments.reply", ({ path, payload }) =>
        Effect.flatMap(CurrentActor, (actor) => withServices(replyToComment(actor, path.uuid, path.commentUuid, payload))))
      .handle("comments.delete", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) => withServices(deleteComment(actor, path.uuid, path.commentUuid))))
  }))
