import { BirzhaApi, CurrentActor } from "@birzha/domain"
import { completeFile, fileStatus, prepareFile, ServerSecret } from "@birzha/domain/server"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { HostSettings } from "../HostSettings.js"
import { noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

/** files.prepare, files.status and files.complete; the bytes travel on the host's own routes (FileRoutes). */
export const FilesHandlers = HttpApiBuilder.group(BirzhaApi, "files", (handlers) =>
  Effect.gen(function*() {
    const withServices = using(yield* Effect.context<SqlClient.SqlClient | ServerSecret>())
    const { publicOrigin } = yield* HostSettings
    return handlers
      .handle("files.prepare", ({ payload }) =>
        Effect.gen(function*() {
          // The answer carries a one-time upload token: never kept by a cache.
          yield* noStore
          return yield* withServices(prepareFile(yield* CurrentActor, payload, publicOrigin))
        }))
      .handle("files.status", ({ path }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* withServices(fileStatus(yield* CurrentActor, path.uuid, publicOrigin))
        }))
      .handle("files.complete", ({ path }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* withServices(completeFile(yield* CurrentActor, path.uuid, publicOrigin))
        }))
  }))
