import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { rowDecoder, rowsDecoder } from "../store/Rows.js"

/** `sign_in_challenges`: the one module that reads and writes it. Code and link are stored as keyed hashes. */
export const SignInChallengeRow = Schema.Struct({
  uuid: Schema.String,
  email: Schema.String,
  account_uuid: Schema.NullOr(Schema.String),
  code_hash: Schema.String,
  link_hash: Schema.NullOr(Schema.String),
  wrong_guesses: Schema.Number,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  consumed_at: Schema.NullOr(Schema.DateFromSelf),
  link_superseded_at: Schema.NullOr(Schema.DateFromSelf)
})

const decodeExpiresAt = rowDecoder(Schema.Struct({ expires_at: SignInChallengeRow.fields.expires_at }))

/** A new challenge, valid for `lifetimeSeconds` from now; returns when it expires. */
export const insertChallenge = (challenge: {
  readonly uuid: string
  readonly email: string
  readonly accountUuid: string | null
  readonly codeHash: string
  readonly linkHash: string
  readonly lifetimeSeconds: number
}): Effect.Effect<Date, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO sign_in_challenges (uuid, email, account_uuid, code_hash, link_hash, expires_at)
      VALUES (${challenge.uuid}, ${challenge.email}, ${challenge.accountUuid}, ${challenge.codeHash}, ${challenge.linkHash},
        now() + make_interval(secs => ${challenge.lifetimeSeconds}))
      RETURNING expires_at`.pipe(
      Effect.flatMap((rows) => decodeExpiresAt(rows[0])),
      Effect.map((row) => row.expires_at)
    ))

export const deleteChallenge = (uuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM sign_in_challenges WHERE uuid = ${uuid}`.pipe(Effect.asVoid))

/** The links of the address's older open challenges stop working (the newest email's link is the one). */
export const supersedeOlderLinks = (email: string, uuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sign_in_challenges SET link_superseded_at = now()
      WHERE email = ${email} AND uuid <> ${uuid} AND link_superseded_at IS NULL AND consumed_at IS NULL
        AND created_at < (SELECT created_at FROM sign_in_challenges WHERE uuid = ${uuid})`.pipe(Effect.asVoid))

/** A challenge as completion judges it, with what the database's clock and the account say. */
export const ChallengeCheck = Schema.Struct({
  email: SignInChallengeRow.fields.email,
  account_uuid: SignInChallengeRow.fields.account_uuid,
  code_hash: SignInChallengeRow.fields.code_hash,
  link_hash: SignInChallengeRow.fields.link_hash,
  wrong_guesses: SignInChallengeRow.fields.wrong_guesses,
  /** Not consumed, not expired, guesses left. */
  usable: Schema.Boolean,
  link_superseded: Schema.Boolean,
  account_deleted: Schema.Boolean
})
export type ChallengeCheck = typeof ChallengeCheck.Type
const decodeCheck = rowDecoder(ChallengeCheck)

/** The challenge, row-locked until the end of the transaction. */
export const challengeForUpdate = (
  uuid: string,
  wrongGuessesAllowed: number
): Effect.Effect<Option.Option<ChallengeCheck>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`
        SELECT c.email, c.account_uuid, c.code_hash, c.link_hash, c.wrong_guesses,
          (c.consumed_at IS NULL AND c.expires_at > now() AND c.wrong_guesses < ${wrongGuessesAllowed}) AS usable,
          (c.link_superseded_at IS NOT NULL) AS link_superseded,
          (a.deleted_at IS NOT NULL) AS account_deleted
        FROM sign_in_challenges c LEFT JOIN accounts a ON a.uuid = c.account_uuid
        WHERE c.uuid = ${uuid}
        FOR UPDATE OF c`,
      (rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(decodeCheck(rows[0]))
    ))

export const countWrongGuess = (uuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sign_in_challenges SET wrong_guesses = wrong_guesses + 1 WHERE uuid = ${uuid}`.pipe(Effect.asVoid))

export const consumeChallenge = (uuid: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sign_in_challenges SET consumed_at = now() WHERE uuid = ${uuid}`.pipe(Effect.asVoid))

const decodeCount = rowsDecoder(Schema.Struct({ n: Schema.Number }))

/** Retention: forgets challenges that expired more than a day ago; returns how many went. */
export const deleteExpiredChallenges: Effect.Effect<number, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    Effect.flatMap(
      sql`WITH gone AS (
        DELETE FROM sign_in_challenges WHERE expires_at < now() - interval '1 day' RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`,
      decodeCount
    ).pipe(Effect.map((rows) => rows[0]?.n ?? 0))
)
