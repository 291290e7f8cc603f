import {
  accountForVerifiedEmail,
  actorForKey,
  actorForSession,
  createKey,
  createSession,
  listKeys,
  reissueKey,
  revokeKey,
  ServerSecret
} from "@birzha/domain/internal"
import { runMigrations } from "@birzha/domain/internal"
import { makePgliteClient } from "@birzha/infrastructure"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmbeddedDataDir, embeddedDataDir } from "../../../../testing/pglite.js"

/** PGlite's initdb, run once per test run for the template data directory. */
const initialise = (dir: string) => Effect.runPromise(Effect.scoped(makePgliteClient(dir)))
let data: EmbeddedDataDir
beforeAll(async () => {
  data = await embeddedDataDir("keys", initialise)
})
afterAll(() => data?.remove())

describe("keys on the embedded database", () => {
  it("makes the personal key at sign-in, creates, verifies, reissues and revokes keys through PGlite with the same SQL", async () => {
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* makePgliteClient(data.dir)
      const services = Layer.mergeAll(
        Layer.succeed(SqlClient.SqlClient, sql),
        Layer.succeed(ServerSecret, Redacted.make("k".repeat(32)))
      )
      return yield* Effect.gen(function*() {
        yield* runMigrations
        const signedIn = yield* accountForVerifiedEmail("embedded.keys@example.com")
        yield* accountForVerifiedEmail("embedded.keys@example.com")
        const session = yield* createSession(signedIn.accountUuid, signedIn.profileUuid)
        const actor = Option.getOrThrow(yield* actorForSession(session.sessionUuid))
        const before = yield* listKeys(actor)
        const made = yield* createKey(actor, {
          requestUuid: crypto.randomUUID(),
          name: "embedded",
          scopes: ["tasks:read", "profiles:read"],
          httpEnabled: true,
          mcpEnabled: false
        })
        const verified = yield* actorForKey(made.secret)
        const reissued = yield* reissueKey(actor, made.key.uuid)
        const oldAfterReissue = yield* actorForKey(made.secret)
        yield* revokeKey(actor, made.key.uuid)
        const afterRevoke = yield* actorForKey(reissued.secret)
        return { before, made, verified, oldAfterReissue, afterRevoke }
      }).pipe(Effect.provide(services))
    })))
    expect(result.before.items.map((k) => [k.kind, k.status, k.scopes])).toEqual([["personal", "not_issued", ["profiles:read"]]])
    expect(result.made.key).toMatchObject({ kind: "application", status: "active", scopes: ["profiles:read", "tasks:read"], lifetimeDays: 90 })
    expect(Option.map(result.verified, (a) => [a.via, a.keyUuid, a.scopes])).toEqual(Option.some(["key", result.made.key.uuid, ["profiles:read", "tasks:read"]]))
    expect(Option.isNone(result.oldAfterReissue)).toBe(true)
    expect(Option.isNone(result.afterRevoke)).toBe(true)
  })
})
