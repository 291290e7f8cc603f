import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Redacted, Schema } from "effect"
import { Forbidden, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../api/ApiError.js"
import type { KeyActor, SessionActor } from "../api/Authentication.js"
import { keyedHash, ServerSecret } from "../auth/ServerSecret.js"
import type { ProfileType } from "../profiles/Profile.js"
import { idempotent } from "../store/Idempotency.js"
import { requireRevision } from "../store/Revision.js"
import { type Key, type KeyCreate, type KeyKind, keyLimits, KeyResult, type KeyStatus, type KeyUpdate } from "./Key.js"
import { InvalidScope, ReauthenticationRequired } from "./KeyErrors.js"
import { isWellFormedKeySecret, keySecretHint, newKeySecret } from "./KeySecret.js"
import { allScopes, isGrantableScope, personalKeyDefaultScopes } from "./Scopes.js"

const purpose = "api_key"

interface KeyRow {
  readonly uuid: string
  readonly kind: KeyKind
  readonly name: string
  readonly profile_uuid: string
  readonly profile_name: string
  readonly profile_type: ProfileType
  readonly scopes: unknown
  readonly http_enabled: boolean
  readonly mcp_enabled: boolean
  readonly lifetime_days: number
  readonly secret_hint: string | null
  readonly issued_at: Date | null
  readonly expires_at: Date | null
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
  readonly expired: boolean
  readonly revision: number
  readonly created_at: Date
  readonly updated_at: Date
}

// pg and PGlite both parse jsonb; a driver handing back text still reads the same.
const scopesOf = (value: unknown): ReadonlyArray<string> => {
  const parsed: unknown = typeof value === "string" ? JSON.parse(value) : value
  return Array.isArray(parsed) ? parsed.filter((s): s is string => typeof s === "string") : []
}

const statusOf = (row: KeyRow): KeyStatus =>
  row.revoked_at !== null ? "revoked" : row.issued_at === null ? "not_issued" : row.expired ? "expired" : "active"

const toKey = (row: KeyRow): Key => ({
  uuid: row.uuid,
  kind: row.kind,
  name: row.name,
  profile: { uuid: row.profile_uuid, name: row.profile_name, type: row.profile_type },
  scopes: scopesOf(row.scopes),
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

const selectKeys = (sql: SqlClient.SqlClient, where: ReturnType<SqlClient.SqlClient["and"]>, lock = false) =>
  sql<KeyRow>`
    SELECT k.uuid, k.kind, k.name, k.profile_uuid, p.name AS profile_name, p.type AS profile_type, k.scopes,
      k.http_enabled, k.mcp_enabled, k.lifetime_days, k.secret_hint, k.issued_at, k.expires_at, k.last_used_at,
      k.revoked_at, coalesce(k.expires_at <= now(), false) AS expired, k.revision, k.created_at, k.updated_at
    FROM api_keys k JOIN profiles p ON p.uuid = k.profile_uuid
    WHERE ${where}
    ORDER BY (k.kind = 'personal') DESC, k.created_at, k.uuid
    ${lock ? sql`FOR UPDATE OF k` : sql``}`

const ownKey = (actor: SessionActor, keyUuid: string, lock = false) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* selectKeys(sql, sql.and([sql`k.uuid = ${keyUuid}`, sql`k.account_uuid = ${actor.accountUuid}`]), lock)
    if (row === undefined) return yield* new NotFound({ message: `No key ${keyUuid} of this account` })
    return row
  })

/**
 * Makes sure the account has its live personal key (spec: one for every account), bound to its
 * first individual profile, with the default scope (`profiles:read`), HTTP only, 90 days. It has
 * no secret until its owner first shows it (a reissue), so nobody ever held the one made here.
 * Idempotent; runs in the caller's transaction (sign-in) or alone (the key list).
 */
export const ensurePersonalKey = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO api_keys (account_uuid, profile_uuid, kind, name, scopes, http_enabled, mcp_enabled, lifetime_days)
      SELECT ${accountUuid}, p.uuid, 'personal', 'Personal key', ${JSON.stringify(personalKeyDefaultScopes)}::jsonb,
        true, false, ${keyLimits.lifetimeDaysDefault}
      FROM profiles p WHERE p.account_uuid = ${accountUuid} AND p.deleted_at IS NULL
      ORDER BY (p.type = 'Компания'), p.created_at LIMIT 1
      ON CONFLICT (account_uuid) WHERE kind = 'personal' AND revoked_at IS NULL DO NOTHING`.pipe(Effect.asVoid))

/** Whether the session signed in less than 10 minutes ago (the sessions row's `created_at`): secrets are shown only then. */
export const signedInRecently = (actor: SessionActor): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ recent: boolean }>`
      SELECT created_at > now() - make_interval(secs => ${keyLimits.recentSignInSeconds}) AS recent
      FROM sessions WHERE uuid = ${actor.sessionUuid}`).pipe(Effect.map((rows) => rows[0]?.recent === true))

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
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const value = newKeySecret()
    const raw = Redacted.value(value)
    const updated = yield* sql`
      UPDATE api_keys SET secret_hash = ${keyedHash(secret, purpose, raw)}, secret_hint = ${keySecretHint(raw)},
        issued_at = now(), expires_at = now() + make_interval(days => lifetime_days),
        revision = revision + ${bumpRevision ? 1 : 0}, updated_at = now()
      WHERE uuid = ${keyUuid} AND revoked_at IS NULL
      RETURNING uuid`
    if (updated.length === 0) return yield* new InvalidState({ message: "A revoked key cannot be given a new secret" })
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
        yield* sql`SELECT 1 FROM accounts WHERE uuid = ${actor.accountUuid} FOR UPDATE`
        const [count] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM api_keys WHERE account_uuid = ${actor.accountUuid} AND revoked_at IS NULL`
        if ((count?.n ?? 0) >= keyLimits.liveKeysPerAccount) {
          return yield* new Forbidden({ message: `An account holds at most ${keyLimits.liveKeysPerAccount} live keys; revoke one first` })
        }
        const profileUuid = input.profileUuid ?? actor.profileUuid
        const [profile] = yield* sql<{ type: ProfileType }>`
          SELECT type FROM profiles WHERE uuid = ${profileUuid} AND account_uuid = ${actor.accountUuid} AND deleted_at IS NULL`
        if (profile === undefined) return yield* new NotFound({ message: `No profile ${profileUuid} of this account` })
        const [row] = yield* sql<{ uuid: string }>`
          INSERT INTO api_keys (account_uuid, profile_uuid, kind, name, scopes, http_enabled, mcp_enabled, lifetime_days)
          VALUES (${actor.accountUuid}, ${profileUuid}, ${profile.type === "Компания" ? "company" : "application"},
            ${input.name.trim()}, ${JSON.stringify(scopes)}::jsonb, ${input.httpEnabled}, ${input.mcpEnabled},
            ${input.lifetimeDays ?? keyLimits.lifetimeDaysDefault})
          RETURNING uuid`
        issued = yield* issueSecret(row!.uuid, false)
        return { keyUuid: row!.uuid }
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
    const sql = yield* SqlClient.SqlClient
    const scopes = yield* validateScopes(input.scopes)
    return yield* idempotent(
      { scope: actor.accountUuid, operationId: "keys.update", requestUuid: input.requestUuid, request: { keyUuid, ...input }, result: KeyResult },
      Effect.gen(function*() {
        const row = yield* ownKey(actor, keyUuid, true)
        if (row.revoked_at !== null) return yield* new InvalidState({ message: "A revoked key cannot be changed" })
        yield* requireRevision("key", row.revision, input.expectedRevision)
        yield* sql`
          UPDATE api_keys SET name = ${input.name.trim()}, scopes = ${JSON.stringify(scopes)}::jsonb,
            http_enabled = ${input.httpEnabled}, mcp_enabled = ${input.mcpEnabled},
            revision = revision + 1, updated_at = now()
          WHERE uuid = ${keyUuid}`
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
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      UPDATE api_keys SET revoked_at = now(), revision = revision + 1, updated_at = now()
      WHERE uuid = ${keyUuid} AND account_uuid = ${actor.accountUuid} AND revoked_at IS NULL`
    return { key: toKey(yield* ownKey(actor, keyUuid)) }
  })

/** Revoked keys stay listed this long, so the owner sees what stopped working. */
const revokedKeptDays = 30

/** The account's keys: live ones and those revoked in the last 30 days; the personal key first. */
export const listKeys = (actor: SessionActor): Effect.Effect<{ readonly items: ReadonlyArray<Key> }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* ensurePersonalKey(actor.accountUuid)
    const rows = yield* selectKeys(sql, sql.and([
      sql`k.account_uuid = ${actor.accountUuid}`,
      sql`(k.revoked_at IS NULL OR k.revoked_at > now() - make_interval(days => ${revokedKeptDays}))`
    ]))
    return { items: rows.map(toKey) }
  })

interface KeyActorRow {
  readonly key_uuid: string
  readonly key_name: string
  readonly kind: KeyKind
  readonly scopes: unknown
  readonly http_enabled: boolean
  readonly mcp_enabled: boolean
  readonly expires_at: Date
  readonly stale: boolean
  readonly account_uuid: string
  readonly email: string
  readonly profile_uuid: string
  readonly name: string
  readonly type: ProfileType
}

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
    const [row] = yield* sql<KeyActorRow>`
      SELECT k.uuid AS key_uuid, k.name AS key_name, k.kind, k.scopes, k.http_enabled, k.mcp_enabled, k.expires_at,
        (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${lastUsedResolutionSeconds})) AS stale,
        a.uuid AS account_uuid, a.email, p.uuid AS profile_uuid, p.name, p.type
      FROM api_keys k
      JOIN accounts a ON a.uuid = k.account_uuid AND a.deleted_at IS NULL
      JOIN profiles p ON p.uuid = k.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL
      WHERE k.secret_hash = ${keyedHash(serverSecret, purpose, raw)} AND k.revoked_at IS NULL AND k.expires_at > now()`
    if (row === undefined) return Option.none()
    if (row.stale) yield* sql`UPDATE api_keys SET last_used_at = now() WHERE uuid = ${row.key_uuid}`
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
      scopes: scopesOf(row.scopes),
      httpEnabled: row.http_enabled,
      mcpEnabled: row.mcp_enabled
    })
  })

/** Revokes every live key of an account (account deletion), so what they started stops too. */
export const revokeAccountKeys = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE api_keys SET revoked_at = now(), revision = revision + 1, updated_at = now()
      WHERE account_uuid = ${accountUuid} AND revoked_at IS NULL`.pipe(Effect.asVoid))
