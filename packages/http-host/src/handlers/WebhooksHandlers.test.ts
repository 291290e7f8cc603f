import { cleanWebhookHistory } from "@birzha/domain/internal"
import { DatabaseLive, MigrationsAtStart } from "@birzha/infrastructure"
import { defaultPerEndpoint, WorkerHostLive } from "@birzha/worker-host/internal"
import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../../../testing/net.js"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { eventually } from "../../../../testing/progress.js"
import { signIn, type SignedIn } from "../../../../testing/signIn.js"
import { type Receiver, startReceiver } from "../../../../testing/webhookReceiver.js"
import { type RunningHost, startService, untilReady } from "../testing.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

let origin: string
let database: TestDatabase
let host: RunningHost
let db: Pg.Client
let worker: Scope.CloseableScope
const receivers: Array<Receiver> = []
const secret = "webhook tests: a server secret of at least 32 characters"

beforeAll(async () => {
  database = await createTestDatabase("webhooks", { migrated: true })
  const port = await freePort()
  origin = `http://localhost:${port}`
  const env = { DATABASE_URL: database.url, BIRZHA_SECRET: secret, BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1" }
  host = await startService({ env, port, publicOrigin: origin, trustProxy: true })
  await untilReady(host)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  // A worker beside the host, as `birzha worker` runs: the sequencer, webhook delivery and retention.
  worker = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(
    Layer.mergeAll(WorkerHostLive, MigrationsAtStart).pipe(
      Layer.provide(DatabaseLive),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
      Layer.provide(Logger.minimumLogLevel(process.env["WEBHOOK_TEST_LOGS"] ? LogLevel.Debug : LogLevel.None))
    ),
    worker
  ))
})
afterAll(async () => {
  if (worker !== undefined) await Effect.runPromise(Scope.close(worker, Exit.void))
  for (const receiver of receivers) await receiver.stop()
  await db?.end()
  await host?.close()
  await database?.drop()
})

const receiver = async (port?: number) => {
  const r = await startReceiver(port)
  receivers.push(r)
  return r
}

type Json = Record<string, any>

const call = async (method: string, path: string, who?: SignedIn, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${host.url}${path}`, {
    method,
    // The service's own pages send their Origin with the cookie (a change without it is refused).
    headers: { "content-type": "application/json", ...(who === undefined ? {} : { cookie: who.cookie, origin }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: (text === "" ? {} : JSON.parse(text)) as Json }
}

const create = (who: SignedIn, input: Json) =>
  call("POST", "/api/v1/webhook-endpoints", who, { requestUuid: randomUUID(), eventTypes: ["profile.updated"], ...input })

const approve = (who: SignedIn, endpoint: Json, body: Json = { url: endpoint["url"], expectedRevision: endpoint["revision"] }) =>
  call("POST", `/api/v1/webhook-endpoints/${endpoint["uuid"]}/approve`, who, body, { origin })

const sendTest = (who: SignedIn, uuid: string) =>
  call("POST", `/api/v1/webhook-endpoints/${uuid}/test`, who, { requestUuid: randomUUID() })

const endpointOf = async (who: SignedIn, uuid: string): Promise<Json> => {
  const list = await call("GET", "/api/v1/webhook-endpoints", who)
  return (list.body["items"] as Array<Json>).find((e) => e["uuid"] === uuid)!
}


const deliveries = async (who: SignedIn, uuid: string, query = ""): Promise<Array<Json>> =>
  (await call("GET", `/api/v1/webhook-endpoints/${uuid}/deliveries${query}`, who)).body["items"] as Array<Json>

/** An event about the profile, as an emitter writes it (visible to that profile), straight into the outbox. */
const emit = async (who: SignedIn, count = 1, type = "profile.updated") => {
  const { rows } = await db.query<{ uuid: string }>(
    `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
     SELECT $1, 'profile', $2::uuid, g, jsonb_build_object('objectUuid', $2::text, 'status', 'updated'),
       jsonb_build_object('profileUuid', $2::text)
     FROM generate_series(1, $3::int) g RETURNING uuid`,
    [type, who.profileUuid, count]
  )
  return rows.map((row) => row.uuid)
}

/** A signed-in owner with an active endpoint (approved and tested) at the receiver, and its secret. */
const activeEndpoint = async (r: Receiver, input: Json = {}, who?: SignedIn) => {
  const owner = who ?? await signIn({ url: host.url, origin, db })
  const created = await create(owner, { url: r.url, ...input })
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  const approved = await approve(owner, created.body["endpoint"])
  expect(approved.status, JSON.stringify(approved.body)).toBe(200)
  const before = r.received.length
  expect((await sendTest(owner, created.body["endpoint"]["uuid"])).status).toBe(200)
  await r.until((all) => all.length > before)
  const endpoint = await eventually(() => endpointOf(owner, created.body["endpoint"]["uuid"]), (e) => e["state"] === "active")
  return { owner, endpoint, secret: created.body["secret"] as string }
}

const verify = (signingSecret: string, request: { headers: Json; body: string }) =>
  new Webhook(signingSecret).verify(request.body, {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"])
  })

describe("the webhook endpoint state table", () => {
  it("prepared → the owner approves the exact URL → awaiting_test → a test answered 2xx → active; signatures verify with standardwebhooks", async () => {
    const r = await receiver()
    const owner = await signIn({ url: host.url, origin, db })
    const created = await create(owner, { url: r.url, description: "CRM" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const endpoint = created.body["endpoint"]
    expect(created.body["secret"]).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(endpoint).toMatchObject({
      url: r.url, description: "CRM", eventTypes: ["profile.updated"], payloadMode: "reference", state: "prepared", revision: 1,
      approvalUrl: `${origin}/webhooks/${endpoint["uuid"]}/approve`
    })
    // The secret is stored sealed only, and never shown again.
    const { rows } = await db.query<{ secret_sealed: string }>("SELECT secret_sealed FROM webhook_endpoints WHERE uuid = $1", [endpoint["uuid"]])
    expect(rows[0]!.secret_sealed).not.toContain(created.body["secret"].slice(6))
    expect(JSON.stringify((await call("GET", "/api/v1/webhook-endpoints", owner)).body)).not.toContain(created.body["secret"])

    // Not yet approved: no test, and events are not delivered.
    expect((await sendTest(owner, endpoint["uuid"])).body["error"]["code"]).toBe("invalid_state")
    await emit(owner)

    // Approval: only from the service's origin, for the exact URL at the current revision.
    expect((await call("POST", `/api/v1/webhook-endpoints/${endpoint["uuid"]}/approve`, owner, { url: r.url, expectedRevision: 1 }, { origin: "https://evil.example" })).status).toBe(403)
    const otherUrl = await approve(owner, endpoint, { url: r.url + "x", expectedRevision: 1 })
    expect(otherUrl.status).toBe(409)
    expect(otherUrl.body["error"]["code"]).toBe("invalid_state")
    expect((await approve(owner, endpoint, { url: r.url, expectedRevision: 2 })).body["error"]["code"]).toBe("revision_conflict")
    const stranger = await signIn({ url: host.url, origin, db })
    expect((await approve(stranger, endpoint)).status).toBe(404)
    const approved = await approve(owner, endpoint)
    expect(approved.status).toBe(200)
    expect(approved.body["endpoint"]).toMatchObject({ state: "awaiting_test", revision: 2 })
    expect(approved.body["endpoint"]["approvalUrl"]).toBeUndefined()
    // A second click changes nothing.
    expect((await approve(owner, endpoint)).body["endpoint"]["revision"]).toBe(2)

    // The test: uuid, type, schemaVersion and data.test only, signed like any event.
    const queued = await sendTest(owner, endpoint["uuid"])
    expect(queued.status).toBe(200)
    expect(queued.body["delivery"]).toMatchObject({ kind: "test", eventType: "webhook.test", status: "pending", attemptCount: 0, attempts: [] })
    await r.until((all) => all.length === 1)
    const test = r.received[0]!
    const body = JSON.parse(test.body)
    expect(body).toEqual({ uuid: queued.body["delivery"]["eventUuid"], type: "webhook.test", schemaVersion: 1, data: { test: true } })
    expect(test.headers["webhook-id"]).toBe(body.uuid)
    expect(test.headers["content-type"]).toBe("application/json")
    expect(Math.abs(Number(test.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)
    expect(verify(created.body["secret"], test)).toEqual(body)
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString("base64")}`, test)).toThrow()

    const active = await eventually(() => endpointOf(owner, endpoint["uuid"]), (e) => e["state"] === "active")
    // Verified by this test delivery, just now.
    expect(Math.abs(Date.parse(active["verifiedAt"]) - Date.now())).toBeLessThan(60_000)
    // The event emitted before activation is not sent; one after is, as the exact envelope.
    const [event] = await emit(owner)
    await r.until((all) => all.length === 2)
    const delivered = r.received[1]!
    expect(delivered.headers["webhook-id"]).toBe(event)
    const envelope = verify(created.body["secret"], delivered) as Json
    expect(Object.keys(envelope).sort()).toEqual(["aggregate", "context", "data", "occurredAt", "schemaVersion", "type", "uuid"])
    expect(envelope).toMatchObject({
      uuid: event, type: "profile.updated", schemaVersion: 1,
      aggregate: { kind: "profile", uuid: owner.profileUuid, revision: 1 },
      data: { objectUuid: owner.profileUuid, status: "updated" },
      context: { profileUuid: owner.profileUuid }
    })
    const history = await eventually(() => deliveries(owner, endpoint["uuid"]), (items) => items[0]?.["status"] === "succeeded")
    expect(history.map((d) => d["kind"])).toEqual(["event", "test"])
    expect(history[0]!["attempts"]).toHaveLength(1)
    expect(history[0]!["attempts"][0]).toMatchObject({ statusCode: 200, responseExcerpt: "ok", succeeded: true, url: r.url })
  })

  it("a test not answered 2xx leaves the endpoint awaiting_test, with the attempt in the history", async () => {
    const r = await receiver()
    r.answerWith((_req, res) => {
      res.statusCode = 503
      res.end("maintenance")
    })
    const owner = await signIn({ url: host.url, origin, db })
    const created = await create(owner, { url: r.url })
    await approve(owner, created.body["endpoint"])
    const uuid = created.body["endpoint"]["uuid"]
    await sendTest(owner, uuid)
    const [failed] = await eventually(() => deliveries(owner, uuid), (items) => items[0]?.["status"] === "failed")
    expect(failed!["attempts"]).toHaveLength(1)
    expect(failed!["attempts"][0]).toMatchObject({ statusCode: 503, responseExcerpt: "maintenance", succeeded: false })
    expect(r.received).toHaveLength(1)
    expect((await endpointOf(owner, uuid))["state"]).toBe("awaiting_test")
    // 3xx is a failure too: redirects are not followed.
    r.answerWith((_req, res) => {
      res.statusCode = 302
      res.setHeader("location", "https://example.com/")
      res.end()
    })
    await sendTest(owner, uuid)
    await eventually(() => deliveries(owner, uuid), (items) => items.length === 2 && items[0]!["status"] === "failed")
    expect((await endpointOf(owner, uuid))["state"]).toBe("awaiting_test")
    r.answerWith((_req, res) => res.end())
    await sendTest(owner, uuid)
    await eventually(() => endpointOf(owner, uuid), (e) => e["state"] === "active")
  })

  it("a change of URL, events or payload mode needs a new approval and a new test; a description does not", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    const update = (revision: number, change: Json) =>
      call("PATCH", `/api/v1/webhook-endpoints/${uuid}`, owner, { requestUuid: randomUUID(), expectedRevision: revision, ...change })

    const described = await update(endpoint["revision"], { description: "new name" })
    expect(described.body["endpoint"]).toMatchObject({ state: "active", description: "new name", revision: endpoint["revision"] + 1 })
    expect((await update(endpoint["revision"], { description: "stale" })).body["error"]["code"]).toBe("revision_conflict")

    let revision = described.body["endpoint"]["revision"]
    for (const change of [{ payloadMode: "current" }, { eventTypes: ["profile.*"] }, { url: r.url + "?v=2" }]) {
      const changed = await update(revision, change)
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      expect(changed.body["endpoint"]).toMatchObject({ state: "prepared", approvalUrl: `${origin}/webhooks/${uuid}/approve`, ...change })
      const before = r.received.length
      await emit(owner)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(r.received.length).toBe(before)
      const approved = await approve(owner, changed.body["endpoint"])
      expect(approved.body["endpoint"]["state"]).toBe("awaiting_test")
      await sendTest(owner, uuid)
      const active = await eventually(() => endpointOf(owner, uuid), (e) => e["state"] === "active")
      revision = active["revision"]
    }
    const [event] = await emit(owner)
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === event))
  })

  it("pause cancels pending attempts; resuming delivers new events again", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    r.answerWith((_req, res) => {
      res.statusCode = 500
      res.end("broken")
    })
    const [event] = await emit(owner)
    // The first attempt fails; the next one waits about 5 s.
    const [pending] = await eventually(() => deliveries(owner, uuid, "?status=pending"), (items) => items.length === 1 && items[0]!["attemptCount"] === 1)
    expect(pending!["eventUuid"]).toBe(event)
    expect(Date.parse(pending!["nextAttemptAt"]) - Date.now()).toBeGreaterThan(2_000)
    const paused = await call("PATCH", `/api/v1/webhook-endpoints/${uuid}`, owner, { requestUuid: randomUUID(), expectedRevision: endpoint["revision"], paused: true })
    expect(paused.body["endpoint"]["state"]).toBe("paused")
    const [cancelled] = await deliveries(owner, uuid, "?status=cancelled")
    expect(cancelled).toMatchObject({ eventUuid: event, status: "cancelled", cancelReason: "endpoint paused", attemptCount: 1 })
    expect(cancelled!["nextAttemptAt"]).toBeUndefined()
    const requests = r.received.length
    await emit(owner)
    await new Promise((resolve) => setTimeout(resolve, 6_500))
    expect(r.received.length).toBe(requests)
    // Resume: a paused endpoint that was tested goes straight back to active; events from now on flow.
    r.answerWith((_req, res) => res.end("ok"))
    const resumed = await call("PATCH", `/api/v1/webhook-endpoints/${uuid}`, owner, { requestUuid: randomUUID(), expectedRevision: paused.body["endpoint"]["revision"], paused: false })
    expect(resumed.body["endpoint"]["state"]).toBe("active")
    const [after] = await emit(owner)
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === after))
    expect(r.ids().filter((id) => id === event)).toHaveLength(1)
  })
})

/** The webhook-disabled notices mailed to `email`, newest first (not the owner's sign-in code). */
const disabledNoticesTo = async (email: string) => {
  const { rows } = await db.query<{ subject: string; text_body: string }>(
    "SELECT subject, text_body FROM development_mailbox WHERE to_address = $1 AND subject = 'Вебхук отключён · Webhook disabled' ORDER BY created_at DESC",
    [email]
  )
  return rows
}

describe("delivery failures", () => {
  it("a 410 from the receiver disables the endpoint, cancels what is pending and tells the owner by email", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    r.answerWith((_req, res) => {
      res.statusCode = 410
      res.end("gone")
    })
    const [first] = await emit(owner)
    const disabled = await eventually(() => endpointOf(owner, uuid), (e) => e["state"] === "disabled")
    expect(disabled).toMatchObject({ disabledReason: "gone", revision: endpoint["revision"] + 1 })
    const [failed] = await deliveries(owner, uuid, "?status=failed")
    expect(failed).toMatchObject({ eventUuid: first, attemptCount: 1 })
    expect(failed!["attempts"][0]).toMatchObject({ statusCode: 410, succeeded: false })
    const mails = await eventually(() => disabledNoticesTo(owner.email), (rows) => rows.length > 0)
    expect(mails).toHaveLength(1)
    expect(mails[0]!.text_body).toContain(r.url)
    expect(mails[0]!.text_body).toContain("410 Gone")
    // Nothing more goes out; re-enabling needs a new test first.
    const requests = r.received.length
    await emit(owner)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(r.received.length).toBe(requests)
    const reenabled = await call("PATCH", `/api/v1/webhook-endpoints/${uuid}`, owner, { requestUuid: randomUUID(), expectedRevision: disabled["revision"], paused: false })
    expect(reenabled.body["endpoint"]).toMatchObject({ state: "awaiting_test" })
    expect(reenabled.body["endpoint"]["disabledReason"]).toBeUndefined()
  })

  it("attempts failing for 5 days disable the endpoint with a notice to the owner", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    r.answerWith((_req, res) => {
      res.statusCode = 500
      res.end()
    })
    await emit(owner)
    const failing = await eventually(() => endpointOf(owner, uuid), (e) => e["failingSince"] !== undefined)
    expect(failing["state"]).toBe("active")
    // Five days pass (the clock of the rows moves back), and the next attempt fails too.
    await db.query("UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE uuid = $1", [uuid])
    await db.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_uuid = $1 AND status = 'pending'", [uuid])
    const disabled = await eventually(() => endpointOf(owner, uuid), (e) => e["state"] === "disabled")
    expect(disabled["disabledReason"]).toBe("failing")
    const mails = await eventually(() => disabledNoticesTo(owner.email), (rows) => rows.length > 0)
    expect(mails).toHaveLength(1)
    expect(mails[0]!.text_body).toContain(r.url)
    expect(mails[0]!.text_body).toContain("every delivery attempt to this URL failed for more than 5 days")
    expect((await deliveries(owner, uuid, "?status=pending"))).toHaveLength(0)
  })

  it("a failure just short of 5 days does not disable, and a 2xx ends the failing streak", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    r.answerWith((_req, res) => {
      res.statusCode = 500
      res.end()
    })
    await emit(owner)
    await eventually(() => endpointOf(owner, uuid), (e) => e["failingSince"] !== undefined)
    await db.query("UPDATE webhook_endpoints SET failing_since = now() - interval '4 days 23 hours' WHERE uuid = $1", [uuid])
    const before = r.received.length
    await db.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_uuid = $1 AND status = 'pending'", [uuid])
    await r.until((all) => all.length > before)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await endpointOf(owner, uuid))["state"]).toBe("active")
    r.answerWith((_req, res) => res.end())
    await emit(owner)
    await eventually(() => endpointOf(owner, uuid), (e) => e["failingSince"] === undefined)
  })

  it("a receiver that is down and comes back receives every event", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    await r.stop()
    const events = await emit(owner, 20)
    await eventually(() => deliveries(owner, endpoint["uuid"], "?status=pending&limit=100"), (items) => items.length === 20 && items.every((d) => d["attemptCount"] === 1))
    const [refused] = await deliveries(owner, endpoint["uuid"], "?status=pending&limit=1")
    expect(refused!["attempts"][0]["error"]).toMatch(/ECONNREFUSED/)
    expect(refused!["attempts"][0]["statusCode"]).toBeUndefined()
    await r.start()
    await r.until((all) => events.every((id) => all.some((x) => x.headers["webhook-id"] === id)))
    await eventually(() => deliveries(owner, endpoint["uuid"], "?status=succeeded&limit=100"), (items) => items.length === 21)
  })

  it("Retry-After on 429 pushes the next attempt back; on 500 it is not honoured", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    r.answerWith((_req, res) => {
      res.statusCode = 429
      res.setHeader("retry-after", "120")
      res.end()
    })
    await emit(owner)
    const [limited] = await eventually(() => deliveries(owner, endpoint["uuid"], "?status=pending"), (items) => items[0]?.["attemptCount"] === 1)
    const wait = Date.parse(limited!["nextAttemptAt"]) - Date.now()
    expect(wait).toBeGreaterThan(110_000)
    expect(wait).toBeLessThan(125_000)
    r.answerWith((_req, res) => {
      res.statusCode = 500
      res.setHeader("retry-after", "120")
      res.end()
    })
    const [second] = await emit(owner)
    const [plain] = await eventually(() => deliveries(owner, endpoint["uuid"], "?status=pending"),
      (items) => items.some((d) => d["eventUuid"] === second && d["attemptCount"] === 1))
    expect(Date.parse(plain!["nextAttemptAt"]) - Date.now()).toBeLessThan(7_000)
  })

  it("one endpoint hanging 15 s does not delay another endpoint's deliveries", async () => {
    const slow = await receiver()
    const fast = await receiver()
    const owner = await signIn({ url: host.url, origin, db })
    const hanging = await activeEndpoint(slow, {}, owner)
    await activeEndpoint(fast, {}, owner)
    slow.answerWith(() => {
      // Never answers: the worker gives up after 15 s.
    })
    const events = await emit(owner, defaultPerEndpoint + 36)
    // The hanging endpoint's attempts give up only after 15 s: the other's arrive before the first
    // of them is given up (compared below with that attempt's end, not with a time this machine
    // should manage).
    await fast.until((all) => events.every((id) => all.some((x) => x.headers["webhook-id"] === id)), 600_000)
    const arrived = Date.now()
    // The hanging endpoint holds at most its own share of attempts at a time.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(slow.received.filter((x) => events.includes(String(x.headers["webhook-id"]))).length).toBe(defaultPerEndpoint)
    // While those attempts hang, later events still reach the other endpoint.
    for (let round = 0; round < 3; round++) {
      const later = await emit(owner, 5)
      await fast.until((all) => later.every((id) => all.some((x) => x.headers["webhook-id"] === id)), 600_000)
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
    const timedOut = await eventually(() => deliveries(owner, hanging.endpoint["uuid"], "?limit=100"),
      (items) => items.some((d) => d["attempts"].length > 0 && d["kind"] === "event"), "the hanging attempt given up")
    const attempt = timedOut.find((d) => d["kind"] === "event" && d["attempts"].length > 0)!["attempts"][0]
    expect(attempt["error"]).toBe("no complete answer within 15 s")
    expect(attempt["durationMs"]).toBeGreaterThanOrEqual(14_900)
    expect(arrived).toBeLessThan(Date.parse(attempt["attemptedAt"]) + attempt["durationMs"])
  })
})

describe("secrets and rotation", () => {
  it("after a rotation both secrets verify for 24 hours, then only the new one; the new secret is shown once", async () => {
    const r = await receiver()
    const { owner, endpoint, secret: old } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    const rotated = await call("POST", `/api/v1/webhook-endpoints/${uuid}/rotate`, owner, { requestUuid: randomUUID() })
    expect(rotated.status).toBe(200)
    const fresh = rotated.body["secret"] as string
    expect(fresh).toMatch(/^whsec_/)
    expect(fresh).not.toBe(old)
    const expires = Date.parse(rotated.body["endpoint"]["previousSecretExpiresAt"])
    expect(Math.abs(expires - Date.now() - 24 * 3600_000)).toBeLessThan(60_000)

    const [during] = await emit(owner)
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === during))
    const inWindow = r.received.find((x) => x.headers["webhook-id"] === during)!
    expect(String(inWindow.headers["webhook-signature"]).split(" ")).toHaveLength(2)
    expect(verify(old, inWindow)).toMatchObject({ uuid: during })
    expect(verify(fresh, inWindow)).toMatchObject({ uuid: during })

    // 24 hours later (the row's clock moved): only the new secret signs.
    await db.query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE uuid = $1", [uuid])
    const [after] = await emit(owner)
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === after))
    const late = r.received.find((x) => x.headers["webhook-id"] === after)!
    expect(String(late.headers["webhook-signature"]).split(" ")).toHaveLength(1)
    expect(verify(fresh, late)).toMatchObject({ uuid: after })
    expect(() => verify(old, late)).toThrow()
    expect((await endpointOf(owner, uuid))["previousSecretExpiresAt"]).toBeUndefined()
  })

  it("a retry of create or rotate with the same requestUuid answers the same secret; another body is a conflict", async () => {
    const r = await receiver()
    const owner = await signIn({ url: host.url, origin, db })
    const body = { requestUuid: randomUUID(), url: r.url, eventTypes: ["profile.updated"] }
    const [a, b] = await Promise.all([call("POST", "/api/v1/webhook-endpoints", owner, body), call("POST", "/api/v1/webhook-endpoints", owner, body)])
    expect(a.status).toBe(200)
    expect(b.body).toEqual(a.body)
    expect((await call("GET", "/api/v1/webhook-endpoints", owner)).body["items"]).toHaveLength(1)
    expect((await call("POST", "/api/v1/webhook-endpoints", owner, { ...body, url: r.url + "2" })).body["error"]["code"]).toBe("request_conflict")
    const rotate = { requestUuid: randomUUID() }
    const first = await call("POST", `/api/v1/webhook-endpoints/${a.body["endpoint"]["uuid"]}/rotate`, owner, rotate)
    const again = await call("POST", `/api/v1/webhook-endpoints/${a.body["endpoint"]["uuid"]}/rotate`, owner, rotate)
    expect(again.body["secret"]).toBe(first.body["secret"])
    expect(first.body["secret"]).not.toBe(a.body["secret"])
  })
})

describe("history, replay and recovery", () => {
  it("shows real attempts with status, duration, a 1 KiB excerpt and errors; queued entries have none", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    r.answerWith((_req, res) => {
      res.statusCode = 500
      res.end("Ошибка ".repeat(1000))
    })
    await emit(owner)
    const [pending] = await eventually(() => deliveries(owner, endpoint["uuid"], "?status=pending"), (items) => items[0]?.["attemptCount"] === 1)
    const [attempt] = pending!["attempts"]
    expect(attempt).toMatchObject({ statusCode: 500, succeeded: false, url: r.url })
    expect(Buffer.byteLength(attempt["responseExcerpt"])).toBeLessThanOrEqual(1024)
    expect(Buffer.byteLength(attempt["responseExcerpt"])).toBeGreaterThan(1000)
    expect(attempt["durationMs"]).toBeGreaterThanOrEqual(0)
    expect(attempt["attemptedAt"]).toMatch(/^\d{4}-\d\d-\d\dT/)
    // The schedule's second try: 5 s after the first, ±20 % jitter.
    const wait = Date.parse(pending!["nextAttemptAt"]) - Date.parse(attempt["attemptedAt"])
    expect(wait).toBeGreaterThanOrEqual(3_900)
    expect(wait).toBeLessThanOrEqual(6_100 + attempt["durationMs"])
    // Paging: newest first, the cursor continues without repeats.
    const page1 = await call("GET", `/api/v1/webhook-endpoints/${endpoint["uuid"]}/deliveries?limit=1`, owner)
    const page2 = await call("GET", `/api/v1/webhook-endpoints/${endpoint["uuid"]}/deliveries?limit=1&cursor=${page1.body["nextCursor"]}`, owner)
    expect(page1.body["items"][0]["kind"]).toBe("event")
    expect(page2.body["items"][0]["kind"]).toBe("test")
    expect(page2.body["nextCursor"]).toBeUndefined()
    for (const limit of ["0", "101", "x"]) {
      expect((await call("GET", `/api/v1/webhook-endpoints/${endpoint["uuid"]}/deliveries?limit=${limit}`, owner)).status).toBe(400)
    }
    expect((await call("GET", `/api/v1/webhook-endpoints/${endpoint["uuid"]}/deliveries?limit=100`, owner)).status).toBe(200)
    const stranger = await signIn({ url: host.url, origin, db })
    expect((await call("GET", `/api/v1/webhook-endpoints/${endpoint["uuid"]}/deliveries`, stranger)).status).toBe(404)
  })

  it("replay sends one finished delivery again with the same webhook-id; recover sends every failed one since a time", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    const [delivered] = await emit(owner)
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === delivered))
    const [done] = await eventually(() => deliveries(owner, uuid), (items) => items[0]?.["status"] === "succeeded")
    const replayed = await call("POST", `/api/v1/webhook-endpoints/deliveries/${done!["uuid"]}/replay`, owner, { requestUuid: randomUUID() })
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(200)
    expect(replayed.body["delivery"]).toMatchObject({ uuid: done!["uuid"], status: "pending" })
    await r.until((all) => all.filter((x) => x.headers["webhook-id"] === delivered).length === 2)
    const again = await eventually(() => deliveries(owner, uuid), (items) => items[0]?.["status"] === "succeeded" && items[0]["attempts"].length === 2)
    expect(again[0]!["attemptCount"]).toBe(2)
    const stranger = await signIn({ url: host.url, origin, db })
    expect((await call("POST", `/api/v1/webhook-endpoints/deliveries/${done!["uuid"]}/replay`, stranger, { requestUuid: randomUUID() })).status).toBe(404)

    // Three deliveries fail for good (all retries spent), then the receiver is fixed and they are recovered.
    const since = new Date(Date.now() - 1_000).toISOString()
    r.answerWith((_req, res) => {
      res.statusCode = 503
      res.end()
    })
    const lost = await emit(owner, 3)
    await eventually(() => deliveries(owner, uuid, "?status=pending"), (items) => items.filter((d) => lost.includes(d["eventUuid"]) && d["attemptCount"] === 1).length === 3)
    await db.query("UPDATE webhook_deliveries SET round_attempts = 10, next_attempt_at = now() WHERE endpoint_uuid = $1 AND status = 'pending'", [uuid])
    await eventually(() => deliveries(owner, uuid, "?status=failed"), (items) => items.length === 3)
    r.answerWith((_req, res) => res.end())
    const recovered = await call("POST", `/api/v1/webhook-endpoints/${uuid}/recover`, owner, { requestUuid: randomUUID(), since })
    expect(recovered.body).toEqual({ queued: 3 })
    await r.until((all) => lost.every((id) => all.filter((x) => x.headers["webhook-id"] === id && x.at > Date.parse(since)).length >= 3))
    await eventually(() => deliveries(owner, uuid, "?status=failed"), (items) => items.length === 0)
    const future = await call("POST", `/api/v1/webhook-endpoints/${uuid}/recover`, owner, { requestUuid: randomUUID(), since: new Date().toISOString() })
    expect(future.body).toEqual({ queued: 0 })
    // A pending delivery cannot be replayed; it is already queued.
    r.answerWith((_req, res) => {
      res.statusCode = 500
      res.end()
    })
    const [queued] = await emit(owner)
    const [waiting] = await eventually(() => deliveries(owner, uuid, "?status=pending"), (items) => items.some((d) => d["eventUuid"] === queued))
    const refused = await call("POST", `/api/v1/webhook-endpoints/deliveries/${waiting!["uuid"]}/replay`, owner, { requestUuid: randomUUID() })
    expect(refused.body["error"]["code"]).toBe("invalid_state")
  })

  it("rights are checked again at send time: an event no longer visible to the profile is cancelled, not sent", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    r.answerWith((_req, res) => {
      res.statusCode = 500
      res.end()
    })
    const [event] = await emit(owner)
    await eventually(() => deliveries(owner, endpoint["uuid"], "?status=pending"), (items) => items[0]?.["attemptCount"] === 1)
    // The profile loses sight of the event (as when a record changes hands) before the retry.
    await db.query("UPDATE outbox_events SET context = '{}'::jsonb, aggregate_uuid = gen_random_uuid() WHERE uuid = $1", [event])
    r.answerWith((_req, res) => res.end())
    await db.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_uuid = $1 AND status = 'pending'", [endpoint["uuid"]])
    const [cancelled] = await eventually(() => deliveries(owner, endpoint["uuid"], "?status=cancelled"), (items) => items.length === 1)
    expect(cancelled).toMatchObject({ eventUuid: event, attemptCount: 1, cancelReason: "the event is no longer visible to the endpoint's profile" })
    expect(r.received.filter((x) => x.headers["webhook-id"] === event)).toHaveLength(1)
  })

  it("events another profile's endpoint may not see are never delivered to it; type filters with * apply", async () => {
    const r = await receiver()
    const { owner } = await activeEndpoint(r, { eventTypes: ["profile.*", "*.closed"] })
    const other = await signIn({ url: host.url, origin, db })
    const [theirs] = await emit(other)
    const [notMatching] = await emit(owner, 1, "file.ready")
    const [closed] = await emit(owner, 1, "task.closed")
    const [mine] = await emit(owner)
    await r.until((all) => [closed, mine].every((id) => all.some((x) => x.headers["webhook-id"] === id)))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(r.ids()).not.toContain(theirs)
    expect(r.ids()).not.toContain(notMatching)
  })
})

describe("payload mode current", () => {
  it("carries the record read now: a publication in its owner's view, the endpoint's own profile in its owner's view, a file unavailable", async () => {
    const r = await receiver()
    const { owner, secret: signing } = await activeEndpoint(r, { payloadMode: "current", eventTypes: ["publication.*", "profile.updated", "file.ready"] })
    const saved = await call("POST", "/api/v1/commands/tasks.save", owner, {
      requestUuid: randomUUID(),
      data: { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    }, { origin })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    await r.until((all) => all.some((x) => JSON.parse(x.body).type === "publication.draft_saved"))
    const request = r.received.find((x) => JSON.parse(x.body).type === "publication.draft_saved")!
    const body = verify(signing, request) as Json
    expect(body["data"]).toMatchObject({ objectUuid: saved.body["uuid"], resourceStatus: "available" })
    expect(Math.abs(Date.parse(body["data"]["resourceReadAt"]) - Date.now())).toBeLessThan(30_000)
    expect(body["data"]["resource"]).toMatchObject({ uuid: saved.body["uuid"], status: "draft", draft: { title: "Сделать сайт" } })
    const [profileEvent] = await emit(owner)
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === profileEvent))
    const profileBody = JSON.parse(r.received.find((x) => x.headers["webhook-id"] === profileEvent)!.body)
    expect(profileBody.data).toMatchObject({ resourceStatus: "available" })
    // The view profiles.get_own gives: contacts included, whatever showContacts says.
    expect(profileBody.data.resource).toMatchObject({ uuid: owner.profileUuid, current: true, type: "Физлицо" })
    expect(Object.keys(profileBody.data.resource)).toEqual(expect.arrayContaining(["contacts", "isPublic", "revision", "createdAt", "updatedAt"]))
    // A file is never copied: its event says unavailable.
    const file = randomUUID()
    await db.query(
      `INSERT INTO files (uuid, profile_uuid, purpose, name, mime_type, size, status, upload_token_hash, upload_expires_at)
       VALUES ($1, $2, 'publication_file', 'a.txt', 'text/plain', 3, 'ready', 'x', now())`,
      [file, owner.profileUuid]
    )
    const { rows: [fileEvent] } = await db.query<{ uuid: string }>(
      `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
       VALUES ('file.ready', 'file', $1::uuid, 2, jsonb_build_object('objectUuid', $1::text, 'status', 'ready'),
         jsonb_build_object('profileUuid', $2::text)) RETURNING uuid`,
      [file, owner.profileUuid]
    )
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === fileEvent!.uuid))
    const fileBody = JSON.parse(r.received.find((x) => x.headers["webhook-id"] === fileEvent!.uuid)!.body)
    expect(fileBody.data).toMatchObject({ objectUuid: file, resourceStatus: "unavailable" })
    expect(fileBody.data.resource).toBeUndefined()
  })
})

describe("webhook operation bounds", () => {
  it("refuse bad URLs, event types and descriptions with 400 and save nothing", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const r = await receiver()
    const bad: Array<Json> = [
      { url: "https://10.0.0.1/hook" }, { url: "https://169.254.169.254/latest/meta-data" }, { url: "https://192.168.1.10/h" },
      { url: "ftp://example.com/" }, { url: "https://u:p@example.com/" }, { url: "http://example.com/" },
      { url: `https://example.com/${"a".repeat(2029)}` },
      { url: r.url, eventTypes: [] }, { url: r.url, eventTypes: ["nope.*"] }, { url: r.url, eventTypes: Array(101).fill("*") },
      { url: r.url, description: "x".repeat(501) }, { url: r.url, payloadMode: "full" }, { url: r.url, extra: true }
    ]
    for (const input of bad) {
      const answer = await create(owner, input)
      expect(answer.status, JSON.stringify(input).slice(0, 100)).toBe(400)
      expect(answer.body["error"]["code"]).toBe("invalid_request")
    }
    expect((await call("GET", "/api/v1/webhook-endpoints", owner)).body["items"]).toHaveLength(0)
    for (const input of [
      { url: `https://example.com/${"a".repeat(2028)}` }, { url: r.url, eventTypes: Array(100).fill("*") },
      { url: r.url, description: "x".repeat(500) }, { url: "https://8.8.8.8/hook" }
    ]) {
      const answer = await create(owner, input)
      expect(answer.status, JSON.stringify(input).slice(0, 100)).toBe(200)
    }
  })

  it("a profile holds at most 20 endpoints; operations need a session and see only the acting profile's endpoints", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    for (let i = 0; i < 20; i++) expect((await create(owner, { url: `https://example.com/${i}` })).status).toBe(200)
    const over = await create(owner, { url: "https://example.com/21" })
    expect(over.status).toBe(403)
    const items = (await call("GET", "/api/v1/webhook-endpoints", owner)).body["items"] as Array<Json>
    expect(items).toHaveLength(20)
    expect((await call("DELETE", `/api/v1/webhook-endpoints/${items[0]!["uuid"]}`, owner)).status).toBe(204)
    expect((await call("DELETE", `/api/v1/webhook-endpoints/${items[0]!["uuid"]}`, owner)).status).toBe(204)
    expect((await create(owner, { url: "https://example.com/21" })).status).toBe(200)
    expect((await call("GET", "/api/v1/webhook-endpoints")).status).toBe(401)
    const stranger = await signIn({ url: host.url, origin, db })
    expect((await call("GET", "/api/v1/webhook-endpoints", stranger)).body["items"]).toHaveLength(0)
    const target = items[1]!
    expect((await call("PATCH", `/api/v1/webhook-endpoints/${target["uuid"]}`, stranger, { requestUuid: randomUUID(), expectedRevision: 1, paused: true })).status).toBe(404)
    expect((await call("DELETE", `/api/v1/webhook-endpoints/${target["uuid"]}`, stranger)).status).toBe(404)
    expect((await call("POST", `/api/v1/webhook-endpoints/${target["uuid"]}/rotate`, stranger, { requestUuid: randomUUID() })).status).toBe(404)
    expect((await sendTest(stranger, target["uuid"])).status).toBe(404)
  })
})

describe("history retention", () => {
  it("deletes attempts and finished deliveries older than 7 days; unfinished and recent ones stay", async () => {
    const r = await receiver()
    const { owner, endpoint } = await activeEndpoint(r)
    const uuid = endpoint["uuid"]
    const [recent] = await emit(owner)
    await r.until((all) => all.some((x) => x.headers["webhook-id"] === recent))
    await eventually(() => deliveries(owner, uuid), (items) => items[0]?.["status"] === "succeeded")
    const old = async (status: string, age: string) => {
      const { rows } = await db.query<{ uuid: string }>(
        `INSERT INTO webhook_deliveries (endpoint_uuid, kind, event_uuid, event_type, config_version, status, created_at, updated_at, finished_at, next_attempt_at)
         VALUES ($1, 'event', gen_random_uuid(), 'profile.updated', 1, $2, now() - $3::interval, now() - $3::interval,
           CASE WHEN $2 = 'pending' THEN NULL ELSE now() - $3::interval END, CASE WHEN $2 = 'pending' THEN now() + interval '1 hour' END)
         RETURNING uuid`, [uuid, status, age])
      await db.query(
        `INSERT INTO webhook_attempts (delivery_uuid, endpoint_uuid, attempted_at, duration_ms, url, status_code, succeeded)
         VALUES ($1, $2, now() - $3::interval, 5, 'http://127.0.0.1/', 500, false)`, [rows[0]!.uuid, uuid, age])
      return rows[0]!.uuid
    }
    const expired = await old("succeeded", "7 days 1 minute")
    const expiredFailed = await old("failed", "8 days")
    const kept = await old("failed", "6 days 23 hours")
    const unfinished = await old("pending", "9 days")
    const removed = await Effect.runPromise(cleanWebhookHistory.pipe(
      Effect.provide(testPgLayer(database.url, 1))
    ))
    expect(removed.deliveries).toBeGreaterThanOrEqual(2)
    const left = new Set((await db.query<{ uuid: string }>("SELECT uuid FROM webhook_deliveries WHERE endpoint_uuid = $1", [uuid])).rows.map((row) => row.uuid))
    expect(left.has(expired)).toBe(false)
    expect(left.has(expiredFailed)).toBe(false)
    expect(left.has(kept)).toBe(true)
    expect(left.has(unfinished)).toBe(true)
    // The unfinished delivery stays visible, but its 9-day-old attempt log is gone.
    const { rows: attempts } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_uuid = $1", [unfinished])
    expect(attempts[0]!.n).toBe(0)
    const { rows: keptAttempts } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_uuid = $1", [kept])
    expect(keptAttempts[0]!.n).toBe(1)
    expect((await deliveries(owner, uuid, "?limit=100")).some((d) => d["eventUuid"] === recent)).toBe(true)
  })
})
