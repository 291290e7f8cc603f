import { SqlClient } from "@effect/sql"
import { Duration, Effect, Either, Exit, ManagedRuntime, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { ResyncRequired } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { runMigrations } from "../store/Migrations.js"
import { decodeEventCursor, encodeEventCursor } from "./EventCursor.js"
import { listEvents } from "./EventLog.js"
import { eventTypes } from "./EventType.js"
import { expandTypePatterns, parseTypeList } from "./TypePattern.js"
import { testPgLayer } from "../../test/pgLayer.js"

let database: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>

beforeAll(async () => {
  database = await createTestDatabase("eventlog", { migrated: true })
  runtime = ManagedRuntime.make(testPgLayer(database.url, 2))
  await runtime.runPromise(runMigrations)
})
afterAll(async () => {
  await runtime?.dispose()
  await database?.drop()
})

const actor: Actor = {
  accountUuid: crypto.randomUUID(),
  email: "clock@example.com",
  profileUuid: crypto.randomUUID(),
  profileName: "Clock",
  profileType: "Физлицо",
  via: "session",
  sessionUuid: crypto.randomUUID(),
  expiresAt: new Date(Date.now() + 86_400_000)
}

const days30 = Duration.toMillis(Duration.days(30))

describe("the events cursor", () => {
  it("is issued at the service's clock and expires 30 days later, to the millisecond", async () => {
    const start = Date.UTC(2026, 9, 15, 12)
    const result = await runtime.runPromise(Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const { nextCursor } = yield* listEvents(actor, {})
      yield* TestClock.setTime(start + days30)
      const atLimit = yield* Effect.exit(listEvents(actor, { cursor: nextCursor }))
      yield* TestClock.setTime(start + days30 + 1)
      const past = yield* Effect.exit(listEvents(actor, { cursor: nextCursor }))
      return { atLimit, past }
    }).pipe(Effect.provide(TestContext.TestContext)))
    expect(Exit.isSuccess(result.atLimit)).toBe(true)
    expect(result.past).toEqual(Exit.fail(expect.any(ResyncRequired)))
  })

  it("carries its position and issue time and nothing else readable as a position", async () => {
    const cursor = encodeEventCursor({ position: "9007199254740993", issuedAt: 1 })
    expect(await Effect.runPromise(decodeEventCursor(cursor, 2))).toEqual({ position: "9007199254740993", issuedAt: 1 })
    const refused = await Effect.runPromise(Effect.flip(decodeEventCursor(Buffer.from("[1]").toString("base64url"), 2)))
    expect(refused._tag).toBe("InvalidRequest")
  })
})

describe("type patterns", () => {
  it("expand * over the catalog's types, keeping its order", () => {
    expect(expandTypePatterns(["*"])).toEqual(Either.right(eventTypes))
    expect(expandTypePatterns(["publication.*"])).toEqual(Either.right([
      "publication.deleted",
      "publication.draft_saved",
      "publication.hidden",
      "publication.moderated",
      "publication.restored",
      "publication.submitted"
    ]))
    expect(expandTypePatterns(["learning.*.completed", "task.closed"])).toEqual(Either.right([
      "learning.course.completed",
      "learning.enrollment.completed",
      "learning.module.completed",
      "task.closed"
    ]))
    expect(parseTypeList(" offer.withdrawn , offer.* ")).toEqual(Either.right(["offer.received", "offer.status_changed", "offer.withdrawn"]))
  })

  it("refuse a pattern that names no type or is not a pattern", () => {
    for (const bad of [["nothing.*"], ["publication"], ["Publication.*"], ["publication.%"], ["x".repeat(101)]]) {
      expect(Either.isLeft(expandTypePatterns(bad)), bad.join()).toBe(true)
    }
    expect(Either.isLeft(parseTypeList(" , "))).toBe(true)
  })
})
