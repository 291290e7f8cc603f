import { catalogOf, currentOperation, InternalError, operation, PayloadTooLarge } from "@birzha/domain"
import { currentRequestId, implement, Operations, ServerSecret, StreamedJson } from "@birzha/domain/internal"
import { HttpApi, HttpApiGroup } from "@effect/platform"
import { Effect, FiberRef, HashMap, Layer, Logger, Redacted, Schema } from "effect"
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { makeHttpServer } from "./HttpHost.js"
import { type RunningHost, startHost } from "./testing.js"
import { testPgLayer } from "../../domain/test/pgLayer.js"

// A small API served by the host's own adapter: an answer, a defect, a body bound.
const Probe = HttpApiGroup.make("probe", { topLevel: true })
  .add(
    operation("POST", "probe.echo", "/api/v1/probe/echo", {})
      .setPayload(Schema.Struct({ name: Schema.String }))
      .addSuccess(Schema.Struct({ name: Schema.String }))
  )
  .add(operation("GET", "probe.defect", "/api/v1/probe/defect", {}).addSuccess(Schema.Void))
  .add(
    operation("GET", "probe.whoami", "/api/v1/probe/whoami", {})
      .addSuccess(Schema.Struct({ requestId: Schema.NullOr(Schema.String), operation: Schema.NullOr(Schema.String) }))
  )
  .add(operation("GET", "probe.stream", "/api/v1/probe/stream", {}).addSuccess(Schema.Array(Schema.Number)))

class ProbeApi extends HttpApi.make("probe").add(Probe).addError(InternalError).addError(PayloadTooLarge) {}

const ProbeOperations = implement(Probe)({
  "probe.echo": ({ payload }) => Effect.succeed({ name: payload.name }),
  "probe.defect": () => Effect.die(new Error("boom")),
  // What the running call knows of itself: its request id and its operation.
  "probe.whoami": () =>
    Effect.map(Effect.all([currentRequestId, FiberRef.get(currentOperation)]), ([requestId, entry]) => ({ requestId, operation: entry?.id ?? null })),
  // An answer streamed while it is read that fails after its first chunk, logging as it goes.
  "probe.stream": () =>
    Effect.succeed(
      new StreamedJson(() => {
        let read = 0
        return Effect.suspend(() => read++ === 0 ? Effect.succeed("[1") : Effect.zipRight(Effect.logInfo("streaming"), Effect.die(new Error("stream boom"))))
      })
    )
})

interface LogEntry {
  readonly message: unknown
  readonly level: string
  readonly annotations: Record<string, unknown>
}

const logs: Array<LogEntry> = []
const logged = Logger.make<unknown, void>(({ annotations, logLevel, message }) => {
  logs.push({ message, level: logLevel.label, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
})

let host: RunningHost
let database: TestDatabase
// What the host writes on stdout (its access log), kept while the tests run.
let stdout = ""

beforeAll(async () => {
  const write = process.stdout.write.bind(process.stdout)
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array, ...rest: Array<any>) => {
    const text = String(chunk)
    if (text.startsWith("{\"t\":")) {
      stdout += text
      return true
    }
    return write(chunk, ...rest)
  })
  database = await createTestDatabase("request_ids", { migrated: true })
  host = await startHost(
    makeHttpServer({ port: 0, host: "127.0.0.1", maxBodyBytes: 1024, publicOrigin: "http://localhost:8080", trustProxy: false }).pipe(
      Layer.provide(Operations.layer(catalogOf(ProbeApi), [ProbeOperations])),
      Layer.provide(testPgLayer(database.url)),
      Layer.provide(Layer.succeed(ServerSecret, Redacted.make("probe-secret-of-at-least-32-characters"))),
      Layer.provide(Logger.replace(Logger.defaultLogger, logged))
    )
  )
})
afterAll(async () => {
  vi.restoreAllMocks()
  await host?.close()
  await database?.drop()
})

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The access-log lines written so far, once the batch is flushed. */
const accessLines = async (): Promise<Array<Record<string, unknown>>> => {
  await new Promise((resolve) => setImmediate(resolve))
  return stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>)
}

const echo = (headers: Record<string, string> = {}) =>
  fetch(`${host.url}/api/v1/probe/echo`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ name: "x" }) })

describe("request ids", () => {
  it("names every answer with a new id when the request brings none, and the access-log line carries it", async () => {
    const first = await echo()
    const second = await echo()
    expect(first.status).toBe(200)
    const firstId = first.headers.get("x-request-id")
    const secondId = second.headers.get("x-request-id")
    expect(firstId).toMatch(uuid)
    expect(secondId).toMatch(uuid)
    expect(firstId).not.toBe(secondId)
    const lines = await accessLines()
    expect(lines).toContainEqual(expect.objectContaining({ method: "POST", status: 200, op: "probe.echo", requestId: firstId }))
    expect(lines).toContainEqual(expect.objectContaining({ op: "probe.echo", requestId: secondId }))
  })

  it("keeps a well-formed incoming id and replaces one that is empty, too long or has unsafe characters", async () => {
    const kept = ["req-42", "01HZX3Q9Y4M2C7K8J5N6P0R1ST", "Zm9vYmFy+/=", `trace:${"a".repeat(122)}`]
    for (const id of kept) {
      const response = await echo({ "x-request-id": id })
      expect(response.headers.get("x-request-id")).toBe(id)
    }
    for (const id of ["", "a".repeat(129), "has space", "quote\"d", "semi;colon", "<script>"]) {
      const response = await echo({ "x-request-id": id })
      expect(response.status).toBe(200)
      expect(response.headers.get("x-request-id")).toMatch(uuid)
    }
    expect((await accessLines()).filter((line) => line["requestId"] === "req-42")).toHaveLength(1)
  })

  it("names refusals, unknown paths and the host's own documents too", async () => {
    // 413 is written on the socket itself (CompiledApi.ts, answerAndClose).
    const tooLarge = await new Promise<{ status: number; id: string | undefined }>((resolve, reject) => {
      const body = JSON.stringify({ name: "y".repeat(4096) })
      const req = httpRequest(`${host.url}/api/v1/probe/echo`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "x-request-id": "too-large-1" }
      }, (res) => {
        res.resume()
        resolve({ status: res.statusCode ?? 0, id: res.headers["x-request-id"] as string | undefined })
      })
      req.on("error", reject)
      req.end(body)
    })
    expect(tooLarge).toEqual({ status: 413, id: "too-large-1" })
    const missing = await fetch(`${host.url}/api/v1/nothing`, { headers: { "x-request-id": "missing-1" } })
    expect(missing.status).toBe(404)
    expect(missing.headers.get("x-request-id")).toBe("missing-1")
    const document = await fetch(`${host.url}/api/v1/openapi.json`)
    expect(document.status).toBe(200)
    expect(document.headers.get("x-request-id")).toMatch(uuid)
    const lines = await accessLines()
    expect(lines).toContainEqual(expect.objectContaining({ status: 413, op: "probe.echo", requestId: "too-large-1" }))
    expect(lines).toContainEqual(expect.objectContaining({ status: 404, requestId: "missing-1" }))
  })

  it("runs the operation knowing its request id and its operation, as the fiber starts with them", async () => {
    const response = await fetch(`${host.url}/api/v1/probe/whoami`, { headers: { "x-request-id": "whoami-1" } })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ requestId: "whoami-1", operation: "probe.whoami" })
    const anonymous = await fetch(`${host.url}/api/v1/probe/whoami`)
    expect(await anonymous.json()).toEqual({ requestId: anonymous.headers.get("x-request-id"), operation: "probe.whoami" })
  })

  it("names the request on the log lines of an answer streamed while it is read, and of its failure after the first chunk", async () => {
    // Broken either way: the status and the first chunk arrive and the answer stops short, or the
    // connection is gone before the client read them.
    const complete = await new Promise<boolean>((resolve) => {
      const req = httpRequest(`${host.url}/api/v1/probe/stream`, { headers: { "x-request-id": "stream-1" } }, (res) => {
        res.on("data", () => {})
        res.on("error", () => {})
        res.on("close", () => resolve(res.complete))
      })
      req.on("error", () => resolve(false))
      req.end()
    })
    expect(complete).toBe(false)
    await vi.waitFor(() => {
      expect(logs).toContainEqual(expect.objectContaining({ message: ["streaming"], annotations: expect.objectContaining({ requestId: "stream-1" }) }))
      expect(logs).toContainEqual(
        expect.objectContaining({ level: "ERROR", annotations: expect.objectContaining({ requestId: "stream-1", operationId: "probe.stream" }) })
      )
    })
  })

  it("puts the id on the error's log line beside the correlation id the client gets", async () => {
    const response = await fetch(`${host.url}/api/v1/probe/defect`, { headers: { "x-request-id": "defect-1" } })
    expect(response.status).toBe(500)
    expect(response.headers.get("x-request-id")).toBe("defect-1")
    const { error } = (await response.json()) as { error: { correlationId: string } }
    const entry = logs.find((log) => log.annotations["correlationId"] === error.correlationId)
    expect(entry).toMatchObject({ level: "ERROR", annotations: { requestId: "defect-1", operationId: "probe.defect" } })
    expect((await accessLines())).toContainEqual(expect.objectContaining({ status: 500, op: "probe.defect", requestId: "defect-1" }))
  })
})
