import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Either, Exit, Option, Redacted } from "effect"
import { randomBytes, randomInt, randomUUID } from "node:crypto"
import { Gone, InvalidCode, InvalidLink, ServiceUnavailable } from "../kernel/ApiError.js"
import type { AuthSession } from "./AuthApi.js"
import { Mailer } from "../mail/Mailer.js"
import { liveAccountRow } from "./AccountRepository.js"
import { accountForVerifiedEmail } from "./Accounts.js"
import { checkWindow, forgetHits, LimitReached, lockSubject, recordHit } from "./RateLimit.js"
import { keyedHash, sameHash, ServerSecret } from "./ServerSecret.js"
import { actorForSession, authSessionOf, createSession } from "./Sessions.js"
import {
  challengeForUpdate,
  consumeChallenge,
  countWrongGuess,
  deleteChallenge,
  insertChallenge,
  supersedeOlderLinks
} from "./SignInChallengeRepository.js"
import { signInEmail } from "./SignInEmail.js"
import { SignInConfig, signInLimits } from "./SignInSettings.js"

const codeHashOf = (secret: Redacted.Redacted<string>, challengeUuid: string, code: string) =>
  keyedHash(secret, "sign-in-code", `${challengeUuid}:${code}`)
const linkHashOf = (secret: Redacted.Redacted<string>, challengeUuid: string, token: string) =>
  keyedHash(secret, "sign-in-link", `${challengeUuid}:${token}`)

/** The address as the account knows it: compared and stored lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

/** The link in the email: the token travels only in the fragment, which browsers never send to a server. */
export const signInLink = (publicOrigin: string, challengeUuid: string, token: string): string =>
  `${publicOrigin}/auth/link#challenge=${challengeUuid}&token=${token}`

export interface Started {
  readonly challengeUuid: string
  readonly expiresAt: Date
  readonly resendAfterSeconds: 60
}

/**
 * Starts email sign-in in three steps, so no database connection waits on the mail provider:
 *
 * 1. one transaction checks the persisted limits (serialised per address and IP), stores the keyed
 *    hashes of a new code and link token and counts the email, so a concurrent start already sees
 *    this one (nobody but the server knows the code or token yet);
 * 2. the email is sent, holding nothing;
 * 3. accepted: older links of the address are superseded; refused or unreachable: the challenge
 *    and the counts are taken back, so the failure leaves no active challenge and counts against
 *    no limit, and the answer is 503.
 */
export const startSignIn = (input: { readonly email: string; readonly clientIp: string }): Effect.Effect<
  Started,
  LimitReached | ServiceUnavailable | SqlError,
  SqlClient.SqlClient | ServerSecret | Mailer | SignInConfig
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const mailer = yield* Mailer
    const { publicOrigin } = yield* SignInConfig
    const email = normalizeEmail(input.email)
    const challengeUuid = randomUUID()
    const code = String(randomInt(0, 1_000_000)).padStart(6, "0")
    const token = randomBytes(32).toString("base64url")
    // Started, it runs to the end even if the client goes away: never a counted start with nothing
    // decided (the mail goes out or not, and the bookkeeping says which). SMTP timeouts bound it.
    return yield* Effect.uninterruptible(Effect.gen(function*() {
      const { expiresAt, hits } = yield* sql.withTransaction(Effect.gen(function*() {
        yield* lockSubject(`sign-in-email:${email}`)
        yield* lockSubject(`sign-in-ip:${input.clientIp}`)
        yield* checkWindow({
          bucket: "sign-in-email",
          subject: email,
          limit: 1,
          seconds: signInLimits.resendCooldownSeconds,
          message: "A sign-in email was just sent to this address; wait before asking again"
        })
        yield* checkWindow({
          bucket: "sign-in-email",
          subject: email,
          limit: signInLimits.emailsPerAddressPerHour,
          seconds: 3600,
          message: "Too many sign-in emails to this address this hour"
        })
        yield* checkWindow({
          bucket: "sign-in-ip",
          subject: input.clientIp,
          limit: signInLimits.emailsPerIpPerHour,
          seconds: 3600,
          message: "Too many sign-in emails from this address this hour"
        })
        const account = yield* liveAccountRow(email)
        const expiresAt = yield* insertChallenge({
          uuid: challengeUuid,
          email,
          accountUuid: Option.getOrNull(Option.map(account, (a) => a.uuid)),
          codeHash: codeHashOf(secret, challengeUuid, code),
          linkHash: linkHashOf(secret, challengeUuid, token),
          lifetimeSeconds: Duration.toSeconds(signInLimits.challengeLifetime)
        })
        const counted = [yield* recordHit("sign-in-email", email), yield* recordHit("sign-in-ip", input.clientIp)]
        return { expiresAt, hits: counted }
      }))
      const sent = yield* Effect.exit(mailer.send(signInEmail({
        to: email,
        code,
        link: signInLink(publicOrigin, challengeUuid, token),
        expiresAt,
        minutes: Duration.toMinutes(signInLimits.challengeLifetime)
      })))
      if (Exit.isFailure(sent)) {
        yield* sql.withTransaction(Effect.zipRight(
          deleteChallenge(challengeUuid),
          forgetHits(hits)
        ))
        return yield* new ServiceUnavailable({ message: "The mail service did not accept the sign-in email; try again shortly" })
      }
      yield* supersedeOlderLinks(email, challengeUuid)
      return { challengeUuid, expiresAt, resendAfterSeconds: 60 as const }
    }))
  })

type Proof = { readonly _tag: "code"; readonly code: string } | { readonly _tag: "link"; readonly token: string }

export interface SignedIn {
  readonly session: AuthSession
  /** Goes only into the cookie. */
  readonly token: Redacted.Redacted<string>
}

/**
 * Completes sign-in with the code or the link of a challenge. A failure is decided and recorded
 * (a wrong guess counts) in a committed transaction, then answered; success consumes the
 * challenge (both code and link), finds or creates the account, and creates the session in one
 * transaction. The cookie is set by the caller after this returns, that is after the commit.
 */
const complete = <Invalid extends InvalidCode | InvalidLink, Deleted extends InvalidCode | Gone>(
  challengeUuid: string,
  proof: Proof,
  clientIp: string,
  invalid: Invalid,
  deleted: Deleted
): Effect.Effect<SignedIn, Invalid | Deleted | LimitReached | SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const outcome = yield* sql.withTransaction(Effect.gen(function*() {
      yield* lockSubject(`sign-in-attempt-ip:${clientIp}`)
      yield* checkWindow({
        bucket: "sign-in-attempt-ip",
        subject: clientIp,
        limit: signInLimits.failedAttemptsPerIpPerHour,
        seconds: 3600,
        message: "Too many failed sign-in attempts from this address; wait before trying again"
      })
      const challenge = Option.getOrUndefined(yield* challengeForUpdate(challengeUuid, signInLimits.wrongGuesses))
      const fail = (error: Invalid | Deleted) =>
        Effect.as(recordHit("sign-in-attempt-ip", clientIp), Either.left(error))
      if (challenge === undefined || !challenge.usable) return yield* fail(invalid)
      if (proof._tag === "code") {
        if (!sameHash(challenge.code_hash, codeHashOf(secret, challengeUuid, proof.code))) {
          yield* countWrongGuess(challengeUuid)
          return yield* fail(invalid)
        }
      } else if (
        challenge.link_hash === null || challenge.link_superseded ||
        !sameHash(challenge.link_hash, linkHashOf(secret, challengeUuid, proof.token))
      ) {
        return yield* fail(invalid)
      }
      yield* consumeChallenge(challengeUuid)
      if (challenge.account_deleted) {
        // The account this challenge was started for has been deleted since: no session.
        return yield* fail(deleted)
      }
      const account = yield* accountForVerifiedEmail(challenge.email)
      const session = yield* createSession(account.accountUuid, account.profileUuid)
      return Either.right(session)
    }))
    if (Either.isLeft(outcome)) return yield* Effect.fail(outcome.left)
    const actor = yield* actorForSession(outcome.right.sessionUuid)
    if (actor._tag === "None") return yield* Effect.fail(invalid)
    return { session: authSessionOf(actor.value), token: outcome.right.token }
  })

const invalidCode = () => new InvalidCode({ message: "The code is wrong, expired or already used; request a new one" })

/** Sign-in by the six-digit code. For a challenge of an account deleted since, `invalid_code` (the spec gives verify no 410). */
export const verifyCode = (input: { readonly challengeUuid: string; readonly code: string; readonly clientIp: string }) =>
  complete(input.challengeUuid, { _tag: "code", code: input.code }, input.clientIp, invalidCode(), invalidCode())

/** Sign-in by the link's token. For a challenge of an account deleted since, 410 and no session. */
export const consumeLink = (input: { readonly challengeUuid: string; readonly token: string; readonly clientIp: string }) =>
  complete(
    input.challengeUuid,
    { _tag: "link", token: input.token },
    input.clientIp,
    new InvalidLink({ message: "The sign-in link is not valid any more; request a new one" }),
    new Gone({ message: "This account has been deleted" })
  )
