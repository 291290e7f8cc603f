import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Forbidden, NotFound, type RequestConflict, type RevisionConflict } from "../kernel/ApiError.js"
import type { Actor, SessionActor } from "../kernel/Authentication.js"
import { actAsProfile } from "../auth/Accounts.js"
import { lockAccountRow } from "../auth/AccountRepository.js"
import { customerAliasesOf } from "../reviews/CustomerAliasRepository.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import {
  countLiveProfiles,
  insertProfileRow,
  liveProfilesOfAccount,
  liveProfileType,
  profileIdByUuid,
  type ProfileRow,
  publicProfileRow,
  sameAccountProfileRow,
  updateProfileData
} from "./ProfileRepository.js"
import { OwnProfile, type Profile, type ProfileData } from "./Profile.js"

const OwnProfileResultSchema = Schema.Struct({ profile: OwnProfile })

/** Ours: an account holds at most this many live profiles. */
export const maxProfilesPerAccount = 20

export type { ProfileRow }

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

/**
 * The public view: an allowlist of fields; contacts only when the owner made the profile public
 * and chose to show them. A private profile read publicly because it authors a visible
 * publication shows neither its contacts nor its networks.
 */
export const publicView = (row: ProfileRow): Profile => {
  const contacts = row.is_public && row.show_contacts
  return {
    ...common(row),
    showContacts: contacts,
    networks: row.is_public ? row.networks : [],
    contacts: contacts ? row.contacts : "",
    structuredContacts: contacts ? row.structured_contacts : []
  }
}

const ownView = (row: ProfileRow, currentUuid: string, aliases: ReadonlyMap<string, string>): OwnProfile => {
  const alias = aliases.get(row.uuid)
  return {
    ...common(row),
    contacts: row.contacts,
    structuredContacts: row.structured_contacts,
    isPublic: row.is_public,
    current: row.uuid === currentUuid,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(alias === undefined ? {} : { customerAlias: alias })
  }
}

/** The account's live profiles with their customer aliases. */
const ownRows = (accountUuid: string) =>
  Effect.flatMap(liveProfilesOfAccount(accountUuid), (rows) =>
    Effect.map(customerAliasesOf(rows.map((row) => row.uuid)), (aliases) => ({ rows, aliases })))

const notFound = () => new NotFound({ message: "No such profile of this account" })

export const ownProfiles = (actor: Actor) =>
  Effect.map(ownRows(actor.accountUuid), ({ aliases, rows }) => {
    const profiles = rows.map((row) => ownView(row, actor.profileUuid, aliases))
    return { profile: profiles.find((p) => p.current)!, profiles }
  })

const ownProfile = (actor: Actor, profileUuid: string) =>
  Effect.flatMap(ownRows(actor.accountUuid), ({ aliases, rows }) => {
    const row = rows.find((r) => r.uuid === profileUuid)
    return row === undefined ? Effect.fail(notFound()) : Effect.succeed(ownView(row, actor.profileUuid, aliases))
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
      const owned = yield* liveProfileType(actor.accountUuid, profileUuid, true)
      if (Option.isNone(owned)) return yield* notFound()
      const revision = yield* updateProfileData(profileUuid, input.expectedRevision, input.data)
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
      yield* lockAccountRow(actor.accountUuid)
      if ((yield* countLiveProfiles(actor.accountUuid)) >= maxProfilesPerAccount) {
        return yield* new Forbidden({ message: `An account holds at most ${maxProfilesPerAccount} profiles` })
      }
      const uuid = yield* insertProfileRow(actor.accountUuid, input.data)
      return { profile: yield* Effect.orDie(ownProfile(actor, uuid)) }
    })
  )

/** Makes another live profile of the account the acting one, for this session and as the default of new ones. */
export const switchProfile = (actor: SessionActor, profileUuid: string): Effect.Effect<void, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      const owned = yield* liveProfileType(actor.accountUuid, profileUuid)
      if (Option.isNone(owned)) return yield* notFound()
      yield* actAsProfile(actor, profileUuid)
    }))
  })

/** A profile as the public sees it: absent, private and deleted all read as not found. */
export const publicProfile = (uuid: string): Effect.Effect<Option.Option<Profile>, SqlError, SqlClient.SqlClient> =>
  Effect.map(publicProfileRow(uuid), Option.map(publicView))

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
  Effect.flatMap(sameAccountProfileRow(readerUuid, profileUuid), Option.match({
    onNone: () => Effect.succeedNone,
    onSome: (row) => Effect.map(customerAliasesOf([row.uuid]), (aliases) => Option.some(ownView(row, readerUuid, aliases)))
  }))

/** A profile's stable legacy id (`""` when the profile is gone). */
export const profileIdOf = (uuid: string): Effect.Effect<string, SqlError, SqlClient.SqlClient> => profileIdByUuid(uuid)
