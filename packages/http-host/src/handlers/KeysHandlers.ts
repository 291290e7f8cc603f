import { type Actor, BirzhaApi, CurrentActor, scopeCatalog, type SessionActor, SessionRequired } from "@birzha/domain"
import { createKey, type IssuedKey, listKeys, reissueKey, revokeKey, ServerSecret, updateKey } from "@birzha/domain/server"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Redacted } from "effect"
import { noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

/** The keys operations are session-only in the catalog (the middleware refuses keys); narrowed here for the types. */
const sessionOf = (actor: Actor): Effect.Effect<SessionActor, SessionRequired> =>
  actor.via === "session" ? Effect.succeed(actor) : Effect.fail(new SessionRequired({ message: "Keys are managed in a browser session only" }))

const withSecret = ({ key, secret }: IssuedKey) => ({ key, secret: Redacted.value(secret) })

export const KeysHandlers = HttpApiBuilder.group(BirzhaApi, "keys", (handlers) =>
  Effect.gen(function*() {
    const run = using(yield* Effect.context<SqlClient.SqlClient | ServerSecret>())
    const asSession = Effect.flatMap(CurrentActor, sessionOf)
    return handlers
      .handle("scopes.list", () => Effect.succeed({ items: scopeCatalog }))
      .handle("keys.list", () =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(listKeys(yield* asSession))
        }))
      .handle("keys.create", ({ payload }) =>
        Effect.gen(function*() {
          yield* noStore
          return withSecret(yield* run(createKey(yield* asSession, payload)))
        }))
      .handle("keys.update", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(updateKey(yield* asSession, path.uuid, payload))
        }))
      .handle("keys.reissue", ({ path }) =>
        Effect.gen(function*() {
          yield* noStore
          return withSecret(yield* run(reissueKey(yield* asSession, path.uuid)))
        }))
      .handle("keys.revoke", ({ path }) =>
        Effect.gen(function*() {
          yield* noStore
          return yield* run(revokeKey(yield* asSession, path.uuid))
        }))
  }))
