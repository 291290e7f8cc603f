import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Forbidden, NotFound, type RequestConflict, type RevisionConflict } from "../api/ApiError.js"
import type { Actor, SessionActor } from "../api/Authentication.js"
import { insertProfile } from "../auth/Accounts.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { updateAtRevision } from "../store/Revision.js"
import { OwnProfile, type Profile, type ProfileData } from "./Profile.js"

const OwnProfileResultSchema = Schema.Struct({ profile: OwnProfile })

/** Ours: an account holds at most this many live profiles. */
export const maxProfilesPerAccount = 20

export interface ProfileRow {
  readonly uuid: string
  readonly id: string
  readonly name: string
  readonly type: Profile["type"]
  readonly is_public: boolean
  readonly show_contacts: boolean
  readonly avatar_url: string | null
  readonly about: string
  readonly categories: ReadonlyArray<string>
  readonly contacts: string
  readonly networks: Profile["networks"]
  readonly skills: Profile["skills"]
  readonly structured_contacts: Profile["structuredContacts"]
  readonly revision: number
  readonly created_at: Date
  readonly updated_at: Date
}

export const profileColumns = `p.uuid, p.id, p.name, p.type, p.is_public, p.show_contacts, p.avatar_url, p.about, p.categories,
  p.contacts, p.networks, p.skills, p.structured_contacts, p.revision, p.created_at, p.updated_at`

const common = (row: ProfileRow) => ({
  uuid: row.uuid,
  id: row.id,
  name: row.name,
  type: row.type,
  showContacts: row.show_contacts,
  ...(row.avatar_url === null ? {} : { avatarUrl: row.avatar_url }),
  about: row.about,
  categories: row.categories,
  networks: row.networks,
  skills: row.skills
})

/** The public view: an allowlist of fields; contacts only when the owner chose to show them. */
export const publicView = (row: ProfileRow): Profile => ({
  ...common(row),
  contacts: row.show_contacts ? row.contacts : "",
  structuredContacts: row.show_contacts ? row.structured_contacts : []
})

const ownView = (row: ProfileRow, currentUuid: string): OwnProfile => ({
  ...common(row),
  contacts: row.contacts,
  structuredContacts: row.structured_contacts,
  isPublic: row.is_public,
  current: row.uuid === currentUuid,
  revision: row.revision,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const ownRows = (accountUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<ProfileRow>`SELECT ${sql.literal(profileColumns)} FROM profiles p
      WHERE p.account_uuid = ${accountUuid} AND p.deleted_at IS NULL ORDER BY p.created_at, p.uuid`)

const notFound = () => new NotFound({ message: "No such profile of this account" })

export const ownProfiles = (actor: Actor) =>
  Effect.map(ownRows(actor.accountUuid), (rows) => {
    const profiles = rows.map((row) => ownView(row, actor.profileUuid))
    return { profile: profiles.find((p) => p.current)!, profiles }
  })

const ownProfile = (actor: Actor, profileUuid: string) =>
  Effect.flatMap(ownRows(actor.accountUuid), (rows) => {
    const row = rows.find((r) => r.uuid === profileUuid)
    return row === undefined ? Effect.fail(notFound()) : Effect.succeed(ownView(row, actor.profileUuid))
  })

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
})

/** Replaces a profile's data at `expectedRevision`, once per `requestUuid`, and records `profile.updated`. */
export const updateProfile = (
  actor: Actor,
  input: { readonly requestUuid: string; readonly profileUuid?: string | undefined; readonly expectedRevision: number; readonly data: ProfileData }
): Effect.Effect<{ readonly profile: OwnProfile }, NotFound | RevisionConflict | RequestConflict | SqlError, SqlClient.SqlClient> => {
  const profileUuid = input.profileUuid ?? actor.profileUuid
  return idempotent(
    { scope: actor.accountUuid, operationId: "profiles.update", requestUuid: input.requestUuid, request: input, result: OwnProfileResultSchema },
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owned = yield* sql`SELECT 1 FROM profiles WHERE uuid = ${profileUuid} AND account_uuid = ${actor.accountUuid} AND deleted_at IS NULL FOR UPDATE`
      if (owned.length === 0) return yield* notFound()
      const values = dataColumns(input.data)
      const revision = yield* updateAtRevision({
        table: "profiles",
        kind: "profile",
        uuid: profileUuid,
        expectedRevision: input.expectedRevision,
        // JSON columns take their text as an untyped parameter, which Postgres reads as jsonb.
        values
      })
      yield* appendEvent({
        type: "profile.updated",
        aggregate: { kind: "profile", uuid: profileUuid, revision },
        data: { objectUuid: profileUuid, status: "updated" },
        context: { profileUuid: actor.profileUuid }
      })
      return { profile: yield* ownProfile(actor, profileUuid) }
    })
  )
}


/** Adds a profile to the account (at most `maxProfilesPerAccount`), once per `requestUuid`. */
export const createProfile = (
  actor: Actor,
  input: { readonly requestUuid: string; readonly data: ProfileData }
): Effect.Effect<{ readonly profile: OwnProfile }, Forbidden | RequestConflict | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { scope: actor.accountUuid, operationId: "profiles.create", requestUuid: input.requestUuid, request: input, result: OwnProfileResultSchema },
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT 1 FROM accounts WHERE uuid = ${actor.accountUuid} FOR UPDATE`
      const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM profiles WHERE account_uuid = ${actor.accountUuid} AND deleted_at IS NULL`
      if ((count?.n ?? 0) >= maxProfilesPerAccount) {
        return yield* new Forbidden({ message: `An account holds at most ${maxProfilesPerAccount} profiles` })
      }
      const uuid = yield* insertProfile(actor.accountUuid, input.data)
      return { profile: yield* Effect.orDie(ownProfile(actor, uuid)) }
    })
  )

/** Makes another live profile of the account the acting one, for this session and as the default of new ones. */
export const switchProfile = (actor: SessionActor, profileUuid: string): Effect.Effect<void, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      const owned = yield* sql`SELECT 1 FROM profiles WHERE uuid = ${profileUuid} AND account_uuid = ${actor.accountUuid} AND deleted_at IS NULL`
      if (owned.length === 0) return yield* notFound()
      yield* sql`UPDATE sessions SET profile_uuid = ${profileUuid} WHERE uuid = ${actor.sessionUuid}`
      yield* sql`UPDATE accounts SET current_profile_uuid = ${profileUuid}, updated_at = now() WHERE uuid = ${actor.accountUuid}`
    }))
  })

/** A profile as the public sees it: absent, private and deleted all read as not found. */
export const publicProfile = (uuid: string): Effect.Effect<Option.Option<Profile>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<ProfileRow>`SELECT ${sql.literal(profileColumns)} FROM profiles p
      LEFT JOIN accounts a ON a.uuid = p.account_uuid
      WHERE p.uuid = ${uuid} AND p.is_public AND p.deleted_at IS NULL AND a.deleted_at IS NULL`).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), publicView))
    )

/**
 * A profile in its owner's view as another profile of the same account reads it (a webhook
 * endpoint of `readerUuid` in payload mode `current`): the view `profiles.get_own` gives, with
 * `current` true for the reader itself. A profile of another account, a deleted profile and a
 * profile of a deleted account read as none.
 */
export const ownProfileView = (
  readerUuid: string,
  profileUuid: string
): Effect.Effect<Option.Option<OwnProfile>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<ProfileRow>`SELECT ${sql.literal(profileColumns)} FROM profiles p
      JOIN profiles reader ON reader.uuid = ${readerUuid} AND reader.account_uuid = p.account_uuid AND reader.deleted_at IS NULL
      JOIN accounts a ON a.uuid = p.account_uuid AND a.deleted_at IS NULL
      WHERE p.uuid = ${profileUuid} AND p.deleted_at IS NULL`).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => ownView(row, readerUuid)))
    )

/** A profile's stable legacy id (`""` when the profile is gone). */
export const profileIdOf = (uuid: string): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string }>`SELECT id FROM profiles WHERE uuid = ${uuid}`, (rows) => rows[0]?.id ?? ""))
