import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { Forbidden, type InvalidRequest, NotFound, type RequestConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { lockSubject } from "../auth/RateLimit.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { uuidV5 } from "../store/UuidV5.js"
import { FavoriteChange, type FavoriteInput, type FavoritePage } from "./Favorite.js"
import { countPresent, entityVisible, favoritePageRows, lockFavorite, writeFavorite } from "./FavoriteRepository.js"

/** At most this many favorites per profile. */
export const maxFavorites = 1000

/** The namespace of favorite uuids (v5 of profile, kind and entity). */
const favoriteNamespace = "5c0b8f3e-6f0a-4b7e-9b1d-2a6f3c1e9d40"

export const favoriteUuid = (profileUuid: string, entityKind: string, entityUuid: string) =>
  uuidV5(`${profileUuid}:${entityKind}:${entityUuid.toLowerCase()}`, favoriteNamespace)

/**
 * `favorites.set` / `favorites.remove`: once per `requestUuid`. Setting a
 * present favorite or removing an absent one answers `changed: false` and writes no event;
 * otherwise `favorite.changed` (added / removed) goes to the owner alone.
 */
export const changeFavorite = (
  actor: Actor,
  operationId: "favorites.set" | "favorites.remove",
  input: FavoriteInput
): Effect.Effect<FavoriteChange, NotFound | Forbidden | RequestConflict | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { scope: actor.profileUuid, operationId, requestUuid: input.requestUuid, request: input, result: FavoriteChange },
    Effect.gen(function*() {
      const me = actor.profileUuid
      const present = operationId === "favorites.set"
      const uuid = favoriteUuid(me, input.entityKind, input.entityUuid)
      const base = { uuid, entityKind: input.entityKind, entityUuid: input.entityUuid.toLowerCase() }
      yield* lockSubject(`favorite:${uuid}`)
      const row = Option.getOrUndefined(yield* lockFavorite(uuid))
      if ((row?.present ?? false) === present) {
        return { ...base, favorited: present, revision: row?.revision ?? 0, changed: false }
      }
      if (present) {
        if (!(yield* entityVisible(input.entityKind, input.entityUuid))) {
          return yield* new NotFound({ message: `No such ${input.entityKind}` })
        }
        yield* lockSubject(`favorites:${me}`)
        if ((yield* countPresent(me)) >= maxFavorites) {
          return yield* new Forbidden({ message: `At most ${maxFavorites} favorites; remove some first` })
        }
      }
      const revision = yield* writeFavorite({ uuid, profileUuid: me, entityKind: input.entityKind, entityUuid: base.entityUuid, present })
      yield* appendEvent({
        type: "favorite.changed",
        aggregate: { kind: "favorite", uuid, revision },
        data: { objectUuid: uuid, status: present ? "added" : "removed", entityKind: input.entityKind, entityUuid: base.entityUuid },
        context: { profileUuid: me }
      })
      return { ...base, favorited: present, revision, changed: true }
    })
  )

/** `favorites.list`: newest first; entities no longer publicly visible have `available: false` and no `entity`. */
export const listFavorites = (
  actor: Actor,
  query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
): Effect.Effect<FavoritePage, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = Option.getOrUndefined(yield* decodeCursor(query.cursor))
    const rows = yield* favoritePageRows(actor.profileUuid, after, limit + 1)
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) => ({
      uuid: row.uuid,
      entityKind: row.entity_kind,
      entityUuid: row.entity_uuid,
      createdAt: row.created_at,
      available: row.available,
      ...(row.available
        ? {
          entity: {
            title: row.title ?? "",
            ...(row.profile_type === null ? {} : { profileType: row.profile_type }),
            ...(row.avatar_url === null ? {} : { avatarUrl: row.avatar_url }),
            ...(row.publication_kind === null ? {} : { publicationKind: row.publication_kind })
          }
        }
        : {})
    }))
  })
