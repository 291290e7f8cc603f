import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { ProfileData } from "../profiles/Profile.js"
import { newRoutingKey } from "../store/RoutingKey.js"
import { ensurePersonalKey, revokeAccountKeys } from "../keys/Keys.js"
import { lockSubject } from "./RateLimit.js"

/** A first name for a new individual profile: the address's local part, which the owner can change. */
const nameFrom = (email: string): string => email.split("@")[0]!.slice(0, 160) || "Профиль"

/** Inserts a profile of an account inside the caller's transaction and returns its uuid. */
export const insertProfile = (accountUuid: string, data: ProfileData): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ uuid: string }>`
      INSERT INTO profiles (id, account_uuid, name, type, is_public, show_contacts, avatar_url, about, categories,
        contacts, networks, skills, structured_contacts)
      VALUES (${newRoutingKey()}, ${accountUuid}, ${data.name}, ${data.type}, ${data.isPublic}, ${data.showContacts},
        ${data.avatarUrl ?? null}, ${data.about}, ${JSON.stringify(data.categories)}::jsonb, ${data.contacts},
        ${JSON.stringify(data.networks)}::jsonb, ${JSON.stringify(data.skills)}::jsonb, ${JSON.stringify(data.structuredContacts)}::jsonb)
      RETURNING uuid`
    return row!.uuid
  })

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
    const sql = yield* SqlClient.SqlClient
    yield* lockSubject(`account:${email}`)
    const [existing] = yield* sql<{ uuid: string; current_profile_uuid: string | null }>`
      SELECT uuid, current_profile_uuid FROM accounts WHERE email = ${email} AND deleted_at IS NULL`
    const accountUuid = existing?.uuid ?? (yield* sql<{ uuid: string }>`INSERT INTO accounts (email) VALUES (${email}) RETURNING uuid`)[0]!.uuid
    const [profile] = yield* sql<{ uuid: string }>`
      SELECT uuid FROM profiles WHERE account_uuid = ${accountUuid} AND deleted_at IS NULL
      ORDER BY (uuid = ${existing?.current_profile_uuid ?? null}) DESC NULLS LAST, created_at LIMIT 1`
    const profileUuid = profile?.uuid ?? (yield* insertProfile(accountUuid, {
      name: nameFrom(email),
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
      yield* sql`UPDATE accounts SET current_profile_uuid = ${profileUuid}, updated_at = now() WHERE uuid = ${accountUuid}`
    }
    // Every account has its personal key (spec); made here once, without a secret until shown.
    yield* ensurePersonalKey(accountUuid)
    return { accountUuid, email, profileUuid }
  })

/** Soft-deletes an account: its profiles and sessions go with it; the address is free for a new sign-up. */
export const deleteAccount = (accountUuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const deleted = yield* sql`UPDATE accounts SET deleted_at = now(), updated_at = now(), revision = revision + 1
        WHERE uuid = ${accountUuid} AND deleted_at IS NULL RETURNING uuid`
      if (deleted.length === 0) return false
      yield* sql`UPDATE profiles SET deleted_at = now(), updated_at = now() WHERE account_uuid = ${accountUuid} AND deleted_at IS NULL`
      yield* sql`UPDATE sessions SET revoked_at = now() WHERE account_uuid = ${accountUuid} AND revoked_at IS NULL`
      yield* revokeAccountKeys(accountUuid)
      return true
    }))
  })

/** For `birzha accounts delete <email>`: the live account of an address. */
export const liveAccountByEmail = (email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ uuid: string }>`SELECT uuid FROM accounts WHERE email = ${email.trim().toLowerCase()} AND deleted_at IS NULL`).pipe(
      Effect.map((rows) => rows[0]?.uuid)
    )
