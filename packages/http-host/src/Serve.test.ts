import { catalog, eventTypes } from "@birzha/domain"
import { Validator } from "@seriousme/openapi-schema-validator"
import { ConfigProvider, Layer, Logger, LogLevel } from "effect"
import { createServer, type Server, Socket as NetSocket, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { ServiceLive } from "./Serve.js"
import { type RunningHost, startHost } from "./testing.js"

const settings = { port: 0, host: "127.0.0.1", publicOrigin: "http://localhost:8080", maxBodyBytes: 1024 * 1024, trustProxy: false }

/** The service as `birzha serve` composes it, on the database the environment map names. */
const startService = (env: Record<string, string>) =>
  startHost(
    ServiceLive(settings, { workers: false }).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.None))
    )
  )

const getJson = async (url: string) => {
  const response = await fetch(url)
  return { status: response.status, body: (await response.json()) as unknown, headers: response.headers }
}


describe("the service on a Postgres server", () => {
  let database: TestDatabase
  let host: RunningHost

  beforeAll(async () => {
    database = await createTestDatabase("serve", { migrated: true })
    host = await startService({ DATABASE_URL: database.url })
  })
  afterAll(async () => {
    await host?.close()
    await database?.drop()
  })

  it("answers healthz, and readyz once the migrations are applied", async () => {
    expect(await getJson(`${host.url}/api/healthz`)).toMatchObject({ status: 200, body: { status: "ok" } })
    const ready = await eventually(() => getJson(`${host.url}/api/readyz`), (r) => r.status === 200)
    expect(ready.body).toEqual({ status: "ready", database: "ok", migrations: "ok" })
  })

  it("serves an OpenAPI 3.1 document a validator accepts, with the spec's version and operation ids", async () => {
    const { body, status } = await getJson(`${host.url}/api/v1/openapi.json`)
    expect(status).toBe(200)
    const result = await new Validator().validate(body as Parameters<Validator["validate"]>[0])
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    const document = body as { openapi: string; info: { version: string }; paths: Record<string, Record<string, { operationId: string }>> }
    expect(document.openapi).toBe("3.1.0")
    expect(document.info.version).toBe("2026-10-15")
    const ids = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId))
    expect(ids.sort()).toEqual(catalog.map((entry) => entry.id).sort())
  })

  it("renders a readable API reference at /api/docs naming every operation", async () => {
    const response = await fetch(`${host.url}/api/docs`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/html")
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
    const html = await response.text()
    for (const entry of catalog) expect(html).toContain(entry.id)
  })

  it("lists the 57 event types from the one domain list at both paths", async () => {
    const current = await getJson(`${host.url}/api/v1/event-types`)
    const legacy = await getJson(`${host.url}/event-types`)
    expect(current).toMatchObject({ status: 200, body: { types: [...eventTypes] } })
    expect(legacy.body).toEqual(current.body)
    expect(eventTypes).toHaveLength(57)
  })

  it("answers HEAD wherever it answers GET, with GET's status and headers and no body: an operation, a page, a script, healthz", async () => {
    const page = await fetch(`${host.url}/catalog?lang=en`)
    const script = /<script type="module" src="([^"]+)"/.exec(await page.text())![1]!
    for (const path of ["/api/v1/event-types", "/api/v1/publications?limit=2", "/catalog?lang=en", script, "/api/healthz"]) {
      const get = await fetch(`${host.url}${path}`)
      const head = await fetch(`${host.url}${path}`, { method: "HEAD" })
      expect([path, head.status]).toEqual([path, get.status])
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"))
      expect(await head.text(), path).toBe("")
    }
    // A path with no GET stays 405, naming what it allows.
    const head = await fetch(`${host.url}/api/v1/auth/email/start`, { method: "HEAD" })
    expect([head.status, head.headers.get("allow")]).toEqual([405, "POST"])
  })

  it("routes every operation of the catalog", async () => {
    for (const entry of catalog) {
      const path = entry.path.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000")
      const response = await fetch(`${host.url}${path}`, { method: entry.method })
      const body = (await response.json()) as { error?: { message: string } }
      expect(body.error?.message ?? "", `${entry.method} ${entry.path}`).not.toMatch(/^No operation at/)
      expect(response.status, `${entry.method} ${entry.path}`).not.toBe(405)
    }
  })
})

describe("readiness without a database", () => {
  it("answers readyz 503 not_ready while the database is unreachable, healthz still 200", async () => {
    const port = await freePort()
    const host = await startService({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nothing` })
    try {
      expect((await getJson(`${host.url}/api/healthz`)).status).toBe(200)
      const ready = await getJson(`${host.url}/api/readyz`)
      expect(ready.status).toBe(503)
      expect(ready.body).toEqual({ error: { code: "not_ready", message: "The database does not answer" } })
    } finally {
      await host.close()
    }
  })

  it("goes from ready to 503 when the database goes away, and back when it returns", async () => {
    const database = await createTestDatabase("away")
    const target = new URL(database.url)
    // A TCP relay in front of the real server that the test can cut, as a network failure would.
    const sockets = new Set<Socket>()
    let relay: Server | undefined
    const openRelay = (port: number) =>
      new Promise<void>((resolve) => {
        relay = createServer((client) => {
          const upstream = new NetSocket()
          upstream.connect(Number(target.port || 5432), target.hostname)
          for (const s of [client, upstream]) {
            sockets.add(s)
            s.on("error", () => {})
            s.on("close", () => sockets.delete(s))
          }
          client.pipe(upstream).pipe(client)
        })
        relay.listen(port, "127.0.0.1", () => resolve())
      })
    const cut = () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        relay!.close(() => resolve())
      })
    await openRelay(0)
    const port = (relay!.address() as { port: number }).port
    const viaRelay = new URL(database.url)
    viaRelay.port = String(port)
    const host = await startService({ DATABASE_URL: viaRelay.toString() })
    try {
      expect((await eventually(() => getJson(`${host.url}/api/readyz`), (r) => r.status === 200)).status).toBe(200)
      await cut()
      expect((await eventually(() => getJson(`${host.url}/api/readyz`), (r) => r.status === 503)).status).toBe(503)
      await openRelay(port)
      expect((await eventually(() => getJson(`${host.url}/api/readyz`), (r) => r.status === 200)).status).toBe(200)
    } finally {
      await host.close()
      await cut().catch(() => {})
      await database.drop()
    }
  })
})

describe("the development default origin", () => {
  let database: TestDatabase
  const hosts: Array<RunningHost> = []
  beforeAll(async () => {
    database = await createTestDatabase("serve_loopback")
  })
  afterAll(async () => {
    for (const host of hosts) await host.close()
    await database?.drop()
  })

  const start = async (redirectLoopbackNavigations: boolean) => {
    const host = await startHost(
      ServiceLive({ ...settings, redirectLoopbackNavigations }, { workers: false }).pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", database.url]])))),
        Layer.provide(Logger.minimumLogLevel(LogLevel.None))
      )
    )
    hosts.push(host)
    return host
  }

  it("sends a browser that opens 127.0.0.1 to localhost (where sign-in works), same port and path; API calls are answered", async () => {
    const host = await start(true)
    const port = new URL(host.url).port
    const page = await fetch(`${host.url}/sign-in?next=%2Faccount`, { redirect: "manual", headers: { accept: "text/html", "sec-fetch-mode": "navigate" } })
    expect(page.status).toBe(307)
    expect(page.headers.get("location")).toBe(`http://localhost:${port}/sign-in?next=%2Faccount`)
    expect((await fetch(`${host.url}/api/healthz`, { redirect: "manual", headers: { accept: "text/html" } })).status).toBe(200)
    // A script's request (no navigation, no HTML wanted) is answered where it is.
    expect((await fetch(`${host.url}/sign-in`, { redirect: "manual" })).status).not.toBe(307)
    // At localhost itself nothing moves.
    expect((await fetch(`http://localhost:${port}/sign-in`, { redirect: "manual", headers: { accept: "text/html" } })).status).toBe(200)
  })

  it("redirects nothing once BIRZHA_PUBLIC_ORIGIN is configured", async () => {
    const host = await start(false)
    const page = await fetch(`${host.url}/sign-in`, { redirect: "manual", headers: { accept: "text/html", "sec-fetch-mode": "navigate" } })
    expect(page.status).toBe(200)
  })
})
