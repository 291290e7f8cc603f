import { DatabaseFromPool } from "@birzha/infrastructure"
import { ConfigProvider, Layer, Logger, LogLevel } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { type RunningHandler, ServiceHandlerLive, startHandler } from "./index.js"

const origin = "http://app.test"
let database: TestDatabase
let pool: Pg.Pool
let handler: RunningHandler
let server: Server
let plainNode: string
beforeAll(async () => {
  database = await createTestDatabase("mounted_handler", { migrated: true })
  pool = new Pg.Pool({ connectionString: database.url, max: 4 })
  handler = await startHandler(
    ServiceHandlerLive({ publicOrigin: origin, basePath: "/birzha", maxBodyBytes: 64 * 1024 }, { database: DatabaseFromPool(pool), workers: false }).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ BIRZHA_SECRET: "mounted-handler-test-secret-of-32-characters" }))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.None))
    )
  )
  // A plain Node server that hands over its requests with the mount path still on them.
  server = createServer((req, res) => {
    if (req.url?.startsWith("/birzha/") === true) handler.node(req, res)
    else res.writeHead(200, { "content-type": "text/plain" }).end("own route")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  plainNode = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  await eventually(
    async () => (await handler.fetch(new Request(`${origin}/birzha/api/readyz`))).status,
    (status) => status === 200,
    "the mounted handler becomes ready"
  )
})
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve))
  await handler?.dispose()
  await pool?.end()
  await database?.drop()
})

describe("the host as a mounted handler", () => {
  it("answers a web-standard Request with the Response the Node host writes", async () => {
    const response = await handler.fetch(new Request(`${origin}/api/v1/event-types`))
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(response.headers.get("connection")).toBeNull()
    expect(((await response.json()) as { types: Array<string> }).types).toContain("publication.submitted")
  })

  it("reads a request body and answers an operation's typed error in the envelope", async () => {
    const started = await handler.fetch(new Request(`${origin}/api/v1/auth/email/start`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ email: "not an address" })
    }))
    expect(started.status).toBe(400)
    expect(await started.json()).toMatchObject({ error: { code: "invalid_email" } })
  })

  it("answers a body over the limit 413, written on the connection itself, and a missing route 404", async () => {
    const tooLarge = await handler.fetch(new Request(`${origin}/api/v1/auth/email/start`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ email: "x".repeat(200 * 1024) })
    }))
    expect(tooLarge.status).toBe(413)
    expect(await tooLarge.json()).toMatchObject({ error: { code: "payload_too_large" } })
    const missing = await handler.fetch(new Request(`${origin}/api/v1/nothing-here`))
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: { code: "not_found" } })
  })

  it("serves a plain Node server's requests that still carry the mount path", async () => {
    expect(await (await fetch(`${plainNode}/own`)).text()).toBe("own route")
    const types = await fetch(`${plainNode}/birzha/api/v1/event-types`)
    expect(types.status).toBe(200)
    const document = (await (await fetch(`${plainNode}/birzha/api/v1/openapi.json`)).json()) as { openapi: string }
    expect(document.openapi).toMatch(/^3\./)
  })
})
