import { BirzhaApi, catalog, eventTypes, NotReady, RateLimited } from "@birzha/domain"
import { type RunningHost, ServiceLive, startHost, untilReady } from "@birzha/http-host/internal"
import { FetchHttpClient, HttpApiClient } from "@effect/platform"
import { ConfigProvider, Effect, Either, Layer, Logger, LogLevel } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { Birzha, BirzhaError, createBirzhaClient, makeBirzhaClient } from "./index.js"

const settings = { port: 0, host: "127.0.0.1", publicOrigin: "http://localhost:8080", maxBodyBytes: 1024 * 1024, trustProxy: false }
const startService = (databaseUrl: string) =>
  startHost(
    ServiceLive(settings, { workers: false }).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", databaseUrl]])))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.None))
    )
  )

let database: TestDatabase
let host: RunningHost
beforeAll(async () => {
  database = await createTestDatabase("client", { migrated: true })
  host = await startService(database.url)
  // Migrations run in the background at start; wait until the host says it is ready.
  await untilReady(host)
})
afterAll(async () => {
  await host?.close()
  await database?.drop()
})

const ids = catalog.map((entry) => entry.id).sort()

describe("the SDK", () => {
  it("has exactly one method per catalog operation id, in both clients", () => {
    const effectClient = Effect.runSync(makeBirzhaClient({ baseUrl: host.url }).pipe(Effect.provide(FetchHttpClient.layer)))
    expect(Object.keys(effectClient).sort()).toEqual(ids)
    expect(Object.keys(createBirzhaClient({ baseUrl: host.url })).sort()).toEqual(ids)
  })

  // The client derives a method on its first call; every operation's must still derive.
  it("derives every operation's method from the catalog's declaration, as the client's methods are named", () => {
    const derived = Effect.runSync(HttpApiClient.make(BirzhaApi, { baseUrl: host.url }).pipe(Effect.provide(FetchHttpClient.layer)))
    expect(Object.keys(derived).sort()).toEqual(ids)
    expect(Object.values(derived).every((method) => typeof method === "function")).toBe(true)
  })

  it("calls the running host through the Effect client", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function*() {
        const client = yield* Birzha
        const types = yield* client["events.types"]()
        const live = yield* client["health.live"]()
        return { types, live }
      }).pipe(Effect.provide(Birzha.layerFetch({ baseUrl: host.url })))
    )
    expect(result).toEqual({ types: { types: [...eventTypes] }, live: { status: "ok" } })
  })

  it("calls the running host through the Promise facade", async () => {
    const client = createBirzhaClient({ baseUrl: host.url, apiKey: "bk_not_checked_yet" })
    expect(await client["events.types_legacy"]()).toEqual({ types: [...eventTypes] })
    const ready = await client["health.ready"]()
    expect(ready.status).toBe("ready")
  })

  it("surfaces the service's error envelope as typed errors in both clients", async () => {
    const port = await freePort()
    const down = await startService(`postgres://postgres@127.0.0.1:${port}/nothing`)
    try {
      const effectResult = await Effect.runPromise(
        Effect.either(Effect.flatMap(Birzha, (client) => client["health.ready"]())).pipe(Effect.provide(Birzha.layerFetch({ baseUrl: down.url })))
      )
      expect(Either.isLeft(effectResult) && effectResult.left).toBeInstanceOf(NotReady)
      const error = await createBirzhaClient({ baseUrl: down.url })["health.ready"]().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(BirzhaError)
      expect(error).toMatchObject({ code: "not_ready", status: 503, message: "The database does not answer" })
    } finally {
      await down.close()
    }
  })

  it("a refusal's members arrive as the typed error's fields in the Effect client and as details in the Promise facade", async () => {
    // Sign-in is for the service's own origin; a second start within the resend cooldown is refused.
    const options = { baseUrl: host.url, headers: { origin: settings.publicOrigin } }
    const payload = { email: `client.limit.${Date.now()}@example.com` }
    const client = createBirzhaClient(options)
    await client["auth.email.start"]({ payload })
    const effectResult = await Effect.runPromise(
      Effect.either(Effect.flatMap(Birzha, (birzha) => birzha["auth.email.start"]({ payload }))).pipe(Effect.provide(Birzha.layerFetch(options)))
    )
    const typed = Either.isLeft(effectResult) ? effectResult.left : undefined
    expect(typed).toBeInstanceOf(RateLimited)
    expect(typed).toMatchObject({ limit: 1, windowSeconds: 60 })
    expect((typed as RateLimited).retryAfterSeconds).toBeGreaterThanOrEqual(1)
    const error = await client["auth.email.start"]({ payload }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BirzhaError)
    expect(error).toMatchObject({ code: "rate_limited", status: 429, details: { limit: 1, windowSeconds: 60 } })
  })

  it("calls an operation whose inputs are all optional with no argument, by its id and in its group, in both clients", async () => {
    const client = createBirzhaClient({ baseUrl: host.url })
    // listPublications and tasks.list take only optional url parameters (tasks.list a signed-in owner too).
    const page = await client.listPublications()
    expect(page.items).toEqual([])
    expect(await client["tasks.list"]().catch((e: unknown) => e)).toMatchObject({ code: "unauthenticated", status: 401 })
    expect(await client.tasks.list().catch((e: unknown) => e)).toMatchObject({ code: "unauthenticated", status: 401 })
    expect(await client.events.types()).toEqual({ types: [...eventTypes] })
    expect(await client.getPublication({ path: { uuid: crypto.randomUUID() } }).catch((e: unknown) => e)).toMatchObject({ code: "not_found" })
    // A required part stays required; an unknown group or operation is no property (the compiler
    // checks these; they are never called).
    const refusedByTheCompiler = [
      // @ts-expect-error tasks.save takes its payload
      () => client.tasks.save(),
      // @ts-expect-error there is no such group
      () => client.nope,
      // @ts-expect-error there is no such operation in the group
      () => client.tasks.nope
    ]
    expect(refusedByTheCompiler).toHaveLength(3)
    expect((client as unknown as Record<string, unknown>)["nope"]).toBeUndefined()
    expect(Object.keys(client)).not.toContain("tasks")

    const effectResult = await Effect.runPromise(
      Effect.gen(function*() {
        const birzha = yield* Birzha
        const all = yield* birzha.listPublications()
        const types = yield* birzha.events.types()
        const own = yield* Effect.flip(birzha.tasks.list())
        return { items: all.items, types, own: own._tag }
      }).pipe(Effect.provide(Birzha.layerFetch({ baseUrl: host.url })))
    )
    expect(effectResult).toEqual({ items: [], types: { types: [...eventTypes] }, own: "Unauthenticated" })
  })

  it("reports an unreachable service as a transport error", async () => {
    const error = await createBirzhaClient({ baseUrl: "http://127.0.0.1:1" })["health.live"]().catch((e: unknown) => e)
    expect(error).toMatchObject({ code: "transport_error", status: undefined })
  })
})
