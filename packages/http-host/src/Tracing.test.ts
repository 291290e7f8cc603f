import { DatabaseLive, MigrationsAtStart, TracingLive } from "@birzha/infrastructure"
import { WorkerHostLive } from "@birzha/worker-host/internal"
import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { eventually } from "../../../testing/progress.js"
import { signIn } from "../../../testing/signIn.js"
import { type Receiver, startReceiver } from "../../../testing/webhookReceiver.js"
import { type RunningHost, startService, untilReady } from "./testing.js"

/** A span as an OTLP/HTTP JSON export carries it (the fields read here). */
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly links?: ReadonlyArray<unknown>
}

/** A real OTLP/HTTP receiver: every span of every `POST /v1/traces` (JSON), with the resource's service name. */
const startCollector = async () => {
  const spans: Array<OtlpSpan & { readonly service: string }> = []
  const paths: Array<string> = []
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      paths.push(`${request.method} ${request.url} ${request.headers["content-type"]}`)
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans: Array<{
          resource: { attributes: OtlpSpan["attributes"] }
          scopeSpans: Array<{ spans: Array<OtlpSpan> }>
        }>
      }
      for (const resource of body.resourceSpans) {
        const service = String(resource.resource.attributes.find((a) => a.key === "service.name")?.value["stringValue"])
        for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service })
      }
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    paths,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

/** Whether `span` is `ancestor` or below it, through the parents the collector received. */
const descendsFrom = (span: OtlpSpan, ancestor: OtlpSpan): boolean => {
  let at: OtlpSpan | undefined = span
  for (let depth = 0; at !== undefined && depth < 50; depth++) {
    if (at.spanId === ancestor.spanId) return true
    const parent: string | undefined = at.parentSpanId
    at = parent === undefined || parent === "" ? undefined : collector.spans.find((other) => other.spanId === parent)
  }
  return false
}

let collector: Awaited<ReturnType<typeof startCollector>>
let database: TestDatabase
let host: RunningHost
let db: Pg.Client
let worker: Scope.CloseableScope
let webhooks: Receiver
let origin: string

beforeAll(async () => {
  collector = await startCollector()
  webhooks = await startReceiver()
  database = await createTestDatabase("tracing", { migrated: true })
  const port = await freePort()
  origin = `http://localhost:${port}`
  const env = {
    DATABASE_URL: database.url,
    BIRZHA_SECRET: "tracing tests: a server secret of at least 32 characters",
    BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "birzha-test",
    OTEL_BSP_SCHEDULE_DELAY: "100"
  }
  host = await startService({ env, port, publicOrigin: origin, trustProxy: true })
  await untilReady(host)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  // A worker beside the host, as `birzha worker` runs it: with its own tracing from the same variables.
  worker = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(
    Layer.mergeAll(WorkerHostLive, MigrationsAtStart).pipe(
      Layer.provide(DatabaseLive),
      Layer.provide(TracingLive),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.None))
    ),
    worker
  ))
})
afterAll(async () => {
  if (worker !== undefined) await Effect.runPromise(Scope.close(worker, Exit.void))
  await db?.end()
  await host?.close()
  await database?.drop()
  await webhooks?.stop()
  await collector?.stop()
})

const call = async (method: string, path: string, cookie: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: { "content-type": "application/json", cookie, origin, ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}


describe("traces over OTLP/HTTP", () => {
  it("an operation's request, its SQL and the webhook attempt it caused arrive as one trace, named and attributed", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const created = await call("POST", "/api/v1/webhook-endpoints", owner.cookie, {
      requestUuid: randomUUID(),
      url: webhooks.url,
      eventTypes: ["profile.updated"]
    })
    expect(created.status).toBe(200)
    const endpoint = created.body["endpoint"]
    expect((await call("POST", `/api/v1/webhook-endpoints/${endpoint.uuid}/approve`, owner.cookie, { url: endpoint.url, expectedRevision: endpoint.revision })).status).toBe(200)
    expect((await call("POST", `/api/v1/webhook-endpoints/${endpoint.uuid}/test`, owner.cookie, { requestUuid: randomUUID() })).status).toBe(200)
    await eventually(() => webhooks.received.length, (n) => n >= 1, "the test delivery")
    await eventually(
      async () => (await db.query<{ state: string }>("SELECT state FROM webhook_endpoints WHERE uuid = $1", [endpoint.uuid])).rows[0]?.state,
      (state) => state === "active",
      "the endpoint active"
    )

    const requestId = `trace-test-${randomUUID()}`
    const own = await call("GET", "/api/v1/commands/profiles.get_own", owner.cookie)
    const updated = await call("POST", "/api/v1/commands/profiles.update", owner.cookie, {
      requestUuid: randomUUID(),
      expectedRevision: own.body["profile"].revision,
      data: { name: "Трассировка", type: "Самозанятый", isPublic: true, showContacts: false, contacts: "", categories: ["Дизайн"], structuredContacts: [] }
    }, { "x-request-id": requestId })
    expect(updated.status, JSON.stringify(updated.body)).toBe(200)
    // A refused call: its span carries the status and the error's code.
    const refused = await call("POST", "/api/v1/commands/profiles.update", owner.cookie, {
      requestUuid: randomUUID(),
      expectedRevision: 1,
      data: { name: "Трассировка", type: "Самозанятый", isPublic: true, showContacts: false, contacts: "", categories: ["Дизайн"], structuredContacts: [] }
    })
    expect(refused.status).toBe(409)

    const operation = await eventually(
      () => collector.spans.find((span) => span.name === "profiles.update" && attribute(span, "birzha.request_id") === requestId),
      (span) => span !== undefined,
      "the operation's span"
    )
    const attempt = await eventually(
      () => collector.spans.find((span) => span.name === "webhooks.attempt" && span.traceId === operation!.traceId),
      (span) => span !== undefined,
      "the webhook attempt's span in the operation's trace"
    )

    // The operation: named by its id, who called and how it ended; a child of the request's server span.
    expect(operation!.service).toBe("birzha-test")
    expect(attribute(operation!, "birzha.actor.kind")).toBe("session")
    expect(attribute(operation!, "birzha.status")).toBe(200)
    expect(attribute(operation!, "birzha.error.code")).toBeUndefined()
    const server = collector.spans.find((span) => span.spanId === operation!.parentSpanId)!
    expect(server.name).toBe("POST /api/v1/commands/profiles.update")
    expect(server.traceId).toBe(operation!.traceId)
    expect(server.parentSpanId ?? "").toBe("")
    expect(attribute(server, "http.response.status_code")).toBe(200)
    expect(attribute(server, "http.route")).toBe("/api/v1/commands/profiles.update")

    // Its SQL statements: child spans with the statement's text, never its parameters.
    const statements = collector.spans.filter((span) => span.name === "sql.execute" && descendsFrom(span, operation!))
    expect(statements.length).toBeGreaterThan(0)
    expect(statements.some((span) => String(attribute(span, "db.query.text")).includes("outbox_events"))).toBe(true)

    // The webhook attempt the event caused: in the same trace, under the operation, naming the request.
    expect(descendsFrom(attempt!, operation!)).toBe(true)
    expect(attribute(attempt!, "birzha.request_id")).toBe(requestId)
    expect(attribute(attempt!, "birzha.webhook.endpoint_uuid")).toBe(endpoint.uuid)
    expect(attribute(attempt!, "birzha.event.type")).toBe("profile.updated")
    expect(attribute(attempt!, "birzha.webhook.result")).toBe("succeeded")
    expect(attribute(attempt!, "http.response.status_code")).toBe(200)

    // The refused call: status and code on its span.
    const conflict = await eventually(
      () => collector.spans.find((span) => span.name === "profiles.update" && attribute(span, "birzha.status") === 409),
      (span) => span !== undefined,
      "the refused call's span"
    )
    expect(attribute(conflict!, "birzha.error.code")).toBe("revision_conflict")

    // The sequencer's numbering, as its own span.
    await eventually(() => collector.spans.find((span) => span.name === "events.sequence"), (span) => span !== undefined, "a sequencing span")

    // Nothing secret in any span: the session token, the email, the endpoint's signing secret.
    const exported = JSON.stringify(collector.spans)
    expect(exported).not.toContain(owner.cookie.split("=")[1])
    expect(exported).not.toContain(owner.email)
    expect(exported).not.toContain(created.body["secret"])
    expect(collector.paths.every((path) => path.startsWith("POST /v1/traces application/json"))).toBe(true)
  })
})
