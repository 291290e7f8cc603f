import { Effect, Redacted } from "effect"
import { AuthApi } from "./AuthApi.js"
import type { Call } from "../operations/Implementation.js"
import { LimitReached, rateLimitedBy } from "./RateLimit.js"
import { authSessionOf, revokeSession } from "./Sessions.js"
import { consumeLink, type SignedIn, startSignIn, verifyCode } from "./SignIn.js"
import { implement } from "../operations/Implementation.js"

/** 429, and the real remaining wait for the transport to tell (HTTP: `Retry-After`, whole seconds, at least 1). */
const rateLimited = (call: Call) => (limit: LimitReached) =>
  Effect.suspend(() => {
    call.facts.retryAfterSeconds = Math.max(1, Math.ceil(limit.retryAfterSeconds))
    return Effect.fail(rateLimitedBy(limit, call.facts.retryAfterSeconds))
  })

/** Completes sign-in (code or link); the session is handed to the transport once its transaction has committed. */
const signIn = <E, R>(call: Call, complete: (clientIp: string) => Effect.Effect<SignedIn, E | LimitReached, R>) =>
  Effect.gen(function*() {
    const signedIn = yield* complete(call.clientAddress).pipe(
      Effect.catchIf((error): error is Extract<E | LimitReached, LimitReached> => error instanceof LimitReached, rateLimited(call))
    )
    call.facts.session = { token: Redacted.value(signedIn.token), expiresAt: signedIn.session.expiresAt }
    return signedIn.session
  })

export const AuthOperations = implement(AuthApi)({
  "auth.email.start": ({ payload }, _, call) =>
    startSignIn({ email: payload.email, clientIp: call.clientAddress }).pipe(Effect.catchTag("LimitReached", rateLimited(call))),
  "auth.email.verify": ({ payload }, _, call) => signIn(call, (clientIp) => verifyCode({ ...payload, clientIp })),
  "auth.email.link": ({ payload }, _, call) => signIn(call, (clientIp) => consumeLink({ ...payload, clientIp })),
  "auth.logout": (_, caller, call) =>
    Effect.gen(function*() {
      // The session ends only once the revocation is stored: a database failure fails here first.
      if (caller?.via === "session") yield* revokeSession(caller.sessionUuid)
      call.facts.session = "ended"
    }),
  "auth.session": (_, actor) => Effect.succeed(authSessionOf(actor))
})
