import { Schema } from "effect"
import { DateTime, meanings, optionalField, RequestUuid, strict } from "../kernel/Common.js"
import { Cursor, Limit } from "../publications/OwnerCommandsApi.js"
import { ProfileType } from "../profiles/Profile.js"
import { PublicationKind } from "../publications/Publication.js"

/** What a favorite points at (spec: profile or publication). */
export const FavoriteEntityKind = Schema.Literal("profile", "publication").annotations({ identifier: "FavoriteEntityKind" })
export type FavoriteEntityKind = typeof FavoriteEntityKind.Type

/** `favorites.set` and `favorites.remove` (spec): requestUuid, entityKind, entityUuid; all required; nothing else. */
export const FavoriteInput = Schema.Struct({
  requestUuid: RequestUuid,
  entityKind: FavoriteEntityKind,
  entityUuid: Schema.UUID
}).annotations({ identifier: "FavoriteInput", ...strict })
export type FavoriteInput = typeof FavoriteInput.Type

/** `favorites.list` and `complaints.list` (spec): cursor, limit 1 to 100. */
export const PageQuery = Schema.Struct({
  cursor: optionalField(Cursor, meanings.cursor),
  limit: Schema.optional(Limit)
}).annotations(strict)

/** The favorited entity as the owner sees it now: a profile's name, type and avatar, or a publication's kind and title. */
export const FavoriteEntity = Schema.Struct({
  title: Schema.String,
  profileType: Schema.optional(ProfileType),
  avatarUrl: Schema.optional(Schema.String),
  publicationKind: Schema.optional(PublicationKind)
}).annotations({ identifier: "FavoriteEntity" })

/** One favorite of the list: `available: false` (and no `entity`) once the entity is no longer publicly visible. */
export const FavoriteView = Schema.Struct({
  uuid: Schema.UUID,
  entityKind: FavoriteEntityKind,
  entityUuid: Schema.UUID,
  createdAt: DateTime,
  available: Schema.Boolean,
  entity: Schema.optional(FavoriteEntity)
}).annotations({ identifier: "Favorite" })
export type FavoriteView = typeof FavoriteView.Type

export const FavoritePage = Schema.Struct({
  items: Schema.Array(FavoriteView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "FavoritePage" })
export type FavoritePage = typeof FavoritePage.Type

/** The answer of set and remove: the favorite's state now and whether this call changed it. */
export const FavoriteChange = Schema.Struct({
  uuid: Schema.UUID,
  entityKind: FavoriteEntityKind,
  entityUuid: Schema.UUID,
  favorited: Schema.Boolean,
  /** Changes so far (0: never set). */
  revision: Schema.Int,
  changed: Schema.Boolean
}).annotations({ identifier: "FavoriteChange" })
export type FavoriteChange = typeof FavoriteChange.Type
