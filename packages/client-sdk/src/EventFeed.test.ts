import { type EventEnvelope, ResyncRequired } from "@birzha/domain"
import { type RunningHost, startService, untilReady } from "@birzha/http-host/internal"
import { DatabaseLive, MigrationsAtStart } from "@birzha/infrastructure"
import { WorkerHostLive } from "@birzha/worker-host"
import { ConfigProvider, Effect, Either, Exit, Layer, Logger, LogLevel, Scope, Stream } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { Birzha, createBirzhaClient, eventStream, followEvents, ResyncRequiredError } from "./index.js"

const origin = "http://localhost:8080"
let database: TestDatabase
let host: RunningHost
let db: Pg.Client
let worker: Scope.CloseableScope

beforeAll(async () => {
  database = await createTestDatabase("client_events", { migrated: true })
  host = await startService({ env: { DATABASE_URL: database.url }, publicOrigin: origin, trustProxy: true })
  await untilReady(host)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  // A worker process beside the host, as `birzha worker` composes it: it sequences what the host writes.
  worker = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(
    Layer.mergeAll(WorkerHostLive, MigrationsAtStart).pipe(
      Layer.provide(DatabaseLive),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", database.url]])))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.None))
    ),
    worker
  ))
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(worker, Exit.void))
  await db?.end()
  await host?.close()
  await database?.drop()
})

const updateProfile = async (who: SignedIn, revision: number) => {
  const response = await fetch(`${host.url}/api/v1/commands/profiles.update`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: who.cookie, origin },
    body: JSON.stringify({
      requestUuid: crypto.randomUUID(),
      expectedRevision: revision,
      data: { name: `Имя ${revision}`, type: "Физлицо", isPublic: false, showContacts: false }
    })
  })
  expect(response.status).toBe(200)
}

const untilSequenced = async () => {
  for (let i = 0; i < 500; i++) {
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_events WHERE position IS NULL")
    if (rows[0]!.n === 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error("events stayed unsequenced")
}

const oldCursor = Buffer.from(JSON.stringify({ v: 1, p: "0", t: Date.now() - 31 * 24 * 60 * 60 * 1000 })).toString("base64url")

describe("followEvents (Promise client)", () => {
  it("reads every page along the cursor, ends when caught up, and resumes from feed.cursor", async () => {
    const me = await signIn({ url: host.url, origin, db })
    for (let revision = 1; revision <= 5; revision++) await updateProfile(me, revision)
    await untilSequenced()
    const client = createBirzhaClient({ baseUrl: host.url, headers: { cookie: me.cookie } })
    const feed = followEvents(client, { limit: 2 })
    const revisions: Array<number> = []
    for await (const event of feed) revisions.push(event.aggregate.revision)
    expect(revisions).toEqual([2, 3, 4, 5, 6])
    expect(feed.cursor).toEqual(expect.any(String))
    await updateProfile(me, 6)
    await untilSequenced()
    const later: Array<number> = []
    for await (const event of followEvents(client, { cursor: feed.cursor })) later.push(event.aggregate.revision)
    expect(later).toEqual([7])
  })

  it("with follow: true keeps polling and delivers events sequenced later, until the signal aborts", async () => {
    const me = await signIn({ url: host.url, origin, db })
    await updateProfile(me, 1)
    const client = createBirzhaClient({ baseUrl: host.url, headers: { cookie: me.cookie } })
    const abort = new AbortController()
    const seen: Array<EventEnvelope> = []
    const done = (async () => {
      for await (const event of followEvents(client, { follow: true, pollIntervalMs: 20, limit: 1, signal: abort.signal })) {
        seen.push(event)
        if (seen.length === 1) {
          await updateProfile(me, 2)
          await updateProfile(me, 3)
        }
        if (seen.length === 3) abort.abort()
      }
    })()
    await done
    expect(seen.map((e) => [e.type, e.aggregate.revision])).toEqual([["profile.updated", 2], ["profile.updated", 3], ["profile.updated", 4]])
  })

  it("rejects with ResyncRequiredError for a cursor older than 30 days", async () => {
    const me = await signIn({ url: host.url, origin, db })
    const client = createBirzhaClient({ baseUrl: host.url, headers: { cookie: me.cookie } })
    const error = await (async () => {
      for await (const _ of followEvents(client, { cursor: oldCursor })) { /* never reached */ }
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ResyncRequiredError)
    expect(error).toMatchObject({ code: "resync_required", status: 410 })
  })
})

describe("eventStream (Effect client)", () => {
  it("streams the pages and fails with the typed ResyncRequired for an expired cursor", async () => {
    const me = await signIn({ url: host.url, origin, db })
    for (let revision = 1; revision <= 3; revision++) await updateProfile(me, revision)
    await untilSequenced()
    const layer = Birzha.layerFetch({ baseUrl: host.url, headers: { cookie: me.cookie } })
    const events = await Effect.runPromise(Stream.runCollect(eventStream({ limit: 2, types: ["profile.*"] })).pipe(Effect.provide(layer)))
    expect([...events].map((e) => e.aggregate.revision)).toEqual([2, 3, 4])
    const expired = await Effect.runPromise(Effect.either(Stream.runCollect(eventStream({ cursor: oldCursor }))).pipe(Effect.provide(layer)))
    expect(Either.isLeft(expired) && expired.left).toBeInstanceOf(ResyncRequired)
  })
})
