import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import { actorForSession, createSession } from "../auth/Sessions.js"
import { PostgresBlobStore } from "../files/BlobStore.js"
import type { RelationView } from "../relations/Relation.js"
import { statusesOf } from "../relations/Transitions.js"
import type { ThreadView } from "../threads/Thread.js"
import { seedDemoData } from "./DemoData.js"

let m: Marketplace
beforeAll(async () => {
  m = await openMarketplace("demo_relations")
})
afterAll(async () => {
  await m?.close()
})

const seed = (reset = false) =>
  m.runtime.runPromise(Effect.provide(seedDemoData({ publications: 300, seed: 7, profilesPerType: 8, reset }), PostgresBlobStore))

describe("the demo marketplace's transactions", () => {
  it("holds responses, offers, deals and job contacts in every state, with consistent history, and threads with Russian messages", async () => {
    const summary = await seed()
    expect(summary.relations.relations).toBeGreaterThan(40)
    expect(summary.relations.messages).toBeGreaterThan(summary.relations.threads)
    const states = await m.sql<{ kind: string; status: string }>("SELECT DISTINCT kind, status FROM relations")
    for (const [kind, statuses] of Object.entries(statusesOf)) {
      const have = states.filter((row) => row.kind === kind).map((row) => row.status).sort()
      expect(have, kind).toEqual([...statuses].sort())
    }
    // History ends in the state, revision counts it, and every deal's origin was accepted.
    const broken = await m.sql(`SELECT r.uuid FROM relations r
      WHERE r.revision <> (SELECT count(*) FROM relation_history h WHERE h.relation_uuid = r.uuid)
        OR r.status <> (SELECT h.status FROM relation_history h WHERE h.relation_uuid = r.uuid ORDER BY h.at DESC, h.seq DESC LIMIT 1)
        OR (r.kind = 'deal' AND (SELECT o.status FROM relations o WHERE o.uuid = r.origin_relation_uuid) <> 'accepted')`)
    expect(broken).toEqual([])
    const [cyrillic] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE body !~ '[А-Яа-яЁё]'")
    expect(cyrillic?.n).toBe(0)

    // Through the operations, as a demo profile sees them: views decode, allowedActions follow the tables.
    const [busy] = await m.sql<{ uuid: string; account_uuid: string }>(`SELECT p.uuid, p.account_uuid FROM profiles p
      JOIN relations r ON p.uuid IN (r.initiator_profile_uuid, r.recipient_profile_uuid) WHERE r.kind = 'deal'
      GROUP BY p.uuid, p.account_uuid ORDER BY count(*) DESC, p.uuid LIMIT 1`)
    const actor = await m.runtime.runPromise(Effect.gen(function*() {
      const session = yield* createSession(busy!.account_uuid, busy!.uuid)
      return Option.getOrThrow(yield* actorForSession(session.sessionUuid))
    }))
    const deals = bodyOf<{ items: Array<RelationView> }>(await m.invoke("deals.list", actor, { urlParams: {} }))
    expect(deals.items.length).toBeGreaterThan(0)
    for (const deal of deals.items) {
      if (deal.status === "completed" || deal.status === "terminated") expect(deal.allowedActions).toEqual([])
      else expect(deal.allowedActions).toContain("deals.terminate")
      expect(deal.threadUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    }
    const threads = bodyOf<{ items: Array<ThreadView> }>(await m.invoke("threads.list", actor, { urlParams: {} }))
    expect(threads.items.length).toBeGreaterThan(0)
    expect(threads.items.every((thread) => thread.lastMessage !== undefined)).toBe(true)
  })

  it("reset removes them with the rest of the demo data and seeds the same again", async () => {
    const before = await m.sql<{ uuid: string }>("SELECT uuid::text FROM relations ORDER BY uuid")
    const again = await seed(true)
    expect(again.removed.publications).toBe(300)
    expect(await m.sql<{ uuid: string }>("SELECT uuid::text FROM relations ORDER BY uuid")).toEqual(before)
  })
})
