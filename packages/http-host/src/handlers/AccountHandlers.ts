import { allScopes, BirzhaApi, CurrentActor, Forbidden, isGrantableScope, NotFound, SessionRequired } from "@birzha/domain"
import { actorForSession, authSessionOf, createProfile, deleteAccount, isModerator, ownProfiles, publicProfile, switchProfile, updateProfile } from "@birzha/domain/server"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { clearSessionCookie, noStore } from "./SessionCookie.js"
import { using } from "./Storage.js"

export const AccountHandlers = HttpApiBuilder.group(BirzhaApi, "account", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const withSql = using(yield* Effect.context<SqlClient.SqlClient>())
    return handlers
      .handle("getMyCapabilities", () =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          yield* noStore
          const [profile] = yield* withSql(sql<{ id: string }>`SELECT id FROM profiles WHERE uuid = ${actor.profileUuid}`)
          const base = {
            account: { uuid: actor.accountUuid, email: actor.email },
            profile: { uuid: actor.profileUuid, id: profile?.id ?? "", name: actor.profileName, type: actor.profileType },
            expiresAt: actor.expiresAt
          }
          // A session holds every scope on its own records (moderation ones only with the moderator role);
          // a key only its own that still exist and may be held.
          if (actor.via === "session") {
            const moderator = yield* withSql(isModerator(actor.email))
            const scopes = moderator ? allScopes : allScopes.filter((scope) => !scope.startsWith("moderation:"))
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
        }))
      .handle("profiles.get_own", () =>
        Effect.gen(function*() {
          yield* noStore
          return yield* withSql(ownProfiles(yield* CurrentActor))
        }))
      .handle("profiles.update", ({ payload }) => Effect.flatMap(CurrentActor, (actor) => withSql(updateProfile(actor, payload))))
      .handle("profiles.create", ({ payload }) => Effect.flatMap(CurrentActor, (actor) => withSql(createProfile(actor, payload))))
      .handle("profiles.switch", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          // Session-only in the catalog (a key is bound to one profile); narrowed here for the types.
          if (actor.via !== "session") return yield* new SessionRequired({ message: "profiles.switch changes a browser session" })
          yield* withSql(switchProfile(actor, payload.profileUuid))
          const switched = yield* withSql(actorForSession(actor.sessionUuid))
          if (Option.isNone(switched)) return yield* new NotFound({ message: "No such profile of this account" })
          return authSessionOf(switched.value)
        }))
      .handle("accounts.delete", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          if (payload.confirmEmail.trim().toLowerCase() !== actor.email) {
            return yield* new Forbidden({ message: "confirmEmail does not match the signed-in account" })
          }
          yield* withSql(deleteAccount(actor.accountUuid))
          yield* clearSessionCookie
        }))
      .handle("getProfile", ({ path }) =>
        Effect.flatMap(withSql(publicProfile(path.uuid)), Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such profile" })),
          onSome: Effect.succeed
        })))
  }))
