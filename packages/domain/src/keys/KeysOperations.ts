import { Effect, Redacted } from "effect"
import type { Actor, SessionActor } from "../kernel/Authentication.js"
import { KeysApi } from "./KeysApi.js"
import { implement } from "../operations/Implementation.js"
import { SessionRequired } from "./KeyErrors.js"
import { createKey, type IssuedKey, listKeys, reissueKey, revokeKey, updateKey } from "./Keys.js"
import { scopeCatalog } from "./Scopes.js"

/** The keys operations are session-only in the catalog (the registry refuses keys); narrowed here for the types. */
const sessionOf = (actor: Actor): Effect.Effect<SessionActor, SessionRequired> =>
  actor.via === "session" ? Effect.succeed(actor) : Effect.fail(new SessionRequired({ message: "Keys are managed in a browser session only" }))

const withSecret = ({ key, secret }: IssuedKey) => ({ key, secret: Redacted.value(secret) })

export const KeysOperations = implement(KeysApi)({
  "scopes.list": () => Effect.succeed({ items: scopeCatalog }),
  "keys.list": (_, actor) => Effect.flatMap(sessionOf(actor), listKeys),
  "keys.create": ({ payload }, actor) => Effect.flatMap(sessionOf(actor), (session) => Effect.map(createKey(session, payload), withSecret)),
  "keys.update": ({ path, payload }, actor) => Effect.flatMap(sessionOf(actor), (session) => updateKey(session, path.uuid, payload)),
  "keys.reissue": ({ path }, actor) => Effect.flatMap(sessionOf(actor), (session) => Effect.map(reissueKey(session, path.uuid), withSecret)),
  "keys.revoke": ({ path }, actor) => Effect.flatMap(sessionOf(actor), (session) => revokeKey(session, path.uuid))
})
