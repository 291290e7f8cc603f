import { Effect, Option } from "effect"
import { AccountApi } from "./AccountApi.js"
import { Forbidden, NotFound } from "../kernel/ApiError.js"
import { deleteAccount } from "../auth/Accounts.js"
import { actorForSession, authSessionOf } from "../auth/Sessions.js"
import { SessionRequired } from "../keys/KeyErrors.js"
import { allScopes, isGrantableScope } from "../keys/Scopes.js"
import { implement } from "../operations/Implementation.js"
import { rolesOfAddress } from "../store/RoleGrants.js"
import { createProfile, ownProfiles, profileIdOf, publicProfile, switchProfile, updateProfile } from "./Profiles.js"

export const AccountOperations = implement(AccountApi)({
  getMyCapabilities: (_, actor) =>
    Effect.gen(function*() {
      if (actor.via === "automation") return yield* new SessionRequired({ message: "getMyCapabilities answers a session or a key, not an automation rule" })
      const base = {
        account: { uuid: actor.accountUuid, email: actor.email },
        profile: { uuid: actor.profileUuid, id: yield* profileIdOf(actor.profileUuid), name: actor.profileName, type: actor.profileType },
        expiresAt: actor.expiresAt
      }
      // A session holds every scope on its own records (moderation ones only with the moderator role,
      // admin ones only with the operator role); a key only its own that still exist and may be held.
      if (actor.via === "session") {
        const { moderator, operator } = yield* rolesOfAddress(actor.email.toLowerCase())
        const scopes = allScopes.filter((scope) =>
          (moderator || !scope.startsWith("moderation:")) && (operator || !scope.startsWith("admin:")))
        return { ...base, authentication: actor.via, scopes }
      }
      return {
        ...base,
        authentication: actor.via,
        key: {
          uuid: actor.keyUuid,
          name: actor.keyName,
          kind: actor.keyKind,
          httpEnabled: actor.httpEnabled,
          mcpEnabled: actor.mcpEnabled,
          expiresAt: actor.expiresAt
        },
        scopes: actor.scopes.filter(isGrantableScope)
      }
    }),
  "profiles.get_own": (_, actor) => ownProfiles(actor),
  "profiles.update": ({ payload }, actor) => updateProfile(actor, payload),
  "profiles.create": ({ payload }, actor) => createProfile(actor, payload),
  "profiles.switch": ({ payload }, actor) =>
    Effect.gen(function*() {
      // Session-only in the catalog (a key is bound to one profile); narrowed here for the types.
      if (actor.via !== "session") return yield* new SessionRequired({ message: "profiles.switch changes a browser session" })
      yield* switchProfile(actor, payload.profileUuid)
      const switched = yield* actorForSession(actor.sessionUuid)
      if (Option.isNone(switched)) return yield* new NotFound({ message: "No such profile of this account" })
      return authSessionOf(switched.value)
    }),
  "accounts.delete": ({ payload }, actor, call) =>
    Effect.gen(function*() {
      if (payload.confirmEmail.trim().toLowerCase() !== actor.email) {
        return yield* new Forbidden({ message: "confirmEmail does not match the signed-in account" })
      }
      yield* deleteAccount(actor.accountUuid)
      call.facts.session = "ended"
    }),
  getProfile: ({ path }) =>
    Effect.flatMap(publicProfile(path.uuid), Option.match({
      onNone: () => Effect.fail(new NotFound({ message: "No such profile" })),
      onSome: Effect.succeed
    }))
})
