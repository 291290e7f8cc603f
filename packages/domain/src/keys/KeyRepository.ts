import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { type ColumnValues, rowDecoder, rowsDecoder, selectList } from "../store/Rows.js"
import { KeyKind, keyLimits } from "./Key.js"
import { personalKeyDefaultScopes } from "./Scopes.js"

/**
 * `api_keys`: the one module that reads and writes it. `secret_hash` is written (a new secret)
 * and matched (a lookup), never read back, so it is not a field of the row.
 */
export const ApiKeyRow = Schema.Struct({
  uuid: Schema.String,
  account_uuid: Schema.String,
  profile_uuid: Schema.String,
  kind: KeyKind,
  name: Schema.String,
  scopes: Schema.Array(Schema.String),
  http_enabled: Schema.Boolean,
  mcp_enabled: Schema.Boolean,
  lifetime_days: Schema.Number,
  secret_hint: Schema.NullOr(Schema.String),
  issued_at: Schema.NullOr(Schema.DateFromSelf),
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
type ApiKeyColumns = ColumnValues<typeof ApiKeyRow.Encoded & { readonly secret_hash: string }>

/** A key as its owner lists it: the row with its profile's name and type, and whether it expired by the database's clock. */
export const KeyRow = Schema.Struct({
  ...ApiKeyRow.fields,
  profile_name: Schema.String,
  profile_type: ProfileType,
  expired: Schema.Boolean
})
export type KeyRow = typeof KeyRow.Type

const keyRowList = `${selectList(ApiKeyRow, "k")}, p.name AS profile_name, p.type AS profile_type,
  coalesce(k.expires_at <= now(), false) AS expired`
const decodeKeyRows = Schema.decodeUnknown(Schema.Array(KeyRow))

const selectKeys = (where: (sql: SqlClient.SqlClient) => ReturnType<SqlClient.SqlClient["and"]>, lock: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(keyRowList)}
      FROM api_keys k JOIN profiles p ON p.uuid = k.profile_uuid
      WHERE ${where(sql)} AND k.kind <> 'agent'
      ORDER BY (k.kind = 'personal') DESC, k.created_at, k.uuid
      ${lock ? sql`FOR UPDATE OF k` : sql``}`.pipe(Effect.flatMap((rows) => Effect.orDie(decodeKeyRows(rows)))))

/** A key of the account, locked for the transaction when `lock`. */
export const keyOfAccount = (
  accountUuid: string,
  keyUuid: string,
  lock = false
): Effect.Effect<Option.Option<KeyRow>, SqlError, SqlClient.SqlClient> =>
  Effect.map(
    selectKeys((sql) => sql.and([sql`k.uuid = ${keyUuid}`, sql`k.account_uuid = ${accountUuid}`]), lock),
    (rows) => Option.fromNullable(rows[0])
  )

/** The account's live keys and those revoked in the last `revokedKeptDays`; the personal key first. */
export const keysOfAccount = (
  accountUuid: string,
  revokedKeptDays: number
): Effect.Effect<ReadonlyArray<KeyRow>, SqlError, SqlClient.SqlClient> =>
  selectKeys((sql) =>
    sql.and([
      sql`k.account_uuid = ${accountUuid}`,
      sql`(k.revoked_at IS NULL OR k.revoked_at > now() - make_interval(days => ${revokedKeptDays}))`
    ]), false)

const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))

export const countLiveKeys = (accountUuid: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(sql`SELECT count(*)::int AS n FROM api_keys WHERE account_uuid = ${accountUuid} AND revoked_at IS NULL AND kind <> 'agent'`, decodeCount)).pipe(
      Effect.map((rows) => rows[0]?.n ?? 0)
    )

/**
 * The live personal key of an account, bound to its first individual profile, without a secret;
 * nothing when it has one already.
 */
export const insertPersonalKey = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO api_keys (account_uuid, profile_uuid, kind, name, scopes, http_enabled, mcp_enabled, lifetime_days)
      SELECT ${accountUuid}, p.uuid, 'personal', 'Personal key', ${JSON.stringify(personalKeyDefaultScopes)}::jsonb,
        true, false, ${keyLimits.lifetimeDaysDefault}
      FROM profiles p WHERE p.account_uuid = ${accountUuid} AND p.deleted_at IS NULL
      ORDER BY (p.type = 'Компания'), p.created_at LIMIT 1
      ON CONFLICT (account_uuid) WHERE kind = 'personal' AND revoked_at IS NULL DO NOTHING`.pipe(Effect.asVoid))

/** A new key without a secret; returns its uuid. */
export const insertKey = (key: {
  readonly accountUuid: string
  readonly profileUuid: string
  readonly kind: KeyKind
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  readonly httpEnabled: boolean
  readonly mcpEnabled: boolean
  readonly lifetimeDays: number
}): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const values: ApiKeyColumns = {
      account_uuid: key.accountUuid,
      profile_uuid: key.profileUuid,
      kind: key.kind,
      name: key.name,
      scopes: JSON.stringify(key.scopes),
      http_enabled: key.httpEnabled,
      mcp_enabled: key.mcpEnabled,
      lifetime_days: key.lifetimeDays
    }
    return Effect.map(Effect.flatMap(sql`INSERT INTO api_keys ${sql.insert(values)} RETURNING uuid`, decodeUuids), (rows) => rows[0]!.uuid)
  })

/**
 * Stores a new secret's keyed hash and hint on a live key (its lifetime starts again), bumping
 * the revision when asked. False when the key is revoked.
 */
export const storeSecret = (
  keyUuid: string,
  secret: { readonly hash: string; readonly hint: string },
  bumpRevision: boolean
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const values: ApiKeyColumns = { secret_hash: secret.hash, secret_hint: secret.hint }
    return Effect.map(
      sql`UPDATE api_keys SET ${sql.update(values)},
        issued_at = now(), expires_at = now() + make_interval(days => lifetime_days),
        revision = revision + ${bumpRevision ? 1 : 0}, updated_at = now()
      WHERE uuid = ${keyUuid} AND revoked_at IS NULL
      RETURNING uuid`,
      (rows) => rows.length > 0
    )
  })

/**
 * A connected agent's key (kind `agent`, `oauth/`): MCP only, no secret (its tokens are in
 * `oauth_tokens`), alive until disconnected; returns its uuid.
 */
export const insertAgentKey = (agent: {
  readonly accountUuid: string
  readonly profileUuid: string
  readonly name: string
  readonly scopes: ReadonlyArray<string>
}): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const values: ApiKeyColumns = {
      account_uuid: agent.accountUuid,
      profile_uuid: agent.profileUuid,
      kind: "agent",
      name: agent.name,
      scopes: JSON.stringify(agent.scopes),
      http_enabled: false,
      mcp_enabled: true,
      lifetime_days: keyLimits.lifetimeDaysMax
    }
    return Effect.map(
      Effect.flatMap(sql`INSERT INTO api_keys ${sql.insert(values)} RETURNING uuid`, decodeUuids),
      (rows) => rows[0]!.uuid
    )
  })

/** Disconnects an agent whatever its account (a refresh token or code presented twice: the family is revoked). */
export const revokeAgentKey = (keyUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE api_keys SET revoked_at = now(), revision = revision + 1, updated_at = now()
      WHERE uuid = ${keyUuid} AND kind = 'agent' AND revoked_at IS NULL`.pipe(Effect.asVoid))

/** Replaces a key's editable settings and bumps its revision. */
export const updateSettings = (
  keyUuid: string,
  settings: { readonly name: string; readonly scopes: ReadonlyArray<string>; readonly httpEnabled: boolean; readonly mcpEnabled: boolean }
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const values: ApiKeyColumns = {
      name: settings.name,
      scopes: JSON.stringify(settings.scopes),
      http_enabled: settings.httpEnabled,
      mcp_enabled: settings.mcpEnabled
    }
    return sql`UPDATE api_keys SET ${sql.update(values)}, revision = revision + 1, updated_at = now()
      WHERE uuid = ${keyUuid}`.pipe(Effect.asVoid)
  })

/** Revokes the account's live keys: one (`keyUuid`) or all of them (account deletion). */
export const revokeKeys = (accountUuid: string, keyUuid?: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE api_keys SET revoked_at = now(), revision = revision + 1, updated_at = now()
      WHERE account_uuid = ${accountUuid} AND revoked_at IS NULL${keyUuid === undefined ? sql`` : sql` AND uuid = ${keyUuid}`}`.pipe(
      Effect.asVoid
    ))

/** The actor behind a usable key: the key's fields with its live account and profile. */
export const KeyActorRow = Schema.Struct({
  key_uuid: Schema.String,
  key_name: Schema.String,
  kind: KeyKind,
  scopes: Schema.Array(Schema.String),
  http_enabled: Schema.Boolean,
  mcp_enabled: Schema.Boolean,
  expires_at: Schema.DateFromSelf,
  /** `last_used_at` is older than the resolution asked for: time to refresh it. */
  stale: Schema.Boolean,
  account_uuid: Schema.String,
  email: Schema.String,
  profile_uuid: Schema.String,
  name: Schema.String,
  type: ProfileType
})
export type KeyActorRow = typeof KeyActorRow.Type

// Compiled once: this runs on every request authenticated by a key.
const decodeKeyActorRow = rowDecoder(KeyActorRow)

/**
 * One indexed read by the secret's keyed hash: issued, not expired, not revoked, and its account
 * and profile not deleted.
 */
export const keyActorByHash = (
  sql: SqlClient.SqlClient,
  secretHash: string,
  lastUsedResolutionSeconds: number
): Effect.Effect<Option.Option<KeyActorRow>, SqlError> =>
  Effect.flatMap(
    sql`
      SELECT k.uuid AS key_uuid, k.name AS key_name, k.kind, k.scopes, k.http_enabled, k.mcp_enabled, k.expires_at,
        (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${lastUsedResolutionSeconds})) AS stale,
        a.uuid AS account_uuid, a.email, p.uuid AS profile_uuid, p.name, p.type
      FROM api_keys k
      JOIN accounts a ON a.uuid = k.account_uuid AND a.deleted_at IS NULL
      JOIN profiles p ON p.uuid = k.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL
      WHERE k.secret_hash = ${secretHash} AND k.revoked_at IS NULL AND k.expires_at > now()`,
    (rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(decodeKeyActorRow(rows[0]))
  )

export const touchLastUsed = (sql: SqlClient.SqlClient, keyUuid: string): Effect.Effect<void, SqlError> =>
  sql`UPDATE api_keys SET last_used_at = now() WHERE uuid = ${keyUuid}`.pipe(Effect.asVoid)
