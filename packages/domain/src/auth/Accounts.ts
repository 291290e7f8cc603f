import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import type { SessionActor } from "../kernel/Authentication.js"
import { ensurePersonalKey, revokeAccountKeys } from "../keys/Keys.js"
import type { ProfileData } from "../profiles/Profile.js"
import { actingProfileUuid, deleteProfilesOfAccount, insertProfileRow, liveProfilesOfAccount } from "../profiles/ProfileRepository.js"
import { closeRelationsOf } from "../relations/Relations.js"
import {
  insertAccount,
  liveAccountRow,
  setCurrentProfile,
  softDeleteAccount
} from "./AccountRepository.js"
import { lockSubject } from "./RateLimit.js"
import { revokeAccountSessions, setSessionProfile } from "./SessionRepository.js"

/**
 * The name of the individual profile a first sign-in makes: neutral, never taken from the
 * address. A profile's name is shown to everyone it deals with (comments, reviews, threads, course
 * staff lists), so a name made from the local part would reveal the address to all of them.
 */
const firstProfileName = "Профиль"

/** Inserts a profile of an account inside the caller's transaction and returns its uuid. */
export const insertProfile = (accountUuid: string, data: ProfileData): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  insertProfileRow(accountUuid, data)

export interface SignedInAccount {
  readonly accountUuid: string
  readonly email: string
  readonly profileUuid: string
}

/**
 * The live account of a verified address, created with a private individual profile on first
 * sign-in, inside the caller's transaction. Profiles imported with the same address are never
 * claimed: only profiles whose `account_uuid` is this account's count.
 */
export const accountForVerifiedEmail = (email: string): Effect.Effect<SignedInAccount, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    yield* lockSubject(`account:${email}`)
    const existing = Option.getOrUndefined(yield* liveAccountRow(email))
    const accountUuid = existing?.uuid ?? (yield* insertAccount(email))
    const profile = yield* actingProfileUuid(accountUuid, existing?.current_profile_uuid ?? null)
    const profileUuid = Option.getOrUndefined(profile) ?? (yield* insertProfileRow(accountUuid, {
      name: firstProfileName,
      type: "Физлицо",
      isPublic: false,
      showContacts: false,
      about: "",
      categories: [],
      contacts: "",
      networks: [],
      skills: [],
      structuredContacts: []
    }))
    if (existing?.current_profile_uuid !== profileUuid) {
      yield* setCurrentProfile(accountUuid, profileUuid)
    }
    // Every account has its personal key (spec); made here once, without a secret until shown.
    yield* ensurePersonalKey(accountUuid)
    return { accountUuid, email, profileUuid }
  })

/**
 * Soft-deletes an account: its profiles and sessions go with it; the address is free for a new
 * sign-up. Its profiles' open relations are closed in the same transaction, each with its event.
 */
export const deleteAccount = (accountUuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const profiles = yield* liveProfilesOfAccount(accountUuid)
      if (!(yield* softDeleteAccount(accountUuid))) return false
      yield* closeRelationsOf(profiles.map((profile) => profile.uuid))
      yield* deleteProfilesOfAccount(accountUuid)
      yield* revokeAccountSessions(accountUuid)
      yield* revokeAccountKeys(accountUuid)
      return true
    }))
  })

/** For `birzha accounts delete <email>`: the live account of an address. */
export const liveAccountByEmail = (email: string): Effect.Effect<string | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.map(liveAccountRow(email.trim().toLowerCase()), (row) => Option.getOrUndefined(row)?.uuid)

/** Makes a profile (already checked to be the account's own and live) the session's acting one and the account's default. */
export const actAsProfile = (actor: SessionActor, profileUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.zipRight(setSessionProfile(actor.sessionUuid, profileUuid), setCurrentProfile(actor.accountUuid, profileUuid))
