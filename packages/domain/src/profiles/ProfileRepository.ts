import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import type { NotFound, RevisionConflict } from "../kernel/ApiError.js"
import { updateAtRevision } from "../store/Revision.js"
import { newRoutingKey } from "../store/RoutingKey.js"
import { type ColumnValues, rowsDecoder, selectList } from "../store/Rows.js"
import { type ProfileData, ProfileType, StructuredContact } from "./Profile.js"

/**
 * `profiles` as the service reads it: the one module that reads and writes the table. The JSON
 * columns are read leniently (their shape, not the input bounds): what was stored is shown.
 */
export const ProfileRow = Schema.Struct({
  uuid: Schema.String,
  id: Schema.String,
  name: Schema.String,
  type: ProfileType,
  is_public: Schema.Boolean,
  show_contacts: Schema.Boolean,
  avatar_url: Schema.NullOr(Schema.String),
  about: Schema.String,
  categories: Schema.Array(Schema.String),
  contacts: Schema.String,
  networks: Schema.Array(Schema.Struct({ kind: Schema.String, url: Schema.String })),
  skills: Schema.Array(Schema.Struct({ name: Schema.String, years: Schema.optional(Schema.Number) })),
  structured_contacts: Schema.Array(Schema.Struct({ kind: StructuredContact.fields.kind, value: Schema.String })),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ProfileRow = typeof ProfileRow.Type

/** Columns written but not part of the row the service reads. */
type ProfileColumns = ColumnValues<typeof ProfileRow.Encoded & { readonly account_uuid: string; readonly deleted_at: Date }>

/** The row's SELECT list over alias `p`. */
export const profileRowColumns = selectList(ProfileRow, "p")

/**
 * Who may be read publicly (docs/decisions.md "Profiles"), over `p` and its account `a`
 * (LEFT JOIN: imported profiles have none): a live profile of a live account that chose to be
 * public, or that authors a publicly visible publication (approved, not hidden, not deleted), so
 * the author of what the catalog shows can be shown too, through the same allowlist (`publicView`).
 * A profile a moderator hid (`hide_profile`) is not shown as an author; its owner may still make
 * it public again.
 */
export const publiclyVisibleProfile = `p.deleted_at IS NULL AND a.deleted_at IS NULL AND (p.is_public OR p.hidden_by_moderation_at IS NULL AND EXISTS (
  SELECT 1 FROM publications x WHERE x.owner_profile_uuid = p.uuid AND x.approved IS NOT NULL AND NOT x.hidden AND x.deleted_at IS NULL))`

/**
 * The public SELECT list (with `a`, the account): an author who never made the profile public and
 * whose name is the email's local part (as sign-up named profiles before names were neutral) is
 * shown as «Автор», so publishing never reveals the address.
 */
export const publicProfileColumns = selectList(ProfileRow, "p", {
  name: `CASE WHEN NOT p.is_public AND a.email IS NOT NULL AND lower(p.name) = lower(split_part(a.email, '@', 1)) THEN 'Автор' ELSE p.name END`
})

/** Profile rows decoded (compiled once; the catalog reads every public profile). */
export const decodeProfileRows = rowsDecoder(ProfileRow)
const decoded = <E, R>(rows: Effect.Effect<ReadonlyArray<unknown>, E, R>) => Effect.flatMap(rows, decodeProfileRows)
const decodeUuid = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))
const decodeType = rowsDecoder(Schema.Struct({ type: ProfileType }))
const decodeId = rowsDecoder(Schema.Struct({ id: Schema.String }))
const decodeRevision = rowsDecoder(Schema.Struct({ revision: Schema.Number }))

const dataColumns = (data: ProfileData) => ({
  name: data.name,
  type: data.type,
  is_public: data.isPublic,
  show_contacts: data.showContacts,
  avatar_url: data.avatarUrl ?? null,
  about: data.about,
  categories: JSON.stringify(data.categories),
  contacts: data.contacts,
  networks: JSON.stringify(data.networks),
  skills: JSON.stringify(data.skills),
  structured_contacts: JSON.stringify(data.structuredContacts)
}) satisfies ProfileColumns

/** Inserts a profile of an account inside the caller's transaction and returns its uuid. */
export const insertProfileRow = (accountUuid: string, data: ProfileData): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const values: ProfileColumns = { id: newRoutingKey(), account_uuid: accountUuid, ...dataColumns(data) }
    return Effect.map(Effect.flatMap(sql`INSERT INTO profiles ${sql.insert(values)} RETURNING uuid`, decodeUuid), (rows) => rows[0]!.uuid)
  })

/** Replaces a profile's data at `expectedRevision`; returns the new revision. */
export const updateProfileData = (
  profileUuid: string,
  expectedRevision: number,
  data: ProfileData
): Effect.Effect<number, RevisionConflict | NotFound | SqlError, SqlClient.SqlClient> =>
  updateAtRevision({ table: "profiles", kind: "profile", uuid: profileUuid, expectedRevision, values: dataColumns(data) })

/** The account's live profiles, oldest first. */
export const liveProfilesOfAccount = (accountUuid: string): Effect.Effect<ReadonlyArray<ProfileRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decoded(sql`SELECT ${sql.literal(profileRowColumns)} FROM profiles p
      WHERE p.account_uuid = ${accountUuid} AND p.deleted_at IS NULL ORDER BY p.created_at, p.uuid`))

export const countLiveProfiles = (accountUuid: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(sql`SELECT count(*)::int AS n FROM profiles WHERE account_uuid = ${accountUuid} AND deleted_at IS NULL`, decodeCount)).pipe(
      Effect.map((rows) => rows[0]?.n ?? 0)
    )

/** The type of a live profile of the account (none: not its own or deleted), row-locked when `lock`. */
export const liveProfileType = (
  accountUuid: string,
  profileUuid: string,
  lock = false
): Effect.Effect<Option.Option<ProfileType>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT type FROM profiles
      WHERE uuid = ${profileUuid} AND account_uuid = ${accountUuid} AND deleted_at IS NULL${lock ? sql` FOR UPDATE` : sql``}`,
      decodeType
    ).pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.type))))

/** The live profile a signed-in account acts as: `preferredUuid` if still live, else its oldest. */
export const actingProfileUuid = (
  accountUuid: string,
  preferredUuid: string | null
): Effect.Effect<Option.Option<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`
      SELECT uuid FROM profiles WHERE account_uuid = ${accountUuid} AND deleted_at IS NULL
      ORDER BY (uuid = ${preferredUuid}) DESC NULLS LAST, created_at LIMIT 1`,
      decodeUuid
    ).pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]?.uuid))
    ))

/** Soft-deletes every live profile of an account (account deletion). */
export const deleteProfilesOfAccount = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE profiles SET deleted_at = now(), updated_at = now() WHERE account_uuid = ${accountUuid} AND deleted_at IS NULL`.pipe(
      Effect.asVoid
    ))

/** A publicly visible profile (`publiclyVisibleProfile`): public or a public author, live, of a live account (or imported, without one). */
export const publicProfileRow = (uuid: string): Effect.Effect<Option.Option<ProfileRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decoded(sql`SELECT ${sql.literal(publicProfileColumns)} FROM profiles p
      LEFT JOIN accounts a ON a.uuid = p.account_uuid
      WHERE p.uuid = ${uuid} AND ${sql.literal(publiclyVisibleProfile)}`).pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

/** A live profile of the same live account as the live profile `readerUuid`. */
export const sameAccountProfileRow = (
  readerUuid: string,
  profileUuid: string
): Effect.Effect<Option.Option<ProfileRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decoded(sql`SELECT ${sql.literal(profileRowColumns)} FROM profiles p
      JOIN profiles reader ON reader.uuid = ${readerUuid} AND reader.account_uuid = p.account_uuid AND reader.deleted_at IS NULL
      JOIN accounts a ON a.uuid = p.account_uuid AND a.deleted_at IS NULL
      WHERE p.uuid = ${profileUuid} AND p.deleted_at IS NULL`).pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

/** A profile's stable legacy id, deleted or not (`""` when there is no such profile). */
export const profileIdByUuid = (uuid: string): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(Effect.flatMap(sql`SELECT id FROM profiles WHERE uuid = ${uuid}`, decodeId), (rows) => rows[0]?.id ?? ""))

/** A moderator hides a profile (an upheld complaint, `hide_profile`): no longer public. Returns the new revision, none when absent. */
export const hideProfileRow = (uuid: string): Effect.Effect<Option.Option<number>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE profiles SET is_public = false, hidden_by_moderation_at = now(), revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid} AND deleted_at IS NULL RETURNING revision`,
      decodeRevision
    ).pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.revision))))
