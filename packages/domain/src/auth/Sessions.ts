import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { Actor, SessionActor } from "../api/Authentication.js"
import type { AuthSession } from "../api/AuthApi.js"
import type { ProfileType } from "../profiles/Profile.js"
import { keyedHash, ServerSecret } from "./ServerSecret.js"
import { signInLimits } from "./SignInSettings.js"

const purpose = "session"

/** A new session token: 32 random bytes. Only its keyed hash is stored; the raw value goes in the cookie. */
export const newSessionToken = (): string => randomBytes(32).toString("base64url")

/** Creates a session row inside the caller's transaction; the cookie is set only after it commits. */
export const createSession = (accountUuid: string, profileUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const token = newSessionToken()
    const [row] = yield* sql<{ uuid: string; expires_at: Date }>`
      INSERT INTO sessions (token_hash, account_uuid, profile_uuid, expires_at)
      VALUES (${keyedHash(secret, purpose, token)}, ${accountUuid}, ${profileUuid},
        now() + make_interval(secs => ${Duration.toSeconds(signInLimits.sessionLifetime)}))
      RETURNING uuid, expires_at`
    return { token: Redacted.make(token), sessionUuid: row!.uuid, expiresAt: row!.expires_at }
  })

interface ActorRow {
  readonly session_uuid: string
  readonly expires_at: Date
  readonly account_uuid: string
  readonly email: string
  readonly profile_uuid: string
  readonly name: string
  readonly type: ProfileType
}

const toActor = (row: ActorRow): SessionActor => ({
  accountUuid: row.account_uuid,
  email: row.email,
  profileUuid: row.profile_uuid,
  profileName: row.name,
  profileType: row.type,
  via: "session",
  sessionUuid: row.session_uuid,
  expiresAt: row.expires_at
})

// The actor's columns; the joins leave out sessions of deleted accounts and profiles.
const actorFrom = `s.uuid AS session_uuid, s.expires_at, a.uuid AS account_uuid, a.email, p.uuid AS profile_uuid, p.name, p.type
    FROM sessions s
    JOIN accounts a ON a.uuid = s.account_uuid AND a.deleted_at IS NULL
    JOIN profiles p ON p.uuid = s.profile_uuid AND p.account_uuid = a.uuid AND p.deleted_at IS NULL`

const firstActor = (rows: ReadonlyArray<ActorRow>): Option.Option<SessionActor> =>
  rows.length === 0 ? Option.none() : Option.some(toActor(rows[0]!))

/**
 * One exact statement per call (no cache: a session revoked or expired a moment ago is refused
 * at once), written out rather than composed from fragments: it runs on every authenticated request.
 */
const lookupToken = (sql: SqlClient.SqlClient, secret: Redacted.Redacted<string>, token: Redacted.Redacted<string>) =>
  Effect.suspend(() => {
    const raw = Redacted.value(token)
    if (raw.length === 0 || raw.length > 200) return Effect.succeed(Option.none<SessionActor>())
    return Effect.map(
      sql<ActorRow>`SELECT ${sql.literal(actorFrom)}
        WHERE s.token_hash = ${keyedHash(secret, purpose, raw)} AND s.revoked_at IS NULL AND s.expires_at > now()`,
      firstActor
    )
  })

/** The actor behind a session token, if the session is usable (not expired, revoked, or of a deleted account or profile). */
export const actorForToken = (token: Redacted.Redacted<string>): Effect.Effect<Option.Option<SessionActor>, SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.flatMap(ServerSecret, (secret) => lookupToken(sql, secret, token)))

/**
 * `actorForToken` with its services resolved once, for the authentication middleware: providing
 * them per request copies the request's whole context twice (with a stub connection the lookup
 * took 65–80 µs of CPU that way, 40–45 µs this way; bench/README.md, auth-session).
 */
export const makeSessionLookup: Effect.Effect<
  (token: Redacted.Redacted<string>) => Effect.Effect<Option.Option<SessionActor>, SqlError>,
  never,
  SqlClient.SqlClient | ServerSecret
> = Effect.map(
  Effect.all([SqlClient.SqlClient, ServerSecret]),
  ([sql, secret]) => (token) => lookupToken(sql, secret, token)
)

/** The actor of a session by its uuid (after a change of profile in the same request). */
export const actorForSession = (sessionUuid: string): Effect.Effect<Option.Option<SessionActor>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<ActorRow>`SELECT ${sql.literal(actorFrom)}
        WHERE s.uuid = ${sessionUuid} AND s.revoked_at IS NULL AND s.expires_at > now()`,
      firstActor
    ))

/** Revokes the session of a token; idempotent (nothing to revoke is fine). */
export const revokeToken = (token: Redacted.Redacted<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const raw = Redacted.value(token)
    if (raw.length === 0 || raw.length > 200) return
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    yield* sql`UPDATE sessions SET revoked_at = now() WHERE token_hash = ${keyedHash(secret, purpose, raw)} AND revoked_at IS NULL`
  })

export const authSessionOf = (actor: Actor): AuthSession => ({
  user: { uuid: actor.accountUuid, email: actor.email },
  profile: { uuid: actor.profileUuid, name: actor.profileName, type: actor.profileType },
  expiresAt: actor.expiresAt
})

/** Revokes one session (logout); idempotent. */
export const revokeSession = (sessionUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sessions SET revoked_at = now() WHERE uuid = ${sessionUuid} AND revoked_at IS NULL`.pipe(Effect.asVoid))
