import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Redacted, Schema } from "effect"
import { Forbidden, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../kernel/ApiError.js"
import type { KeyActor, SessionActor } from "../kernel/Authentication.js"
import { keyedHash, ServerSecret } from "../auth/ServerSecret.js"
import { lockAccountRow } from "../auth/AccountRepository.js"
import { sessionSignedInWithin } from "../auth/Sessions.js"
import { liveProfileType } from "../profiles/ProfileRepository.js"
import { idempotent } from "../store/Idempotency.js"
import { requireRevision } from "../store/Revision.js"
import { type Key, type KeyCreate, keyLimits, KeyResult, type KeyStatus, type KeyUpdate } from "./Key.js"
import { InvalidScope, ReauthenticationRequired } from "./KeyErrors.js"
import {
  countLiveKeys,
  insertKey,
  insertPersonalKey,
  keyActorByHash,
  keyOfAccount,
  type KeyRow,
  keysOfAccount,
  revokeKeys,
  storeSecret,
  touchLastUsed,
  updateSettings
} from "./KeyRepository.js"
import { isWellFormedKeySecret, keySecretHint, newKeySecret } from "./KeySecret.js"
import { allScopes, isGrantableScope } from "./Scopes.js"

const purpose = "api_key"

const statusOf = (row: KeyRow): KeyStatus =>
  row.revoked_at !== null ? "revoked" : row.issued_at === null ? "not_issued" : row.expired ? "expired" : "active"

const toKey = (row: KeyRow): Key => ({
  uuid: row.uuid,
  kind: row.kind,
  name: row.name,
  profile: { uuid: row.profile_uuid, name: row.profile_name, type: row.profile_type },
  scopes: row.scopes,
  httpEnabled: row.http_enabled,
  mcpEnabled: row.mcp_enabled,
  lifetimeDays: row.lifetime_days,
  status: statusOf(row),
  ...(row.secret_hint === null ? {} : { secretHint: row.secret_hint }),
  ...(row.issued_at === null ? {} : { issuedAt: row.issued_at }),
  ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
  ...(row.last_used_at === null ? {} : { lastUsedAt: row.last_used_at }),
  ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at }),
  revision: row.revision,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const ownKey = (actor: SessionActor, keyUuid: string, lock = false) =>
  Effect.flatMap(keyOfAccount(actor.accountUuid, keyUuid, lock), Option.match({
    onNone: () => Effect.fail(new NotFound({ message: `No key ${keyUuid} of this account` })),
    onSome: Effect.succeed
  }))

/**
 * Makes sure the account has its live personal key (spec: one for every account), bound to its
 * first individual profile, with the default scope (`profiles:read`), HTTP only, 90 days. It has
 * no secret until its owner first shows it (a reissue), so nobody ever held the one made here.
 * Idempotent; runs in the caller's transaction (sign-in) or alone (the key list).
 */
export const ensurePersonalKey = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  insertPersonalKey(accountUuid)

/** Whether the session signed in less than 10 minutes ago (the sessions row's `created_at`): secrets are shown only then. */
export const signedInRecently = (actor: SessionActor): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  sessionSignedInWithin(actor, keyLimits.recentSignInSeconds)

const requireRecentSignIn = (actor: SessionActor) =>
  Effect.gen(function*() {
    if (!(yield* signedInRecently(actor))) {
      return yield* new ReauthenticationRequired({
        message: "A key's secret is shown only within 10 minutes of signing in: sign in again, then retry"
      })
    }
  })

/** Checks and normalises chosen scopes: each must exist in the catalog and be grantable; sorted, each once. */
export const validateScopes = (scopes: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>, InvalidScope> => {
  const unknown = scopes.filter((scope) => !allScopes.includes(scope))
  if (unknown.length > 0) {
    return Effect.fail(new InvalidScope({ message: `No such scope: ${unknown.join(", ")} (GET /api/v1/scopes lists them)` }))
  }
  const reserved = scopes.filter((scope) => !isGrantableScope(scope))
  if (reserved.length > 0) {
    return Effect.fail(new InvalidScope({ message: `A key may never hold ${reserved.join(", ")}: administrative and key management actions stay in the browser` }))
  }
  return Effect.succeed([...new Set(scopes)].sort())
}

/** Stores a new secret for a live key (its lifetime starts again); the previous secret stops working at once. */
const issueSecret = (keyUuid: string, bumpRevision: boolean) =>
  Effect.gen(function*() {
    const secret = yield* ServerSecret
    const value = newKeySecret()
    const raw = Redacted.value(value)
    const stored = yield* storeSecret(keyUuid, { hash: keyedHash(secret, purpose, raw), hint: keySecretHint(raw) }, bumpRevision)
    if (!stored) return yield* new InvalidState({ message: "A revoked key cannot be given a new secret" })
    return value
  })

export interface IssuedKey {
  readonly key: Key
  readonly secret: Redacted.Redacted<string>
}

const KeyCreated = Schema.Struct({ keyUuid: Schema.UUID })

/**
 * Creates an application (or company) key with its first secret. Idempotent by `requestUuid` in
 * the account's key space, but the secret is never stored to be replayed: a retry returns the same
 * key with a freshly issued secret (the one of the lost answer stops working).
 */
export const createKey = (
  actor: SessionActor,
  input: KeyCreate
): Effect.Effect<
  IssuedKey,
  ReauthenticationRequired | InvalidScope | NotFound | Forbidden | InvalidState | RequestConflict | SqlError,
  SqlClient.SqlClient | ServerSecret
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* requireRecentSignIn(actor)
    const scopes = yield* validateScopes(input.scopes)
    let issued: Redacted.Redacted<string> | undefined
    const { keyUuid } = yield* idempotent(
      { scope: actor.accountUuid, operationId: "keys.create", requestUuid: input.requestUuid, request: input, result: KeyCreated },
      Effect.gen(function*() {
        // Serialises concurrent creates of one account, so the live-key bound holds.
        yield* lockAccountRow(actor.accountUuid)
        if ((yield* countLiveKeys(actor.accountUuid)) >= keyLimits.liveKeysPerAccount) {
          return yield* new Forbidden({ message: `An account holds at most ${keyLimits.liveKeysPerAccount} live keys; revoke one first` })
        }
        const profileUuid = input.profileUuid ?? actor.profileUuid
        const profileType = yield* liveProfileType(actor.accountUuid, profileUuid)
        if (Option.isNone(profileType)) return yield* new NotFound({ message: `No profile ${profileUuid} of this account` })
        const uuid = yield* insertKey({
          accountUuid: actor.accountUuid,
          profileUuid,
          kind: profileType.value === "Компания" ? "company" : "application",
          name: input.name.trim(),
          scopes,
          httpEnabled: input.httpEnabled,
          mcpEnabled: input.mcpEnabled,
          lifetimeDays: input.lifetimeDays ?? keyLimits.lifetimeDaysDefault
        })
        issued = yield* issueSecret(uuid, false)
        return { keyUuid: uuid }
      })
    )
    const secret = issued ?? (yield* sql.withTransaction(issueSecret(keyUuid, true)))
    return { key: toKey(yield* ownKey(actor, keyUuid)), secret }
  })

/** A new secret for a key (also the first one of the automatic personal key); the previous one stops working. */
export const reissueKey = (
  actor: SessionActor,
  keyUuid: string
): Effect.Effect<IssuedKey, ReauthenticationRequired | NotFound | InvalidState | SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* requireRecentSignIn(actor)
    const secret = yield* sql.withTransaction(Effect.gen(function*() {
      const row = yield* ownKey(actor, keyUuid, true)
      if (row.revoked_at !== null) return yield* new InvalidState({ message: "A revoked key cannot be given a new secret" })
      return yield* issueSecret(keyUuid, true)
    }))
    return { key: toKey(yield* ownKey(actor, keyUuid)), secret }
  })

/** Replaces a key's name, scopes and channels at `expectedRevision`; idempotent by `requestUuid`. Applies to the next request. */
export const updateKey = (
  actor: SessionActor,
  keyUuid: string,
  input: KeyUpdate
): Effect.Effect<{ readonly key: Key }, InvalidScope | NotFound | InvalidState | RevisionConflict | RequestConflict | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const scopes = yield* validateScopes(input.scopes)
    return yield* idempotent(
      { scope: actor.accountUuid, operationId: "keys.update", requestUuid: input.requestUuid, request: { keyUuid, ...input }, result: KeyResult },
      Effect.gen(function*() {
        const row = yield* ownKey(actor, keyUuid, true)
        if (row.revoked_at !== null) return yield* new InvalidState({ message: "A revoked key cannot be changed" })
        yield* requireRevision("key", row.revision, input.expectedRevision)
        yield* updateSettings(keyUuid, { name: input.name.trim(), scopes, httpEnabled: input.httpEnabled, mcpEnabled: input.mcpEnabled })
        return { key: toKey(yield* ownKey(actor, keyUuid)) }
      })
    )
  })

/**
 * Revokes a key at once and for good: the next request with it answers 401. Revoking a revoked key
 * returns it unchanged. Later features join on `api_keys.revoked_at` to stop what the key started.
 */
export const revokeKey = (actor: SessionActor, keyUuid: string): Effect.Effect<{ readonly key: Key }, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    yield* revokeKeys(actor.accountUuid, keyUuid)
    return { key: toKey(yield* ownKey(actor, keyUuid)) }
  })

/** Revoked keys stay listed this long, so the owner sees what stopped working. */
const revokedKeptDays = 30

/** The account's keys: live ones and those revoked in the last 30 days; the personal key first. */
export const listKeys = (
  actor: SessionActor
): Effect.Effect<{ readonly items: ReadonlyArray<Key>; readonly recentSignIn: boolean }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    yield* ensurePersonalKey(actor.accountUuid)
    const rows = yield* keysOfAccount(actor.accountUuid, revokedKeptDays)
    return { items: rows.map(toKey), recentSignIn: yield* signedInRecently(actor) }
  })

/** `last_used_at` is refreshed at most hourly, so verifying a key stays one read on most requests. */
const lastUsedResolutionSeconds = 3600

/**
 * The actor behind a bearer secret, if the key is usable: well formed with a valid checksum (else
 * no lookup at all), known by its keyed hash, issued, not expired, not revoked, and its account and
 * profile not deleted. One indexed read, like a session. Channel and scope are checked by the
 * caller (`authorizeKey`).
 */
export const actorForKey = (
  secret: Redacted.Redacted<string>,
  via: KeyActor["via"] = "key"
): Effect.Effect<Option.Option<KeyActor>, SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const raw = Redacted.value(secret)
    if (!isWellFormedKeySecret(raw)) return Option.none()
    const sql = yield* SqlClient.SqlClient
    const serverSecret = yield* ServerSecret
    const found = yield* keyActorByHash(sql, keyedHash(serverSecret, purpose, raw), lastUsedResolutionSeconds)
    if (Option.isNone(found)) return Option.none()
    const row = found.value
    if (row.stale) yield* touchLastUsed(sql, row.key_uuid)
    return Option.some<KeyActor>({
      accountUuid: row.account_uuid,
      email: row.email,
      profileUuid: row.profile_uuid,
      profileName: row.name,
      profileType: row.type,
      expiresAt: row.expires_at,
      via,
      keyUuid: row.key_uuid,
      keyName: row.key_name,
      keyKind: row.kind,
      scopes: row.scopes,
      httpEnabled: row.http_enabled,
      mcpEnabled: row.mcp_enabled
    })
  })

/** Revokes every live key of an account (account deletion), so what they started stops too. */
export const revokeAccountKeys = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  revokeKeys(accountUuid)
