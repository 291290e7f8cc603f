import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { PublicationKind } from "../publications/Publication.js"
import { publiclyVisible } from "../publications/Visibility.js"
import { rowDecoder, rowsDecoder, selectList } from "../store/Rows.js"
import { FavoriteEntityKind } from "./Favorite.js"

/** `favorites`: this module is the table's one reader and writer. */
export const FavoriteRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  entity_kind: FavoriteEntityKind,
  entity_uuid: Schema.String,
  present: Schema.Boolean,
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type FavoriteRow = typeof FavoriteRow.Type

/** A present favorite with what its list item shows of the entity now (null fields: no longer visible). */
export const FavoriteListRow = Schema.Struct({
  ...FavoriteRow.fields,
  position: Schema.String,
  available: Schema.Boolean,
  title: Schema.NullOr(Schema.String),
  profile_type: Schema.NullOr(ProfileType),
  avatar_url: Schema.NullOr(Schema.String),
  publication_kind: Schema.NullOr(PublicationKind)
})
export type FavoriteListRow = typeof FavoriteListRow.Type

const columns = selectList(FavoriteRow, "f")
const decodeRow = rowDecoder(FavoriteRow)
const decodeList = rowsDecoder(FavoriteListRow)

/** The favorite row of a triple, locked, if there is one. */
export const lockFavorite = (uuid: string): Effect.Effect<Option.Option<FavoriteRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)} FROM favorites f WHERE f.uuid = ${uuid} FOR UPDATE`.pipe(
      Effect.flatMap((rows) => rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(decodeRow(rows[0]), Option.some))
    ))

const decodeRevisions = rowsDecoder(Schema.Struct({ revision: Schema.Number }))
const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))

/** Sets a favorite present or absent: inserts the first time (revision 1), otherwise bumps the revision. */
export const writeFavorite = (row: { uuid: string; profileUuid: string; entityKind: string; entityUuid: string; present: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO favorites (uuid, profile_uuid, entity_kind, entity_uuid, present)
      VALUES (${row.uuid}, ${row.profileUuid}, ${row.entityKind}, ${row.entityUuid}, ${row.present})
      ON CONFLICT (uuid) DO UPDATE SET present = EXCLUDED.present, revision = favorites.revision + 1, updated_at = now(),
        created_at = CASE WHEN EXCLUDED.present THEN now() ELSE favorites.created_at END
      RETURNING revision`.pipe(Effect.flatMap(decodeRevisions), Effect.map((rows) => rows[0]!.revision)))

export const countPresent = (profileUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT count(*)::int AS n FROM favorites WHERE profile_uuid = ${profileUuid} AND present`.pipe(
      Effect.flatMap(decodeCount),
      Effect.map((rows) => rows[0]?.n ?? 0)
    ))

/** Whether a profile or publication is publicly visible now (a favorite may be set only then). */
export const entityVisible = (kind: FavoriteEntityKind, uuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    (kind === "profile"
      ? sql`SELECT 1 FROM profiles WHERE uuid = ${uuid} AND is_public AND deleted_at IS NULL`
      : sql`SELECT 1 FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid
          WHERE p.uuid = ${uuid} AND ${sql.literal(publiclyVisible)}`).pipe(Effect.map((rows) => rows.length > 0)))

/** A page of a profile's present favorites, newest first, each with its entity if still publicly visible. */
export const favoritePageRows = (
  profileUuid: string,
  after: { readonly key: string; readonly uuid: string } | undefined,
  limit: number
): Effect.Effect<ReadonlyArray<FavoriteListRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(columns)}, f.created_at::text AS position,
        (pr.uuid IS NOT NULL OR pu.uuid IS NOT NULL) AS available,
        coalesce(pr.name, pu.approved ->> 'title') AS title,
        pr.type AS profile_type, pr.avatar_url, pu.kind AS publication_kind
      FROM favorites f
      LEFT JOIN profiles pr ON f.entity_kind = 'profile' AND pr.uuid = f.entity_uuid AND pr.is_public AND pr.deleted_at IS NULL
      LEFT JOIN LATERAL (
        SELECT p.uuid, p.kind, p.approved FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid
        WHERE f.entity_kind = 'publication' AND p.uuid = f.entity_uuid AND ${sql.literal(publiclyVisible)}
      ) pu ON true
      WHERE f.profile_uuid = ${profileUuid} AND f.present
        ${after === undefined ? sql`` : sql`AND (f.created_at, f.uuid) < (${after.key}::timestamptz, ${after.uuid}::uuid)`}
      ORDER BY f.created_at DESC, f.uuid DESC LIMIT ${limit}`.pipe(Effect.flatMap(decodeList)))
