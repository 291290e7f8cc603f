import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ProfileType } from "../profiles/Profile.js"
import { makePooledRead } from "../store/PooledReads.js"
import { rowDecoder, rowsDecoder } from "../store/Rows.js"

/** `sessions`: the one module that reads and writes it. Only the token's keyed hash is stored. */
export const SessionRow = Schema.Struct({
  uuid: Schema.String,
  token_hash: Schema.String,
  account_uuid: Schema.String,
  profile_uuid: Schema.String,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

const Created = Schema.Struct({ uuid: SessionRow.fields.uuid, expires_at: SessionRow.fields.expires_at })
const decodeCreated = rowDecoder(Created)

/** A new session inside the caller's transaction, for `lifetimeSeconds` from now. */
export const insertSession = (session: {
  readonly tokenHash: string
  readonly accountUuid: string
  readonly profileUuid: string
  readonly lifetimeSeconds: number
}): Effect.Effect<typeof Created.Type, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`INSERT INTO sessions (token_hash, account_uuid, profile_uuid, expires_at)
        VALUES (${session.tokenHash}, ${session.accountUuid}, ${session.profileUuid},
          now() + make_interval(secs => ${session.lifetimeSeconds}))
        RETURNING uuid, expires_at`,
      (rows) => decodeCreated(rows[0])
    ))

/** Who acts through a usable session: the session with its live account and profile. */
export const SessionActorRow = Schema.Struct({
  session_uuid: SessionRow.fields.uuid,
  expires_at: SessionRow.fields.expires_at,
  account_uuid: Schema.String,
  email: Schema.String,
  profile_uuid: Schema.String,
  name: Schema.String,
  type: ProfileType
})
export type SessionActorRow = typeof SessionActorRow.Type

// Compiled once: this runs on every request authenticated by a session.
const decodeActorRow = rowDecoder(SessionActorRow)

// The actor's columns; the joins leave out sessions of deleted accounts and profiles.
const actorFrom = `s.uuid AS session_uuid, s.expires_at, a.uuid AS account_uuid, a.email, p.uuid AS profile_uuid, p.name, p.type
    FROM sessions s
    JOIN accounts a ON a.uuid = s.account_uuid AND a.deleted_at IS NULL
    JOIN profiles p ON p.uuid = s.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL`

const firstActor = (rows: ReadonlyArray<unknown>): Effect.Effect<Option.Option<SessionActorRow>> =>
  rows.length === 0 ? Effect.succeedNone : Effect.asSome(decodeActorRow(rows[0]))

const byTokenHash = `SELECT ${actorFrom}
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`

/**
 * One exact statement per call (no cache: a session revoked or expired a moment ago is refused
 * at once), written out rather than composed from fragments: it runs on every authenticated request.
 */
export const actorByTokenHash = (sql: SqlClient.SqlClient, tokenHash: string): Effect.Effect<Option.Option<SessionActorRow>, SqlError> =>
  Effect.flatMap(sql.unsafe(byTokenHash, [tokenHash]), firstActor)

/** `actorByTokenHash` through the pooled read of `PooledReads`, resolved once for the authentication of every request. */
export const makeActorByTokenHash: Effect.Effect<
  (tokenHash: string) => Effect.Effect<Option.Option<SessionActorRow>, SqlError>,
  never,
  SqlClient.SqlClient
> = Effect.map(makePooledRead, (read) => (tokenHash) => Effect.flatMap(read(byTokenHash, [tokenHash]), firstActor))

export const actorBySessionUuid = (sql: SqlClient.SqlClient, sessionUuid: string): Effect.Effect<Option.Option<SessionActorRow>, SqlError> =>
  Effect.flatMap(
    sql`SELECT ${sql.literal(actorFrom)}
      WHERE s.uuid = ${sessionUuid} AND s.revoked_at IS NULL AND s.expires_at > now()`,
    firstActor
  )

export const revokeByTokenHash = (tokenHash: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sessions SET revoked_at = now() WHERE token_hash = ${tokenHash} AND revoked_at IS NULL`.pipe(Effect.asVoid))

export const revokeAccountSessions = (accountUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sessions SET revoked_at = now() WHERE account_uuid = ${accountUuid} AND revoked_at IS NULL`.pipe(Effect.asVoid))

export const setSessionProfile = (sessionUuid: string, profileUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sessions SET profile_uuid = ${profileUuid} WHERE uuid = ${sessionUuid}`.pipe(Effect.asVoid))

const decodeRecent = rowsDecoder(Schema.Struct({ recent: Schema.Boolean }))

/** Whether the session was created (signed in) less than `seconds` ago. */
export const sessionCreatedWithin = (sessionUuid: string, seconds: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`
      SELECT created_at > now() - make_interval(secs => ${seconds}) AS recent
      FROM sessions WHERE uuid = ${sessionUuid}`,
      decodeRecent
    )).pipe(Effect.map((rows) => rows[0]?.recent === true))

/** Ends one session (logout); idempotent. */
export const revokeBySessionUuid = (sessionUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sessions SET revoked_at = now() WHERE uuid = ${sessionUuid} AND revoked_at IS NULL`.pipe(Effect.asVoid))

/** A usable session of an account as the admin area lists it: never its token's hash. */
export const AccountSessionRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  profile_name: Schema.String,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})
const decodeAccountSessions = rowsDecoder(AccountSessionRow)

/** The account's sessions that still work (not revoked, not expired), newest first. */
export const liveSessionsOfAccount = (accountUuid: string): Effect.Effect<ReadonlyArray<typeof AccountSessionRow.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`SELECT s.uuid, s.profile_uuid, p.name AS profile_name, s.created_at, s.expires_at
        FROM sessions s JOIN profiles p ON p.uuid = s.profile_uuid
        WHERE s.account_uuid = ${accountUuid} AND s.revoked_at IS NULL AND s.expires_at > now()
        ORDER BY s.created_at DESC, s.uuid LIMIT 100`,
      decodeAccountSessions
    ))
