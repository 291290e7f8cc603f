import { catalog, eventTypes, NotReady } from "@birzha/domain"
import { type RunningHost, ServiceLive, startHost } from "@birzha/http-host/internal"
import { FetchHttpClient } from "@effect/platform"
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
  database = await createTestDatabase("client")
  host = await startService(database.url)
  // Migrations run in the background at start; wait until the host says it is ready.
  for (let i = 0; i < 150 && (await fetch(`${host.url}/api/readyz`)).status !== 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
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

  it("reports an unreachable service as a transport error", async () => {
    const error = await createBirzhaClient({ baseUrl: "http://127.0.0.1:1" })["health.live"]().catch((e: unknown) => e)
    expect(error).toMatchObject({ code: "transport_error", status: undefined })
  })
})
