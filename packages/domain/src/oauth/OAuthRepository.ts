import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { rowsDecoder } from "../store/Rows.js"

/**
 * `oauth_clients`, `oauth_requests`, `oauth_codes`, `oauth_tokens`, `oauth_agent_clients`: the one
 * module that writes them (migration 0034). Codes and tokens are looked up by their keyed hash;
 * the hash is never read back.
 */

const ClientKind = Schema.Literal("registered", "metadata_document")

export const ClientRow = Schema.Struct({
  client_id: Schema.String,
  kind: ClientKind,
  name: Schema.String,
  client_uri: Schema.NullOr(Schema.String),
  redirect_uris: Schema.Array(Schema.String),
  stale: Schema.Boolean
})
export type ClientRow = typeof ClientRow.Type
const decodeClients = rowsDecoder(ClientRow)

export const findClient = (clientId: string, staleAfterSeconds: number): Effect.Effect<Option.Option<ClientRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT client_id, kind, name, client_uri, redirect_uris,
          (fetched_at < now() - make_interval(secs => ${staleAfterSeconds})) AS stale
        FROM oauth_clients WHERE client_id = ${clientId}`,
      decodeClients
    )).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

/** Registers a client, or refreshes a metadata document's copy. */
export const saveClient = (client: {
  readonly clientId: string
  readonly kind: typeof ClientKind.Type
  readonly name: string
  readonly clientUri: string | undefined
  readonly redirectUris: ReadonlyArray<string>
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO oauth_clients (client_id, kind, name, client_uri, redirect_uris)
      VALUES (${client.clientId}, ${client.kind}, ${client.name}, ${client.clientUri ?? null}, ${JSON.stringify(client.redirectUris)}::jsonb)
      ON CONFLICT (client_id) DO UPDATE SET name = excluded.name, client_uri = excluded.client_uri,
        redirect_uris = excluded.redirect_uris, fetched_at = now()`.pipe(Effect.asVoid))

export const RequestRow = Schema.Struct({
  uuid: Schema.String,
  client_id: Schema.String,
  redirect_uri: Schema.String,
  scopes: Schema.Array(Schema.String),
  resource: Schema.String,
  code_challenge: Schema.String,
  state: Schema.NullOr(Schema.String),
  expires_at: Schema.DateFromSelf,
  decision: Schema.NullOr(Schema.Literal("allow", "deny")),
  expired: Schema.Boolean
})
export type RequestRow = typeof RequestRow.Type
const decodeRequests = rowsDecoder(RequestRow)
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))

export const insertRequest = (request: {
  readonly clientId: string
  readonly redirectUri: string
  readonly scopes: ReadonlyArray<string>
  readonly resource: string
  readonly codeChallenge: string
  readonly state: string | undefined
  readonly seconds: number
}): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`INSERT INTO oauth_requests (client_id, redirect_uri, scopes, resource, code_challenge, state, expires_at)
        VALUES (${request.clientId}, ${request.redirectUri}, ${JSON.stringify(request.scopes)}::jsonb, ${request.resource},
          ${request.codeChallenge}, ${request.state ?? null}, now() + make_interval(secs => ${request.seconds}))
        RETURNING uuid`,
      decodeUuids
    )).pipe(Effect.map((rows) => rows[0]!.uuid))

export const findRequest = (uuid: string, lock: boolean): Effect.Effect<Option.Option<RequestRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT uuid, client_id, redirect_uri, scopes, resource, code_challenge, state, expires_at, decision,
          (expires_at <= now()) AS expired
        FROM oauth_requests WHERE uuid = ${uuid} ${lock ? sql`FOR UPDATE` : sql``}`,
      decodeRequests
    )).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

export const decideRequest = (uuid: string, decision: "allow" | "deny"): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE oauth_requests SET decision = ${decision}, decided_at = now() WHERE uuid = ${uuid} AND decision IS NULL`.pipe(Effect.asVoid))

export const insertCode = (code: {
  readonly hash: string
  readonly requestUuid: string
  readonly clientId: string
  readonly accountUuid: string
  readonly profileUuid: string
  readonly scopes: ReadonlyArray<string>
  readonly redirectUri: string
  readonly resource: string
  readonly codeChallenge: string
  readonly seconds: number
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO oauth_codes (code_hash, request_uuid, client_id, account_uuid, profile_uuid, scopes, redirect_uri, resource,
        code_challenge, expires_at)
      VALUES (${code.hash}, ${code.requestUuid}, ${code.clientId}, ${code.accountUuid}, ${code.profileUuid},
        ${JSON.stringify(code.scopes)}::jsonb, ${code.redirectUri}, ${code.resource}, ${code.codeChallenge},
        now() + make_interval(secs => ${code.seconds}))`.pipe(Effect.asVoid))

export const CodeRow = Schema.Struct({
  client_id: Schema.String,
  account_uuid: Schema.String,
  profile_uuid: Schema.String,
  scopes: Schema.Array(Schema.String),
  redirect_uri: Schema.String,
  resource: Schema.String,
  code_challenge: Schema.String,
  expired: Schema.Boolean
})
export type CodeRow = typeof CodeRow.Type
const decodeCodes = rowsDecoder(CodeRow)

/** Marks a code used, once: the row when this call used it; none when unknown or used before. */
export const useCode = (hash: string): Effect.Effect<Option.Option<CodeRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE oauth_codes SET used_at = now() WHERE code_hash = ${hash} AND used_at IS NULL
        RETURNING client_id, account_uuid, profile_uuid, scopes, redirect_uri, resource, code_challenge, (expires_at <= now()) AS expired`,
      decodeCodes
    )).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

const decodeKeyOf = rowsDecoder(Schema.Struct({ key_uuid: Schema.NullOr(Schema.String) }))

/** The connection a used code made, when the code was used before (a replay): its key uuid, or null if it made none. */
export const keyOfUsedCode = (hash: string): Effect.Effect<Option.Option<string | null>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(sql`SELECT key_uuid FROM oauth_codes WHERE code_hash = ${hash} AND used_at IS NOT NULL`, decodeKeyOf)).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.key_uuid))
    )

export const setCodeKey = (hash: string, keyUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE oauth_codes SET key_uuid = ${keyUuid} WHERE code_hash = ${hash}`.pipe(Effect.asVoid))

export const insertAgentClient = (keyUuid: string, clientId: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO oauth_agent_clients (key_uuid, client_id) VALUES (${keyUuid}, ${clientId})`.pipe(Effect.asVoid))

export const insertToken = (token: {
  readonly hash: string
  readonly kind: "access" | "refresh"
  readonly keyUuid: string
  readonly clientId: string
  readonly resource: string
  readonly seconds: number
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO oauth_tokens (token_hash, kind, key_uuid, client_id, resource, expires_at)
      VALUES (${token.hash}, ${token.kind}, ${token.keyUuid}, ${token.clientId}, ${token.resource},
        now() + make_interval(secs => ${token.seconds}))`.pipe(Effect.asVoid))

export const RefreshRow = Schema.Struct({
  key_uuid: Schema.String,
  client_id: Schema.String,
  resource: Schema.String,
  scopes: Schema.Array(Schema.String),
  expired: Schema.Boolean
})
export type RefreshRow = typeof RefreshRow.Type
const decodeRefresh = rowsDecoder(RefreshRow)

/** Uses a live refresh token of a live connection, once (rotation): the row, with the connection's scopes, when this call used it. */
export const useRefreshToken = (hash: string): Effect.Effect<Option.Option<RefreshRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE oauth_tokens t SET used_at = now() FROM api_keys k
        WHERE t.token_hash = ${hash} AND t.kind = 'refresh' AND t.used_at IS NULL AND t.revoked_at IS NULL
          AND k.uuid = t.key_uuid AND k.revoked_at IS NULL
        RETURNING t.key_uuid, t.client_id, t.resource, k.scopes, (t.expires_at <= now()) AS expired`,
      decodeRefresh
    )).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

export const TokenRow = Schema.Struct({ kind: Schema.Literal("access", "refresh"), key_uuid: Schema.String, client_id: Schema.String })
const decodeTokens = rowsDecoder(TokenRow)

/** Any token by its hash, used, revoked or not (reuse detection, revocation). */
export const findToken = (hash: string): Effect.Effect<Option.Option<typeof TokenRow.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(sql`SELECT kind, key_uuid, client_id FROM oauth_tokens WHERE token_hash = ${hash}`, decodeTokens)).pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

export const revokeToken = (hash: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = ${hash} AND revoked_at IS NULL`.pipe(Effect.asVoid))

export const revokeTokensOfKey = (keyUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE oauth_tokens SET revoked_at = now() WHERE key_uuid = ${keyUuid} AND revoked_at IS NULL`.pipe(Effect.asVoid))

/** The actor behind a live access token for `resource`: its live connection, account and profile. */
export const AccessActorRow = Schema.Struct({
  key_uuid: Schema.String,
  key_name: Schema.String,
  scopes: Schema.Array(Schema.String),
  token_expires_at: Schema.DateFromSelf,
  stale: Schema.Boolean,
  account_uuid: Schema.String,
  email: Schema.String,
  profile_uuid: Schema.String,
  name: Schema.String,
  type: ProfileType
})
export type AccessActorRow = typeof AccessActorRow.Type
const decodeAccessActors = rowsDecoder(AccessActorRow)

export const accessActorByHash = (
  hash: string,
  resource: string,
  lastUsedResolutionSeconds: number
): Effect.Effect<Option.Option<AccessActorRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT k.uuid AS key_uuid, k.name AS key_name, k.scopes, t.expires_at AS token_expires_at,
          (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${lastUsedResolutionSeconds})) AS stale,
          a.uuid AS account_uuid, a.email, p.uuid AS profile_uuid, p.name, p.type
        FROM oauth_tokens t
        JOIN api_keys k ON k.uuid = t.key_uuid AND k.kind = 'agent' AND k.revoked_at IS NULL
        JOIN accounts a ON a.uuid = k.account_uuid AND a.deleted_at IS NULL
        JOIN profiles p ON p.uuid = k.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL
        WHERE t.token_hash = ${hash} AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > now()
          AND t.resource = ${resource}`,
      decodeAccessActors
    )).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

export const AgentRow = Schema.Struct({
  uuid: Schema.String,
  scopes: Schema.Array(Schema.String),
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  profile_uuid: Schema.String,
  profile_name: Schema.String,
  profile_type: ProfileType,
  client_id: Schema.String,
  client_kind: ClientKind,
  client_name: Schema.String,
  client_uri: Schema.NullOr(Schema.String)
})
export type AgentRow = typeof AgentRow.Type
const decodeAgents = rowsDecoder(AgentRow)

/** The account's connected agents, live ones and those disconnected in the last `revokedKeptDays`; newest first. */
export const agentsOfAccount = (
  accountUuid: string,
  revokedKeptDays: number,
  keyUuid?: string
): Effect.Effect<ReadonlyArray<AgentRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT k.uuid, k.scopes, k.created_at, k.last_used_at, k.revoked_at,
          p.uuid AS profile_uuid, p.name AS profile_name, p.type AS profile_type,
          c.client_id, c.kind AS client_kind, c.name AS client_name, c.client_uri
        FROM api_keys k
        JOIN oauth_agent_clients ac ON ac.key_uuid = k.uuid
        JOIN oauth_clients c ON c.client_id = ac.client_id
        JOIN profiles p ON p.uuid = k.profile_uuid
        WHERE k.account_uuid = ${accountUuid} AND k.kind = 'agent'
          AND (k.revoked_at IS NULL OR k.revoked_at > now() - make_interval(days => ${revokedKeptDays}))
          ${keyUuid === undefined ? sql`` : sql`AND k.uuid = ${keyUuid}`}
        ORDER BY k.created_at DESC, k.uuid`,
      decodeAgents
    ))

/** A day after its expiry nothing reads a code, a token or an authorization request again. */
const expiredKeptDays = 1

const decodeRemoved = rowsDecoder(Schema.Struct({ codes: Schema.Number, tokens: Schema.Number, requests: Schema.Number }))

/**
 * Retention (worker-host `Retention.ts`): codes, tokens and authorization requests expired more
 * than a day ago. Reuse detection reads used codes and refresh tokens only while they could still
 * be presented as valid; after their expiry a presented one is refused as unknown either way. A
 * request goes once no code names it. Clients stay: an agent keeps its client id.
 */
export const cleanExpiredOAuthRecords: Effect.Effect<{ readonly codes: number; readonly tokens: number; readonly requests: number }, SqlError, SqlClient.SqlClient> =
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`WITH codes AS (
          DELETE FROM oauth_codes WHERE expires_at < now() - make_interval(days => ${expiredKeptDays}) RETURNING 1
        ), tokens AS (
          DELETE FROM oauth_tokens WHERE expires_at < now() - make_interval(days => ${expiredKeptDays}) RETURNING 1
        ), requests AS (
          -- The statement's parts see the table as it was: a code that stays is one this statement keeps.
          DELETE FROM oauth_requests r WHERE r.expires_at < now() - make_interval(days => ${expiredKeptDays})
            AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.request_uuid = r.uuid AND c.expires_at >= now() - make_interval(days => ${expiredKeptDays}))
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM codes)::int AS codes, (SELECT count(*) FROM tokens)::int AS tokens, (SELECT count(*) FROM requests)::int AS requests`,
      decodeRemoved
    )).pipe(Effect.map((rows) => rows[0] ?? { codes: 0, tokens: 0, requests: 0 }))
