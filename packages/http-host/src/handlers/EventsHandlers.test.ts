import { EventEnvelope, eventTypes } from "@birzha/domain"
import { sequencePending } from "@birzha/worker-host/internal"
import type { SqlClient } from "@effect/sql"
import { ManagedRuntime, Schema } from "effect"
import { readFileSync } from "node:fs"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { eventually } from "../../../../testing/progress.js"
import { signIn, type SignedIn } from "../../../../testing/signIn.js"
import { type RunningHost, startService, untilReady } from "../testing.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

const origin = "http://localhost:8080"
let database: TestDatabase
let host: RunningHost
let db: Pg.Client
let worker: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>

beforeAll(async () => {
  database = await createTestDatabase("events", { migrated: true })
  host = await startService({ env: { DATABASE_URL: database.url }, publicOrigin: origin, trustProxy: true })
  await untilReady(host)
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  worker = ManagedRuntime.make(testPgLayer(database.url, 2))
})
afterAll(async () => {
  await worker?.dispose()
  await db?.end()
  await host?.close()
  await database?.drop()
})

/**
 * What the worker's sequencer does, on demand, so each test knows exactly what is numbered. It
 * repeats until this database has nothing left to number: xmin is cluster-wide, so a transaction
 * of another test's database can hold numbering back for a moment.
 */
const sequence = () =>
  eventually(async () => {
    await worker.runPromise(sequencePending(1000))
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_events WHERE position IS NULL")
    return rows[0]!.n
  }, (unsequenced) => unsequenced === 0, "every event numbered", { everyMs: 10 })

const get = (path: string, cookie?: string) =>
  fetch(`${host.url}${path}`, { headers: cookie === undefined ? {} : { cookie } })

interface Page {
  items: Array<typeof EventEnvelope.Encoded>
  nextCursor: string
  hasMore: boolean
}

const list = async (who: SignedIn, query = "") => {
  const response = await get(`/api/v1/events${query}`, who.cookie)
  expect(response.status, await response.clone().text()).toBe(200)
  return (await response.json()) as Page
}

const errorOf = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code

/** Reads every page after `cursor` (following nextCursor), the way a client catches up. */
const readAll = async (who: SignedIn, query: string, limit = 100) => {
  const items: Array<typeof EventEnvelope.Encoded> = []
  let cursor: string | undefined
  for (;;) {
    const page = await list(who, `?limit=${limit}${query}${cursor === undefined ? "" : `&cursor=${cursor}`}`)
    items.push(...page.items)
    cursor = page.nextCursor
    if (!page.hasMore) return { items, cursor }
  }
}

const updateProfile = async (who: SignedIn, revision: number, name: string) => {
  const response = await fetch(`${host.url}/api/v1/commands/profiles.update`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: who.cookie, origin },
    body: JSON.stringify({
      requestUuid: crypto.randomUUID(),
      expectedRevision: revision,
      data: { name, type: "Физлицо", isPublic: false, showContacts: false }
    })
  })
  expect(response.status, await response.clone().text()).toBe(200)
}

/** An event as a future emitter would write it (publications, offers...), straight into the outbox. */
const insertEvent = async (event: {
  type: string
  kind: string
  aggregateUuid?: string
  context: Record<string, unknown>
}) => {
  const aggregateUuid = event.aggregateUuid ?? crypto.randomUUID()
  const { rows } = await db.query<{ uuid: string }>(
    `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
     VALUES ($1, $2, $3::uuid, 2, jsonb_build_object('objectUuid', $4::text, 'status', 'pending'), $5::jsonb) RETURNING uuid`,
    [event.type, event.kind, aggregateUuid, aggregateUuid, JSON.stringify(event.context)]
  )
  return rows[0]!.uuid
}

const cursorOf = (position: number, issuedAt: number) =>
  Buffer.from(JSON.stringify({ v: 1, p: String(position), t: issuedAt })).toString("base64url")

const day = 24 * 60 * 60 * 1000

describe("events.list and events.get", () => {
  it("need a signed-in caller", async () => {
    expect((await get("/api/v1/events")).status).toBe(401)
    expect((await get(`/api/v1/events/${crypto.randomUUID()}`)).status).toBe(401)
  })

  it("answer the caller's sequenced events as exact envelopes, in position order; unsequenced events do not exist yet", async () => {
    const me = await signIn({ url: host.url, origin, db })
    await updateProfile(me, 1, "Первое имя")
    await updateProfile(me, 2, "Второе имя")
    expect((await list(me)).items).toEqual([])
    await sequence()
    const { items } = await list(me)
    expect(items.map((e) => [e.type, e.aggregate.revision])).toEqual([["profile.updated", 2], ["profile.updated", 3]])
    const [first] = items
    expect(Object.keys(first!).sort()).toEqual(["aggregate", "context", "data", "occurredAt", "schemaVersion", "type", "uuid"])
    expect(first).toMatchObject({
      schemaVersion: 1,
      aggregate: { kind: "profile", uuid: me.profileUuid, revision: 2 },
      data: { objectUuid: me.profileUuid, status: "updated" },
      context: { profileUuid: me.profileUuid }
    })
    expect(Schema.decodeUnknownSync(EventEnvelope)(first)).toBeTruthy()
    const one = await get(`/api/v1/events/${first!.uuid}`, me.cookie)
    expect(one.status).toBe(200)
    expect(await one.json()).toEqual(first)
    expect(one.headers.get("cache-control")).toContain("no-store")
  })

  it("show another profile nothing of mine: not in its list, 404 on get", async () => {
    const me = await signIn({ url: host.url, origin, db })
    const other = await signIn({ url: host.url, origin, db })
    await updateProfile(me, 1, "Моё имя")
    await sequence()
    const mine = (await list(me, "?limit=100")).items
    expect(mine).toHaveLength(1)
    const theirs = await readAll(other, "")
    expect(theirs.items.map((e) => e.uuid)).not.toContain(mine[0]!.uuid)
    const response = await get(`/api/v1/events/${mine[0]!.uuid}`, other.cookie)
    expect(response.status).toBe(404)
    expect(await errorOf(response)).toBe("not_found")
    expect((await get(`/api/v1/events/${crypto.randomUUID()}`, me.cookie)).status).toBe(404)
  })

  it("apply the visibility rule: the actor, the audience and the owner of the record see an event, nobody else", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const moderator = await signIn({ url: host.url, origin, db })
    const party = await signIn({ url: host.url, origin, db })
    const stranger = await signIn({ url: host.url, origin, db })
    const { rows } = await db.query<{ uuid: string }>(
      "INSERT INTO publications (id, kind, owner_profile_uuid, draft) VALUES ($1, 'task', $2, '{}'::jsonb) RETURNING uuid",
      [`evt${Date.now()}`, owner.profileUuid]
    )
    const publication = rows[0]!.uuid
    // Caused by the moderator, about the owner's publication.
    const moderated = await insertEvent({ type: "publication.moderated", kind: "publication", aggregateUuid: publication, context: { profileUuid: moderator.profileUuid } })
    // Caused by the owner, addressed to the other party.
    const offer = await insertEvent({ type: "offer.received", kind: "offer", context: { profileUuid: owner.profileUuid, audience: [party.profileUuid] } })
    await sequence()
    const seen = async (who: SignedIn) => (await readAll(who, "")).items.map((e) => e.uuid)
    expect(await seen(owner)).toEqual([moderated, offer])
    expect(await seen(moderator)).toEqual([moderated])
    expect(await seen(party)).toEqual([offer])
    expect(await seen(stranger)).toEqual([])
    expect((await get(`/api/v1/events/${offer}`, party.cookie)).status).toBe(200)
    expect((await get(`/api/v1/events/${offer}`, moderator.cookie)).status).toBe(404)
    // Rights at read time: the publication passes to another owner, and its events with it.
    await db.query("UPDATE publications SET owner_profile_uuid = $1 WHERE uuid = $2", [stranger.profileUuid, publication])
    expect(await seen(stranger)).toEqual([moderated])
    expect(await seen(owner)).toEqual([offer])
  })

  it("page with an opaque cursor: limit per page, hasMore, and a nextCursor that picks up events sequenced later", async () => {
    const me = await signIn({ url: host.url, origin, db })
    for (let revision = 1; revision <= 5; revision++) await updateProfile(me, revision, `Имя ${revision}`)
    await sequence()
    const pages: Array<Page> = []
    let cursor = ""
    for (;;) {
      const page = await list(me, `?limit=2${cursor}`)
      pages.push(page)
      cursor = `&cursor=${page.nextCursor}`
      if (!page.hasMore) break
    }
    expect(pages.map((p) => [p.items.length, p.hasMore])).toEqual([[2, true], [2, true], [1, false]])
    expect(pages.flatMap((p) => p.items.map((e) => e.aggregate.revision))).toEqual([2, 3, 4, 5, 6])
    // Caught up: the same cursor answers nothing until something new is sequenced.
    const caughtUp = pages.at(-1)!.nextCursor
    expect((await list(me, `?cursor=${caughtUp}`)).items).toEqual([])
    await updateProfile(me, 6, "Ещё одно")
    expect((await list(me, `?cursor=${caughtUp}`)).items).toEqual([])
    await sequence()
    const fresh = await list(me, `?cursor=${caughtUp}`)
    expect(fresh.items.map((e) => e.aggregate.revision)).toEqual([7])
    expect(fresh.hasMore).toBe(false)
  })

  it("look through at most 10 000 positions per call: past a long run of others' events, an empty page with hasMore, then mine", async () => {
    const me = await signIn({ url: host.url, origin, db })
    const stranger = await signIn({ url: host.url, origin, db })
    await sequence()
    const { rows: [start] } = await db.query<{ p: string }>("SELECT last_position::text AS p FROM event_sequence")
    await db.query(
      `INSERT INTO outbox_events (type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context)
       SELECT 'profile.updated', 'profile', $1::uuid, g, jsonb_build_object('objectUuid', $1::text, 'status', 'updated'),
         jsonb_build_object('profileUuid', $1::text)
       FROM generate_series(1, 10050) g`,
      [stranger.profileUuid]
    )
    await sequence()
    await updateProfile(me, 1, "После длинной ленты")
    await sequence()
    const first = await list(me, `?cursor=${cursorOf(Number(start!.p), Date.now())}`)
    expect(first.items).toEqual([])
    expect(first.hasMore).toBe(true)
    const second = await list(me, `?cursor=${first.nextCursor}`)
    expect(second.items.map((e) => e.type)).toEqual(["profile.updated"])
    expect(second.items[0]!.aggregate.uuid).toBe(me.profileUuid)
    expect(second.hasMore).toBe(false)
  })

  it("bound limit to 1..100", async () => {
    const me = await signIn({ url: host.url, origin, db })
    await sequence()
    const { rows: [start] } = await db.query<{ p: string }>("SELECT last_position::text AS p FROM event_sequence")
    const from = `&cursor=${cursorOf(Number(start!.p), Date.now())}`
    for (let revision = 1; revision <= 2; revision++) await updateProfile(me, revision, `Имя ${revision}`)
    await sequence()
    for (const bad of ["0", "101", "-1", "1.5", "ten", ""]) {
      const response = await get(`/api/v1/events?limit=${bad}`, me.cookie)
      expect(response.status, `limit=${bad}`).toBe(400)
      expect(await errorOf(response)).toBe("invalid_request")
    }
    const one = await list(me, `?limit=1${from}`)
    expect([one.items.length, one.hasMore]).toEqual([1, true])
    const hundred = await list(me, `?limit=100${from}`)
    expect([hundred.items.length, hundred.hasMore]).toEqual([2, false])
  })

  it("answer 410 resync_required for a cursor issued more than 30 days ago, and 400 for one that is not ours", async () => {
    const me = await signIn({ url: host.url, origin, db })
    const now = Date.now()
    expect((await get(`/api/v1/events?cursor=${cursorOf(0, now - 30 * day + 60_000)}`, me.cookie)).status).toBe(200)
    const expired = await get(`/api/v1/events?cursor=${cursorOf(0, now - 30 * day - 60_000)}`, me.cookie)
    expect(expired.status).toBe(410)
    expect(await errorOf(expired)).toBe("resync_required")
    for (const bad of ["not-a-cursor", Buffer.from("{}").toString("base64url"), "ä", Buffer.from(JSON.stringify({ v: 1, p: "-1", t: now })).toString("base64url")]) {
      const response = await get(`/api/v1/events?cursor=${encodeURIComponent(bad)}`, me.cookie)
      expect(response.status, bad).toBe(400)
      expect(await errorOf(response)).toBe("invalid_request")
    }
  })

  it("filter by types with * wildcards and by aggregate", async () => {
    const me = await signIn({ url: host.url, origin, db })
    await updateProfile(me, 1, "Имя")
    const submitted = await insertEvent({ type: "publication.submitted", kind: "publication", context: { profileUuid: me.profileUuid } })
    const hidden = await insertEvent({ type: "publication.hidden", kind: "publication", context: { profileUuid: me.profileUuid } })
    const offer = await insertEvent({ type: "offer.received", kind: "offer", context: { audience: [me.profileUuid] } })
    const response = await insertEvent({ type: "job_response.received", kind: "job_contact", context: { profileUuid: me.profileUuid } })
    await sequence()
    const types = async (query: string) => (await readAll(me, query)).items.map((e) => e.type)
    expect(await types("&types=publication.*")).toEqual(["publication.submitted", "publication.hidden"])
    expect(await types("&types=*.received")).toEqual(["offer.received", "job_response.received"])
    expect(await types("&types=profile.updated,offer.*")).toEqual(["profile.updated", "offer.received"])
    expect(await types("&types=*")).toHaveLength(5)
    // `_` is a character like any other, not a wildcard.
    expect(await types("&types=job_response.*")).toEqual(["job_response.received"])
    for (const bad of ["nothing.*", "Profile.updated", "profile.updated;drop", ","]) {
      const answer = await get(`/api/v1/events?types=${encodeURIComponent(bad)}`, me.cookie)
      expect(answer.status, bad).toBe(400)
      expect(await errorOf(answer)).toBe("invalid_request")
    }
    const uuids = async (query: string) => (await readAll(me, query)).items.map((e) => e.uuid)
    expect(await uuids("&aggregateKind=publication")).toEqual([submitted, hidden])
    const offerEvent = (await readAll(me, "&types=offer.received")).items[0]!
    expect(await uuids(`&aggregateUuid=${offerEvent.aggregate.uuid}`)).toEqual([offer])
    expect(await uuids(`&aggregateKind=job_contact&types=job_response.*`)).toEqual([response])
    expect((await get(`/api/v1/events?aggregateUuid=nope`, me.cookie)).status).toBe(400)
  })
})

describe("events.catalog", () => {
  it("describes exactly the 57 types, each with fields, permissions, how to read it and a sample that decodes as an envelope", async () => {
    const response = await get("/api/v1/event-catalog")
    expect(response.status).toBe(200)
    const catalog = (await response.json()) as {
      schemaVersion: number
      types: Array<{
        type: string
        fields: Array<{ name: string }>
        permissions: { scopes: Array<string>; visibleTo: string }
        read: { operations: Array<{ operationId: string; method: string; path: string }>; note: string }
        sample: unknown
      }>
    }
    expect(catalog.schemaVersion).toBe(1)
    expect(catalog.types).toHaveLength(57)
    expect(catalog.types.map((t) => t.type)).toEqual([...eventTypes])
    const spec = JSON.parse(readFileSync(new URL("../../../../docs/spec/operations.json", import.meta.url), "utf8")) as Array<{
      operationId: string | null
      method: string
      path: string
    }>
    const specById = new Map(spec.map((op) => [op.operationId, op]))
    for (const entry of catalog.types) {
      const sample = Schema.decodeUnknownSync(EventEnvelope)(entry.sample)
      expect(sample.type).toBe(entry.type)
      expect(entry.fields.map((f) => f.name)).toEqual(["objectUuid", "status"])
      expect(entry.permissions.scopes[0]).toBe("events:read")
      expect(entry.permissions.scopes.length, entry.type).toBeGreaterThan(1)
      // Machine-readable: scope names only, no prose placeholders.
      for (const scope of entry.permissions.scopes) expect(scope, entry.type).toMatch(/^[a-z_]+:[a-z_]+$/)
      expect(entry.permissions.visibleTo.length).toBeGreaterThan(0)
      expect(entry.read.operations.length).toBeGreaterThan(0)
      for (const op of entry.read.operations) {
        expect(specById.get(op.operationId), `${entry.type}: ${op.operationId}`).toEqual(op)
      }
    }
    const byType = new Map(catalog.types.map((entry) => [entry.type, entry]))
    expect(byType.get("publication.submitted")!.permissions.scopes).toEqual(
      ["events:read", "tasks:read", "portfolio:read", "services:read", "articles:read", "jobs:read", "resumes:read", "learning:read"]
    )
    expect(byType.get("task.closed")!.permissions.scopes).toEqual(["events:read", "tasks:read"])
  })
})
