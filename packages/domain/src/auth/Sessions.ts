import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { Actor, SessionActor } from "../kernel/Authentication.js"
import type { AuthSession } from "./AuthApi.js"
import { keyedHash, ServerSecret } from "./ServerSecret.js"
import {
  actorBySessionUuid,
  actorByTokenHash,
  makeActorByTokenHash,
  insertSession,
  revokeBySessionUuid,
  revokeByTokenHash,
  type SessionActorRow,
  sessionCreatedWithin
} from "./SessionRepository.js"
import { signInLimits } from "./SignInSettings.js"

const purpose = "session"

/** A new session token: 32 random bytes. Only its keyed hash is stored; the raw value goes in the cookie. */
export const newSessionToken = (): string => randomBytes(32).toString("base64url")

/** Creates a session row inside the caller's transaction; the cookie is set only after it commits. */
export const createSession = (accountUuid: string, profileUuid: string) =>
  Effect.gen(function*() {
    const secret = yield* ServerSecret
    const token = newSessionToken()
    const row = yield* insertSession({
      tokenHash: keyedHash(secret, purpose, token),
      accountUuid,
      profileUuid,
      lifetimeSeconds: Duration.toSeconds(signInLimits.sessionLifetime)
    })
    return { token: Redacted.make(token), sessionUuid: row.uuid, expiresAt: row.expires_at }
  })

const toActor = (row: SessionActorRow): SessionActor => ({
  accountUuid: row.account_uuid,
  email: row.email,
  profileUuid: row.profile_uuid,
  profileName: row.name,
  profileType: row.type,
  via: "session",
  sessionUuid: row.session_uuid,
  expiresAt: row.expires_at
})

/** One exact statement per call (`actorByTokenHash`): it runs on every authenticated request. */
const lookupToken = (sql: SqlClient.SqlClient, secret: Redacted.Redacted<string>, token: Redacted.Redacted<string>) =>
  Effect.suspend(() => {
    const raw = Redacted.value(token)
    if (raw.length === 0 || raw.length > 200) return Effect.succeed(Option.none<SessionActor>())
    return Effect.map(actorByTokenHash(sql, keyedHash(secret, purpose, raw)), Option.map(toActor))
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
  Effect.all([makeActorByTokenHash, ServerSecret]),
  ([byHash, secret]) => (token) =>
    Effect.suspend(() => {
      const raw = Redacted.value(token)
      if (raw.length === 0 || raw.length > 200) return Effect.succeed(Option.none<SessionActor>())
      return Effect.map(byHash(keyedHash(secret, purpose, raw)), Option.map(toActor))
    })
)

/** The actor of a session by its uuid (after a change of profile in the same request). */
export const actorForSession = (sessionUuid: string): Effect.Effect<Option.Option<SessionActor>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(actorBySessionUuid(sql, sessionUuid), Option.map(toActor)))

/** Revokes the session of a token; idempotent (nothing to revoke is fine). */
export const revokeToken = (token: Redacted.Redacted<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const raw = Redacted.value(token)
    if (raw.length === 0 || raw.length > 200) return
    const secret = yield* ServerSecret
    yield* revokeByTokenHash(keyedHash(secret, purpose, raw))
  })

export const authSessionOf = (actor: Actor): AuthSession => ({
  user: { uuid: actor.accountUuid, email: actor.email },
  profile: { uuid: actor.profileUuid, name: actor.profileName, type: actor.profileType },
  expiresAt: actor.expiresAt
})

/** Revokes one session (logout); idempotent. */
export const revokeSession = (sessionUuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> => revokeBySessionUuid(sessionUuid)

/** Whether the actor's session signed in less than `seconds` ago (secrets are shown only then). */
export const sessionSignedInWithin = (actor: SessionActor, seconds: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  sessionCreatedWithin(actor.sessionUuid, seconds)
