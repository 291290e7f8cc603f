import { BirzhaApi, CurrentActor, Mailer, RateLimited, sessionCookieName } from "@birzha/domain"
import { authSessionOf, consumeLink, LimitReached, revokeToken, type SignedIn, ServerSecret, SignInConfig, startSignIn, verifyCode } from "@birzha/domain/server"
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Redacted } from "effect"
import { clientAddress } from "../HostSettings.js"
import { using } from "./Storage.js"
import { clearSessionCookie, noStore, setSessionCookie } from "./SessionCookie.js"

/** 429 with `Retry-After`: the real remaining wait in whole seconds, at least 1. */
export const rateLimited = (limit: LimitReached) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(Math.max(1, Math.ceil(limit.retryAfterSeconds))))))
    .pipe(Effect.zipRight(Effect.fail(new RateLimited({ message: limit.message }))))

/** Completes sign-in (code or link); the cookie is set once the session's transaction has committed. */
const signIn = <E, R>(complete: (clientIp: string) => Effect.Effect<SignedIn, E | LimitReached, R>) =>
  Effect.gen(function*() {
    const signedIn = yield* complete(yield* clientAddress).pipe(
      Effect.catchIf((error): error is Extract<E | LimitReached, LimitReached> => error instanceof LimitReached, rateLimited)
    )
    yield* setSessionCookie(signedIn.token, signedIn.session.expiresAt)
    yield* noStore
    return signedIn.session
  })

export const AuthHandlers = HttpApiBuilder.group(BirzhaApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const run = using(yield* Effect.context<SqlClient.SqlClient | ServerSecret | Mailer | SignInConfig>())
    return handlers
      .handle("auth.email.start", ({ payload }) =>
        Effect.gen(function*() {
          const clientIp = yield* clientAddress
          return yield* startSignIn({ email: payload.email, clientIp }).pipe(Effect.catchTag("LimitReached", rateLimited))
        }).pipe(run))
      .handle("auth.email.verify", ({ payload }) => signIn((clientIp) => verifyCode({ ...payload, clientIp })).pipe(run))
      .handle("auth.email.link", ({ payload }) => signIn((clientIp) => consumeLink({ ...payload, clientIp })).pipe(run))
      .handle("auth.logout", ({ request }) =>
        Effect.gen(function*() {
          const token = request.cookies[sessionCookieName]
          // The cookie is cleared only once the revocation is stored: a database failure fails here first.
          if (token !== undefined) yield* revokeToken(Redacted.make(token))
          yield* clearSessionCookie
        }).pipe(run))
      .handle("auth.session", () =>
        Effect.gen(function*() {
          yield* noStore
          return authSessionOf(yield* CurrentActor)
        }))
  }))
