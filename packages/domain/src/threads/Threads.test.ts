import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, codeOf, type Marketplace, openMarketplace } from "../../test/marketplace.js"
import type { SessionActor } from "../kernel/Authentication.js"
import { catalog } from "../api/BirzhaApi.js"
import { eventCatalogOf } from "../events/EventCatalog.js"
import { completeDueDeals } from "../relations/Relations.js"
import type { RelationView } from "../relations/Relation.js"
import type { MessageView, ThreadOpened, ThreadView } from "./Thread.js"

const eventCatalog = eventCatalogOf(catalog)

let m: Marketplace
let a: SessionActor
let b: SessionActor

beforeAll(async () => {
  m = await openMarketplace("threads")
  a = await m.profile({ public: true, name: "Анна" })
  b = await m.profile({ public: true, name: "Борис" })
})
afterAll(async () => {
  await m?.close()
})

const open = (actor: SessionActor, fields: Record<string, unknown>) =>
  m.invoke("threads.open", actor, { payload: { requestUuid: randomUUID(), body: "Здравствуйте", ...fields } })
const send = (actor: SessionActor, threadUuid: string, body: string) =>
  m.invoke("messages.send", actor, { payload: { requestUuid: randomUUID(), threadUuid, body } })
const thread = async (actor: SessionActor, threadUuid: string) =>
  bodyOf<ThreadView>(await m.invoke("threads.get", actor, { urlParams: { threadUuid } }))

describe("threads and messages", () => {
  it("one direct thread per pair and publication; unread counts; threads.messages pages oldest first and moves the read marker", async () => {
    const first = bodyOf<ThreadOpened>(await open(a, { recipientProfileUuid: b.profileUuid }))
    const again = bodyOf<ThreadOpened>(await open(a, { recipientProfileUuid: b.profileUuid, body: "Ещё вопрос" }))
    expect(again.thread.uuid).toBe(first.thread.uuid)
    const service = await m.publication(b, "service")
    const about = bodyOf<ThreadOpened>(await open(a, { publicationUuid: service }))
    expect(about.thread.uuid).not.toBe(first.thread.uuid)
    expect(about.thread.publicationUuid).toBe(service)
    expect(codeOf(await open(b, { publicationUuid: service }))).toBe("forbidden")
    expect(codeOf(await open(a, { recipientProfileUuid: a.profileUuid }))).toBe("forbidden")

    const threadUuid = first.thread.uuid
    await send(a, threadUuid, "Третье")
    expect((await thread(b, threadUuid)).unreadCount).toBe(3)
    expect((await thread(a, threadUuid)).unreadCount).toBe(0)
    expect((await thread(b, threadUuid)).lastMessage?.body).toBe("Третье")

    const page = await m.invoke("threads.messages", b, { urlParams: { threadUuid, limit: "2" } })
    const { items, nextCursor } = bodyOf<{ items: Array<MessageView>; nextCursor?: string }>(page)
    expect(items.map((message) => message.body)).toEqual(["Здравствуйте", "Ещё вопрос"])
    expect((await thread(b, threadUuid)).unreadCount).toBe(1)
    const rest = bodyOf<{ items: Array<MessageView>; nextCursor?: string }>(
      await m.invoke("threads.messages", b, { urlParams: { threadUuid, cursor: nextCursor! } })
    )
    expect([rest.items.map((message) => message.body), rest.nextCursor]).toEqual([["Третье"], undefined])
    const after = await thread(b, threadUuid)
    // Reading is bookkeeping: no revision bump.
    expect([after.unreadCount, after.revision]).toEqual([0, 4])
    // Re-reading an older page never moves the marker back.
    await m.invoke("threads.messages", b, { urlParams: { threadUuid, limit: "1" } })
    expect((await thread(b, threadUuid)).unreadCount).toBe(0)

    // threads.list: by last message, filtered by publication.
    await send(b, threadUuid, "Ответ")
    const list = bodyOf<{ items: Array<ThreadView> }>(await m.invoke("threads.list", a, { urlParams: {} }))
    expect(list.items.map((item) => item.uuid).slice(0, 2)).toEqual([threadUuid, about.thread.uuid])
    expect(list.items[0]?.unreadCount).toBe(1)
    const filtered = bodyOf<{ items: Array<ThreadView> }>(await m.invoke("threads.list", a, { urlParams: { publicationUuid: service } }))
    expect(filtered.items.map((item) => item.uuid)).toEqual([about.thread.uuid])

    // Every message told the other participant, and only it.
    const events = await m.sql<{ profile: string; audience: Array<string>; thread: string; status: string }>(
      `SELECT context ->> 'profileUuid' AS profile, context -> 'audience' AS audience, data ->> 'threadUuid' AS thread, data ->> 'status' AS status
       FROM outbox_events WHERE type = 'message.received' AND context ->> 'threadUuid' = $1 ORDER BY append_order`, threadUuid)
    expect(events.map((event) => [event.profile === a.profileUuid ? "a" : "b", event.audience, event.thread, event.status])).toEqual([
      ["a", [b.profileUuid], threadUuid, "sent"],
      ["a", [b.profileUuid], threadUuid, "sent"],
      ["a", [b.profileUuid], threadUuid, "sent"],
      ["b", [a.profileUuid], threadUuid, "sent"]
    ])
  })

  it("a relation's thread: body on a state change is posted there, and the deal shares its origin's thread; an offer made in a thread keeps it", async () => {
    const task = await m.publication(a, "task")
    const response = bodyOf<RelationView>(await m.invoke("responses.create", b, { payload: { requestUuid: randomUUID(), publicationUuid: task, body: "Отклик" } }))
    const opened = bodyOf<ThreadOpened>(await open(b, { relationUuid: response.uuid, body: "Есть вопрос по заданию" }))
    expect(opened.thread.relationUuid).toBe(response.uuid)
    const accepted = bodyOf<RelationView>(await m.invoke("responses.status", a, {
      payload: { requestUuid: randomUUID(), relationUuid: response.uuid, expectedRevision: 1, status: "accepted", body: "Вы приняты" }
    }))
    expect(accepted.threadUuid).toBe(opened.thread.uuid)
    const deal = bodyOf<RelationView>(await m.invoke("deals.get", a, { urlParams: { relationUuid: accepted.dealUuid! } }))
    expect(deal.threadUuid).toBe(opened.thread.uuid)
    const messages = bodyOf<{ items: Array<MessageView> }>(await m.invoke("threads.messages", b, { urlParams: { threadUuid: opened.thread.uuid } }))
    expect(messages.items.map((message) => message.body)).toEqual(["Есть вопрос по заданию", "Вы приняты"])
    const byRelation = bodyOf<{ items: Array<ThreadView> }>(await m.invoke("threads.list", a, { urlParams: { relationUuid: deal.uuid } }))
    expect(byRelation.items.map((item) => item.uuid)).toEqual([opened.thread.uuid])

    const direct = bodyOf<ThreadOpened>(await open(a, { recipientProfileUuid: b.profileUuid, body: "Есть ещё работа" }))
    const offer = bodyOf<RelationView>(await m.invoke("offers.create", a, {
      payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Вот условия", threadUuid: direct.thread.uuid }
    }))
    expect(offer.threadUuid).toBe(direct.thread.uuid)
    const third = await m.profile({ public: true })
    expect(codeOf(await m.invoke("offers.create", third, {
      payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "x", threadUuid: direct.thread.uuid }
    }))).toBe("not_found")
    const dealFromOffer = bodyOf<RelationView>(await m.invoke("offers.accept", b, { payload: { requestUuid: randomUUID(), relationUuid: offer.uuid, expectedRevision: 1 } }))
    const offerDeal = bodyOf<RelationView>(await m.invoke("deals.get", b, { urlParams: { relationUuid: dealFromOffer.dealUuid! } }))
    expect(offerDeal.threadUuid).toBe(direct.thread.uuid)
  })
})

describe("messages.send under load (group commit)", () => {
  it("concurrent sends share transactions yet end as if sent one by one: every message once, its event to the other side, revisions and read markers", async () => {
    const senders = await Promise.all(Array.from({ length: 4 }, (_, i) => m.profile({ public: true, name: `Отправитель ${i}` })))
    const threads = await Promise.all(senders.map(async (sender) =>
      bodyOf<ThreadOpened>(await open(sender, { recipientProfileUuid: a.profileUuid })).thread))
    const sends = senders.flatMap((sender, i) => [
      ...Array.from({ length: 10 }, (_, k) => ({ actor: sender, thread: threads[i]!.uuid, body: `От ${i}: ${k}` })),
      ...Array.from({ length: 5 }, (_, k) => ({ actor: a, thread: threads[i]!.uuid, body: `Ответ ${i}: ${k}` }))
    ])
    const answers = await Promise.all(sends.map((s) => send(s.actor, s.thread, s.body)))
    expect(answers.map((answer) => answer.status)).toEqual(sends.map(() => 200))
    const views = answers.map((answer) => bodyOf<MessageView>(answer))
    expect(views.map((view) => [view.body, view.authorProfileUuid])).toEqual(sends.map((s) => [s.body, s.actor.profileUuid]))
    for (const [i, sender] of senders.entries()) {
      const uuid = threads[i]!.uuid
      const [row] = await m.sql<{ n: number; revision: number; events: number; to_other: number }>(
        `SELECT count(*)::int AS n, (SELECT revision FROM threads WHERE uuid = $1) AS revision,
          (SELECT count(*)::int FROM outbox_events e WHERE e.type = 'message.received' AND e.data->>'threadUuid' = $1::text) AS events,
          (SELECT count(*)::int FROM outbox_events e JOIN messages x ON x.uuid = e.aggregate_uuid
            WHERE x.thread_uuid = $1 AND e.context->'audience'->>0 = CASE WHEN x.author_profile_uuid = $2 THEN $3 ELSE $2 END::text) AS to_other
        FROM messages m WHERE m.thread_uuid = $1`, uuid, sender.profileUuid, a.profileUuid)
      // The opening message and 15 sends; revision 1 and one more per message; each event to the other participant.
      expect([row?.n, row?.revision, row?.events, row?.to_other]).toEqual([16, 17, 16, 16])
      // Each side has read up to its own last message, so the other side's later ones are unread.
      const [senderView, annaView] = [await thread(sender, uuid), await thread(a, uuid)]
      const [last] = await m.sql<{ author: string }>(`SELECT author_profile_uuid::text AS author FROM messages WHERE thread_uuid = $1 ORDER BY seq DESC LIMIT 1`, uuid)
      expect(last?.author === a.profileUuid ? annaView.unreadCount : senderView.unreadCount).toBe(0)
      // Each message its own moment, in seq order, though many shared a transaction.
      const times = await m.sql<{ at: string }>(`SELECT created_at::text AS at FROM messages WHERE thread_uuid = $1 ORDER BY seq`, uuid)
      expect(new Set(times.map((time) => time.at)).size).toBe(times.length)
      expect(times.map((time) => time.at)).toEqual(times.map((time) => time.at).sort())
    }
    const [together] = await m.sql<{ transactions: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS transactions FROM messages WHERE uuid = ANY($1::uuid[])`, views.map((view) => view.uuid))
    expect(together?.transactions).toBeLessThan(sends.length)
  })

  it("a batch's refused sends keep nothing while the rest commit: 404 for a stranger's thread, 400 for a bad reference, 429 past the hour's limit", async () => {
    const sender = await m.profile({ public: true })
    const stranger = await m.profile({ public: true })
    const opened = bodyOf<ThreadOpened>(await open(sender, { recipientProfileUuid: b.profileUuid }))
    await m.sql(`INSERT INTO rate_limit_hits (bucket, subject, at) SELECT 'messages', $1, now() - interval '10 minutes' FROM generate_series(1, 594)`, sender.profileUuid)
    const requests = [
      ...Array.from({ length: 10 }, (_, k) => ({ actor: sender, payload: { threadUuid: opened.thread.uuid, body: `Пакет ${k}` } })),
      { actor: stranger, payload: { threadUuid: opened.thread.uuid, body: "Чужая переписка" } },
      { actor: b, payload: { threadUuid: opened.thread.uuid, body: "Со ссылкой", references: [{ kind: "file", uuid: randomUUID() }] } }
    ].map((request) => ({ ...request, payload: { requestUuid: randomUUID(), ...request.payload } }))
    const answers = await Promise.all(requests.map((request) => m.invoke("messages.send", request.actor, { payload: request.payload })))
    const statuses = answers.slice(0, 10).map((answer) => answer.status)
    // 594 earlier hits + the opening message leave 5 slots of 600.
    expect([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length]).toEqual([5, 5])
    expect([codeOf(answers[10]!), codeOf(answers[11]!)]).toEqual(["not_found", "invalid_reference"])
    const [row] = await m.sql<{ messages: number; keys: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM messages WHERE thread_uuid = $1) AS messages,
        (SELECT count(*)::int FROM idempotency_keys WHERE request_uuid = ANY($2::uuid[])) AS keys,
        (SELECT count(*)::int FROM outbox_events WHERE type = 'message.received' AND data->>'threadUuid' = $1::text) AS events`,
      opened.thread.uuid, requests.map((request) => request.payload.requestUuid))
    expect([row?.messages, row?.keys, row?.events]).toEqual([6, 5, 6])
  })
})

describe("limits (persisted, 429 with Retry-After)", () => {
  const fill = (bucket: string, profileUuid: string, n: number, ago = "1 minute") =>
    m.sql(`INSERT INTO rate_limit_hits (bucket, subject, at) SELECT $1, $2, now() - $3::interval FROM generate_series(1, $4)`, bucket, profileUuid, ago, n)

  it("600 messages an hour, then 429 with the real wait; nothing saved", async () => {
    const sender = await m.profile({ public: true })
    const opened = bodyOf<ThreadOpened>(await open(sender, { recipientProfileUuid: a.profileUuid }))
    await fill("messages", sender.profileUuid, 599, "10 minutes")
    const refused = await send(sender, opened.thread.uuid, "Слишком много")
    expect([refused.status, codeOf(refused)]).toEqual([429, "rate_limited"])
    expect(refused.facts.retryAfterSeconds).toBeGreaterThan(2900)
    expect(refused.facts.retryAfterSeconds).toBeLessThanOrEqual(3000)
    const [count] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE thread_uuid = $1", opened.thread.uuid)
    expect(count?.n).toBe(1)
  })

  it("100 responses a day (tasks and vacancies together)", async () => {
    const responder = await m.profile()
    await fill("relations.responses", responder.profileUuid, 99)
    const vacancy = await m.publication(a, "vacancy")
    expect((await m.invoke("job_responses.create", responder, { payload: { requestUuid: randomUUID(), publicationUuid: vacancy, body: "1" } })).status).toBe(200)
    const task = await m.publication(a, "task")
    const refused = await m.invoke("responses.create", responder, { payload: { requestUuid: randomUUID(), publicationUuid: task, body: "2" } })
    expect([refused.status, codeOf(refused)]).toEqual([429, "rate_limited"])
    expect(refused.facts.retryAfterSeconds).toBeGreaterThan(80_000)
  })

  it("30 new contacts a day; a profile already dealt with is not a new contact", async () => {
    const sender = await m.profile({ public: true })
    bodyOf<ThreadOpened>(await open(sender, { recipientProfileUuid: a.profileUuid }))
    await fill("relations.new_contacts", sender.profileUuid, 29)
    const refused = await m.invoke("offers.create", sender, { payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Новый" } })
    expect([refused.status, codeOf(refused)]).toEqual([429, "rate_limited"])
    const known = await m.invoke("offers.create", sender, { payload: { requestUuid: randomUUID(), recipientProfileUuid: a.profileUuid, body: "Знакомый" } })
    expect(known.status).toBe(200)
  })
})

describe("the system's transitions", () => {
  it("deleting an account closes its profiles' open relations in the same transaction, each with its event", async () => {
    const leaving = await m.profile({ public: true })
    const task = await m.publication(a, "task")
    const response = bodyOf<RelationView>(await m.invoke("responses.create", leaving, { payload: { requestUuid: randomUUID(), publicationUuid: task, body: "Отклик" } }))
    const offer = bodyOf<RelationView>(await m.invoke("offers.create", a, { payload: { requestUuid: randomUUID(), recipientProfileUuid: leaving.profileUuid, body: "Оффер" } }))
    const second = bodyOf<RelationView>(await m.invoke("offers.create", a, { payload: { requestUuid: randomUUID(), recipientProfileUuid: leaving.profileUuid, body: "Ещё" } }))
    const accepted = bodyOf<RelationView>(await m.invoke("offers.accept", leaving, { payload: { requestUuid: randomUUID(), relationUuid: second.uuid, expectedRevision: 1 } }))
    const deleted = await m.invoke("accounts.delete", leaving, { payload: { confirmEmail: leaving.email } })
    expect(deleted.status).toBe(204)
    const status = async (id: string, uuid: string) => bodyOf<RelationView>(await m.invoke(id, a, { urlParams: { relationUuid: uuid } }))
    expect((await status("responses.get", response.uuid)).status).toBe("withdrawn")
    expect((await status("offers.get", offer.uuid)).status).toBe("declined")
    const deal = await status("deals.get", accepted.dealUuid!)
    expect([deal.status, deal.reason, deal.history.at(-1)?.byRole, deal.allowedActions]).toEqual(["terminated", "profile_deleted", "system", []])
    const events = await m.sql<{ type: string; status: string; cause: string; profile: string | null }>(
      `SELECT type, data ->> 'status' AS status, context ->> 'cause' AS cause, context ->> 'profileUuid' AS profile FROM outbox_events
       WHERE aggregate_uuid = ANY($1::uuid[]) AND context ->> 'cause' = 'profile_deleted' ORDER BY append_order`,
      [response.uuid, offer.uuid, accepted.dealUuid]
    )
    expect(events.map((event) => [event.type, event.status, event.profile])).toEqual([
      ["response.withdrawn", "withdrawn", null],
      ["offer.status_changed", "declined", null],
      ["deal.status_changed", "terminated", null]
    ])
  })

  it("closing or deleting a task declines its pending and shortlisted responses; accepted ones and their deals stay", async () => {
    const task = await m.publication(a, "task")
    const other = await m.profile()
    const third = await m.profile()
    const respond = (actor: SessionActor) =>
      m.invoke("responses.create", actor, { payload: { requestUuid: randomUUID(), publicationUuid: task, body: "Отклик" } }).then(bodyOf<RelationView>)
    const pending = await respond(b)
    const shortlisted = await respond(other)
    const hired = await respond(third)
    await m.invoke("responses.status", a, { payload: { requestUuid: randomUUID(), relationUuid: shortlisted.uuid, expectedRevision: 1, status: "shortlisted" } })
    await m.invoke("responses.status", a, { payload: { requestUuid: randomUUID(), relationUuid: hired.uuid, expectedRevision: 1, status: "accepted" } })
    const [row] = await m.sql<{ revision: number }>("SELECT revision FROM publications WHERE uuid = $1", task)
    const closed = await m.invoke("tasks.close", a, { payload: { requestUuid: randomUUID(), publicationUuid: task, expectedRevision: row!.revision } })
    expect(closed.status).toBe(200)
    const statuses = await m.sql<{ uuid: string; status: string; reason: string | null }>(
      "SELECT uuid::text, status, reason FROM relations WHERE publication_uuid = $1 AND kind = 'response'", task)
    const of = (uuid: string) => statuses.find((s) => s.uuid === uuid)
    expect([of(pending.uuid)?.status, of(pending.uuid)?.reason]).toEqual(["declined", "task_closed"])
    expect(of(shortlisted.uuid)?.status).toBe("declined")
    expect(of(hired.uuid)?.status).toBe("accepted")
    const [deal] = await m.sql<{ status: string }>("SELECT status FROM relations WHERE origin_relation_uuid = $1", hired.uuid)
    expect(deal?.status).toBe("active")
  })

  it("results left unanswered for 14 days complete the deal by themselves (once, whoever runs the job)", async () => {
    const offer = bodyOf<RelationView>(await m.invoke("offers.create", a, { payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Работа" } }))
    const accepted = bodyOf<RelationView>(await m.invoke("offers.accept", b, { payload: { requestUuid: randomUUID(), relationUuid: offer.uuid, expectedRevision: 1 } }))
    const handed = bodyOf<RelationView>(await m.invoke("deals.results", b, {
      payload: { requestUuid: randomUUID(), relationUuid: accepted.dealUuid!, expectedRevision: 1, body: "Готово" }
    }))
    expect(new Date(String(handed.autoCompleteAt)).getTime() - Date.now()).toBeGreaterThan(13.9 * 24 * 3600_000)
    expect(await m.runtime.runPromise(completeDueDeals())).toBe(0)
    await m.sql("UPDATE relations SET auto_complete_at = now() - interval '1 second' WHERE uuid = $1", handed.uuid)
    const runs = await Promise.all([m.runtime.runPromise(completeDueDeals()), m.runtime.runPromise(completeDueDeals())])
    expect(runs.reduce((x, y) => x + y, 0)).toBe(1)
    const deal = bodyOf<RelationView>(await m.invoke("deals.get", a, { urlParams: { relationUuid: handed.uuid } }))
    expect([deal.status, deal.history.at(-1)?.byRole, deal.autoCompleteAt, typeof deal.completedAt]).toEqual(["completed", "system", undefined, "string"])
    const [event] = await m.sql<{ status: string; cause: string }>(
      `SELECT data ->> 'status' AS status, context ->> 'cause' AS cause FROM outbox_events
       WHERE aggregate_uuid = $1 ORDER BY append_order DESC LIMIT 1`, handed.uuid)
    expect(event).toEqual({ status: "completed", cause: "auto_complete" })
  })
})

describe("the event catalog", () => {
  it("every event emitted above has a catalog type, status and aggregate kind", async () => {
    const emitted = await m.sql<{ type: string; status: string; kind: string }>(
      "SELECT DISTINCT type, data ->> 'status' AS status, aggregate_kind AS kind FROM outbox_events"
    )
    const relationTypes = new Set<string>()
    for (const event of emitted) {
      const entry = eventCatalog.types.find((type) => type.type === event.type)
      expect(entry?.type, event.type).toBe(event.type)
      expect(entry!.fields.find((field) => field.name === "status")?.values, `${event.type} ${event.status}`).toContain(event.status)
      expect(entry!.aggregateKind, event.type).toBe(event.kind)
      relationTypes.add(event.type)
    }
    // The flows above reached these types at least.
    for (const type of ["response.received", "response.status_changed", "response.withdrawn", "offer.received", "offer.status_changed",
      "deal.started", "deal.status_changed", "job_response.received", "message.received"]) {
      expect(relationTypes.has(type), type).toBe(true)
    }
  })
})
