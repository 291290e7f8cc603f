import type { SessionActor } from "../kernel/Authentication.js"
import { catalog } from "../api/BirzhaApi.js"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bodyOf, codeOf, type Marketplace, openMarketplace, pool } from "../../test/marketplace.js"
import { eventCatalogOf } from "../events/EventCatalog.js"
import type { RelationView } from "./Relation.js"
import { usedFields } from "./RelationsOperations.js"
import { partyOf } from "./Relations.js"
import {
  actorMatches,
  familyKinds,
  type RelationKind,
  type Role,
  rowsFor,
  statusesOf,
  statusInputs,
  transitions,
  type TransitionOperation
} from "./Transitions.js"

const eventCatalog = eventCatalogOf(catalog)

let m: Marketplace
let a: SessionActor
let b: SessionActor
let c: SessionActor

beforeAll(async () => {
  m = await openMarketplace("relations")
  a = await m.profile({ public: true, name: "Анна" })
  b = await m.profile({ public: true, name: "Борис" })
  c = await m.profile({ public: true, name: "Вера" })
})
afterAll(async () => {
  await m?.close()
})

interface FixtureSpec {
  readonly kind: RelationKind
  readonly status: string
  readonly initiatorRole: Role
  readonly initiator?: SessionActor
  readonly recipient?: SessionActor
}

/**
 * Relations in given states, made with two SQL statements whatever their number (a deal gets an
 * accepted offer as its origin). Uuids are chosen here so origins and deals pair up.
 */
const fixtures = async (specs: ReadonlyArray<FixtureSpec>): Promise<Array<string>> => {
  const uuids = specs.map(() => randomUUID())
  const origins = specs.map((spec) => (spec.kind === "deal" ? randomUUID() : null))
  const columns = (rows: ReadonlyArray<{ uuid: string; spec: FixtureSpec; kind: string; status: string; origin: string | null }>) => [
    rows.map((row) => row.uuid),
    rows.map((row) => row.kind),
    rows.map((row) => row.status),
    rows.map((row) => (row.spec.initiator ?? a).profileUuid),
    rows.map((row) => (row.spec.recipient ?? b).profileUuid),
    rows.map((row) => row.spec.initiatorRole),
    rows.map((row) => row.origin)
  ]
  const insert = `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, origin_relation_uuid, body)
    SELECT u, k, s, i, r, ro, o, 'Условия' FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::uuid[], $6::text[], $7::uuid[]) AS t(u, k, s, i, r, ro, o)`
  const originRows = specs.flatMap((spec, i) => origins[i] === null ? [] : [{ uuid: origins[i]!, spec, kind: "offer", status: "accepted", origin: null }])
  if (originRows.length > 0) await m.sql(insert, ...columns(originRows))
  await m.sql(insert, ...columns(specs.map((spec, i) => ({ uuid: uuids[i]!, spec, kind: spec.kind, status: spec.status, origin: origins[i] ?? null }))))
  return uuids
}

/** One relation of `kind` in `status` between `initiator` and `recipient`. */
const fixture = async (kind: RelationKind, status: string, initiatorRole: Role, initiator = a, recipient = b): Promise<string> =>
  (await fixtures([{ kind, status, initiatorRole, initiator, recipient }]))[0]!

const operations = [...new Set(transitions.map((t) => t.operation))]
const calls = operations.flatMap((operation): Array<{ readonly operation: TransitionOperation; readonly status: string | undefined }> => {
  const inputs = statusInputs(operation)
  return inputs.length === 0 ? [{ operation, status: undefined }] : inputs.map((status) => ({ operation, status }))
})
const familyOf = (operation: TransitionOperation) => operation.slice(0, operation.indexOf(".")) as keyof typeof familyKinds
const getOf = (kind: RelationKind) =>
  kind === "response" ? "responses.get" : kind === "offer" ? "offers.get" : kind === "deal" ? "deals.get" : "job_contacts.get"

const variants: ReadonlyArray<{ readonly kind: RelationKind; readonly initiatorRole: Role }> = [
  { kind: "response", initiatorRole: "contractor" },
  { kind: "offer", initiatorRole: "customer" },
  { kind: "offer", initiatorRole: "contractor" },
  { kind: "deal", initiatorRole: "contractor" },
  { kind: "deal", initiatorRole: "customer" },
  { kind: "job_response", initiatorRole: "candidate" },
  { kind: "job_invitation", initiatorRole: "employer" }
]

describe("the catalog of relation operations", () => {
  it("declares the spec's 26 operations and the request_changes extension, each a POST or GET at /api/v1/commands/<id>", () => {
    const ids = Object.keys(usedFields).sort()
    const declared = catalog.filter((entry) => ["responses", "offers", "deals", "job_contacts", "threads"].includes(entry.group))
    expect(declared.map((entry) => entry.id).sort()).toEqual(ids)
    expect(ids).toHaveLength(27)
    for (const entry of declared) {
      expect(entry.path, entry.id).toBe(`/api/v1/commands/${entry.id}`)
      expect(entry.method, entry.id).toBe(/\.(list|get|messages)$/.test(entry.id) ? "GET" : "POST")
      expect(entry.access, entry.id).toBe("authenticated")
      expect(entry.specId, entry.id).toBe(entry.id === "deals.request_changes" ? null : entry.id)
    }
    const policy = (id: string) => declared.find((entry) => entry.id === id)!
    // The spec's own scopes and approvals (deals and job contacts).
    expect([policy("deals.list").scopes, policy("deals.list").approval]).toEqual([["deals:read"], false])
    expect([policy("deals.terminate").scopes, policy("deals.terminate").approval]).toEqual([["deals:write"], true])
    expect([policy("job_contacts.status").scopes, policy("job_contacts.status").approval]).toEqual([["responses:write"], true])
    expect([policy("job_invitations.create").scopes, policy("job_invitations.create").approval]).toEqual([["responses:write"], true])
    expect([policy("job_contacts.get").scopes, policy("job_contacts.get").approval]).toEqual([["responses:read"], false])
  })

  it("the transition operations are the table's own ids, each a declared POST command that uses the fields a transition reads", () => {
    // @ts-expect-error: a create is no transition; a hand-widened `TransitionOperation` (string) would accept it
    const notATransition: TransitionOperation = "responses.create"
    expect(operations).not.toContain(notATransition)
    for (const operation of operations) {
      const entry = catalog.find((candidate) => candidate.id === operation)
      expect(entry?.method, operation).toBe("POST")
      expect(usedFields[operation], operation).toEqual(expect.arrayContaining(["requestUuid", "relationUuid", "expectedRevision"]))
      if (statusInputs(operation).length > 0) expect(usedFields[operation], operation).toContain("status")
    }
  })

  it("every transition's event and status is in the event catalog, with the aggregate kind its events carry", () => {
    for (const t of transitions) {
      const entry = eventCatalog.types.find((type) => type.type === t.event)!
      expect(entry.fields.find((field) => field.name === "status")?.values, `${t.operation} ${t.input ?? ""}`).toContain(t.to)
    }
  })
})

describe("the state machine, generated from the transition tables", () => {
  it("every kind × state × operation × party: exactly the table's transition or 404/403/409, and allowedActions = the calls that succeed; a refusal in the wrong state names the state and the states that allow it, a 404 names nothing", async () => {
    interface Case {
      readonly kind: RelationKind
      readonly initiatorRole: Role
      readonly status: string
      readonly operation: TransitionOperation
      readonly input: string | undefined
      readonly caller: "initiator" | "recipient" | "third"
    }
    const cases: Array<Case> = []
    for (const variant of variants) {
      for (const status of statusesOf[variant.kind]) {
        for (const call of calls) {
          for (const caller of ["initiator", "recipient", "third"] as const) {
            cases.push({ ...variant, status, operation: call.operation, input: call.status, caller })
          }
        }
      }
    }
    const actorOf = (caller: Case["caller"]) => (caller === "initiator" ? a : caller === "recipient" ? b : c)
    const made = await fixtures(cases)
    const outcomes = await pool(12, cases.map((test, at) => async () => {
      const uuid = made[at]!
      const payload = (expectedRevision: number) => ({
        requestUuid: randomUUID(),
        relationUuid: uuid,
        expectedRevision,
        ...(test.input === undefined ? {} : { status: test.input }),
        ...(test.operation === "deals.results" ? { body: "Результат" } : {})
      })
      // Expected from the table alone.
      let expected: { status: number; code?: string; to?: string }
      const step = rowsFor(test.kind, test.operation, test.input)[0]
      if (test.caller === "third" || !(familyKinds[familyOf(test.operation)] as ReadonlyArray<string>).includes(test.kind) || step === undefined) {
        expected = { status: 404, code: "not_found" }
      } else if (!actorMatches(step.by, partyOf({ initiator_profile_uuid: a.profileUuid, initiator_role: test.initiatorRole }, actorOf(test.caller).profileUuid))) {
        expected = { status: 403, code: "forbidden" }
      } else if (!(step.from as ReadonlyArray<string>).includes(test.status)) {
        expected = { status: 409, code: "invalid_state" }
      } else {
        expected = { status: 200, to: step.to }
        // A stale revision changes nothing first.
        const stale = await m.invoke(test.operation, actorOf(test.caller), { payload: payload(7) })
        expect([stale.status, codeOf(stale)], JSON.stringify(test)).toEqual([409, "revision_conflict"])
        expect(bodyOf(stale)["error"], JSON.stringify(test)).toMatchObject({ resource: test.kind, uuid, revision: 1 })
      }
      const answer = await m.invoke(test.operation, actorOf(test.caller), { payload: payload(1) })
      const label = JSON.stringify(test)
      if (expected.status === 200) {
        const view = bodyOf<RelationView>(answer)
        expect([answer.status, view.status, view.revision], label).toEqual([200, expected.to, 2])
        if (step?.effect === "start_deal") expect(view.dealUuid, label).toMatch(/^[0-9a-f-]{36}$/)
      } else {
        expect([answer.status, codeOf(answer)], label).toEqual([expected.status, expected.code])
        const { code: _, message: __, ...members } = bodyOf<{ error: Record<string, unknown> }>(answer).error
        if (expected.code === "invalid_state") {
          expect(members, label).toEqual({ resource: test.kind, uuid, state: test.status, allowed: step!.from })
        } else {
          // Not found is not found: nothing about a relation the caller is no party to.
          expect(members, label).toEqual({})
        }
        const [row] = await m.sql<{ status: string; revision: number }>("SELECT status, revision FROM relations WHERE uuid = $1", uuid)
        expect([row?.status, row?.revision], label).toEqual([test.status, 1])
      }
      return { test, uuid, ok: answer.status === 200, event: step?.event, to: step?.to }
    }))

    // Each successful transition emitted exactly the table's event, to both parties and nobody else.
    const succeeded = outcomes.filter((outcome) => outcome.ok)
    expect(succeeded.length).toBeGreaterThan(20)
    const events = await m.sql<{ aggregate_uuid: string; type: string; status: string; audience: Array<string>; aggregate_kind: string }>(
      `SELECT aggregate_uuid::text, type, aggregate_kind, data ->> 'status' AS status, context -> 'audience' AS audience
       FROM outbox_events WHERE aggregate_uuid = ANY($1::uuid[])`,
      succeeded.map((outcome) => outcome.uuid)
    )
    for (const outcome of succeeded) {
      const own = events.filter((event) => event.aggregate_uuid === outcome.uuid)
      expect(own.map((event) => [event.type, event.status]), JSON.stringify(outcome.test)).toEqual([[outcome.event, outcome.to]])
      expect([...own[0]!.audience].sort()).toEqual([a.profileUuid, b.profileUuid].sort())
    }

    // allowedActions of each party in each state = the operations that succeeded for it there.
    const checked = variants.flatMap((variant) =>
      statusesOf[variant.kind].flatMap((status) => (["initiator", "recipient"] as const).map((caller) => ({ ...variant, status, caller }))))
    const viewed = await fixtures(checked)
    const checks = checked.map(({ kind, initiatorRole, status, caller }, at) => {
      const variant = { kind, initiatorRole }
      return async () => {
          const uuid = viewed[at]!
          const view = await m.invoke(getOf(variant.kind), actorOf(caller), { urlParams: { relationUuid: uuid } })
          const succeededOps = new Set(outcomes.filter((o) =>
            o.ok && o.test.kind === variant.kind && o.test.initiatorRole === variant.initiatorRole && o.test.status === status &&
            o.test.caller === caller
          ).map((o) => o.test.operation))
          expect([...bodyOf<RelationView>(view).allowedActions].sort(), `${variant.kind} ${variant.initiatorRole} ${status} ${caller}`)
            .toEqual([...succeededOps].sort())
      }
    })
    await pool(12, checks)
  })
})

describe("privacy", () => {
  it("a third profile gets 404 for every relation, thread and message operation on others' records, and sees none of their events", async () => {
    const task = await m.publication(a, "task")
    const response = bodyOf<RelationView>(await m.invoke("responses.create", b, { payload: { requestUuid: randomUUID(), publicationUuid: task, body: "Готов взяться" } }))
    const accepted = bodyOf<RelationView>(await m.invoke("responses.status", a, {
      payload: { requestUuid: randomUUID(), relationUuid: response.uuid, expectedRevision: 1, status: "accepted", body: "Беру вас" }
    }))
    const offer = bodyOf<RelationView>(await m.invoke("offers.create", a, { payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Ещё заказ" } }))
    const vacancy = await m.publication(a, "vacancy")
    const job = bodyOf<RelationView>(await m.invoke("job_responses.create", b, { payload: { requestUuid: randomUUID(), publicationUuid: vacancy, body: "Резюме" } }))
    const threadUuid = accepted.threadUuid!
    expect(threadUuid).toMatch(/^[0-9a-f-]{36}$/)
    const notFound = async (id: string, input: Parameters<Marketplace["invoke"]>[2]) => {
      const answer = await m.invoke(id, c, input)
      expect([answer.status, codeOf(answer)], id).toEqual([404, "not_found"])
    }
    const command = (relationUuid: string, extra: Record<string, unknown> = {}) => ({
      payload: { requestUuid: randomUUID(), relationUuid, expectedRevision: 1, ...extra }
    })
    await notFound("responses.get", { urlParams: { relationUuid: response.uuid } })
    await notFound("responses.withdraw", command(response.uuid))
    await notFound("responses.status", command(response.uuid, { status: "declined" }))
    await notFound("offers.get", { urlParams: { relationUuid: offer.uuid } })
    for (const id of ["offers.accept", "offers.decline", "offers.withdraw"]) await notFound(id, command(offer.uuid))
    await notFound("deals.get", { urlParams: { relationUuid: accepted.dealUuid! } })
    await notFound("deals.results", command(accepted.dealUuid!, { body: "x" }))
    for (const id of ["deals.complete", "deals.terminate", "deals.request_changes"]) await notFound(id, command(accepted.dealUuid!))
    await notFound("job_contacts.get", { urlParams: { relationUuid: job.uuid } })
    await notFound("job_contacts.status", command(job.uuid, { status: "declined" }))
    await notFound("threads.get", { urlParams: { threadUuid } })
    await notFound("threads.messages", { urlParams: { threadUuid } })
    await notFound("messages.send", { payload: { requestUuid: randomUUID(), threadUuid, body: "Можно к вам?" } })
    await notFound("threads.open", { payload: { requestUuid: randomUUID(), relationUuid: response.uuid, body: "Привет" } })
    for (const id of ["responses.list", "offers.list", "deals.list", "job_contacts.list", "threads.list"]) {
      expect(bodyOf<{ items: Array<unknown> }>(await m.invoke(id, c, { urlParams: {} })).items, id).toEqual([])
    }
    expect(bodyOf<{ items: Array<unknown> }>(await m.invoke("threads.list", c, { urlParams: { relationUuid: response.uuid } })).items).toEqual([])
    const { canSeeEvent } = await import("../events/EventVisibility.js")
    const uuids = await m.sql<{ uuid: string; profile: string | null }>(
      "SELECT uuid::text, context ->> 'profileUuid' AS profile FROM outbox_events WHERE aggregate_kind IN ('response', 'offer', 'deal', 'job_contact', 'message')"
    )
    const mine = uuids.filter((row) => row.profile !== c.profileUuid)
    expect(mine.length).toBeGreaterThan(5)
    const { Effect } = await import("effect")
    const seen = await m.runtime.runPromise(Effect.forEach(mine, (row) => canSeeEvent(c.profileUuid, row.uuid)))
    expect(seen.filter(Boolean)).toEqual([])
    const seenByB = await m.runtime.runPromise(Effect.forEach(mine, (row) => canSeeEvent(b.profileUuid, row.uuid)))
    expect(seenByB.every(Boolean)).toBe(true)
  })
})

describe("concurrency on real Postgres", () => {
  it("two simultaneous accepts of one offer make exactly one deal", async () => {
    for (let round = 0; round < 5; round++) {
      const offer = bodyOf<RelationView>(await m.invoke("offers.create", a, { payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Срочно" } }))
      const accept = () => m.invoke("offers.accept", b, { payload: { requestUuid: randomUUID(), relationUuid: offer.uuid, expectedRevision: 1 } })
      const answers = await Promise.all([accept(), accept()])
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409])
      const deals = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM relations WHERE origin_relation_uuid = $1", offer.uuid)
      expect(deals[0]?.n).toBe(1)
    }
  })

  it("20 concurrent retries of one requestUuid make one write and all answer the same", async () => {
    const task = await m.publication(a, "task")
    const requestUuid = randomUUID()
    const answers = await Promise.all(Array.from({ length: 20 }, () =>
      m.invoke("responses.create", c, { payload: { requestUuid, publicationUuid: task, body: "Один раз" } })))
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200]))
    expect(new Set(answers.map((answer) => bodyOf<RelationView>(answer).uuid)).size).toBe(1)
    const [count] = await m.sql<{ n: number; events: number }>(
      `SELECT count(*)::int AS n, (SELECT count(*)::int FROM outbox_events WHERE aggregate_uuid = min(r.uuid::text)::uuid) AS events
       FROM relations r WHERE publication_uuid = $1`, task)
    expect([count?.n, count?.events]).toEqual([1, 1])
    const thread = await m.invoke("threads.open", c, { payload: { requestUuid: randomUUID(), publicationUuid: task, body: "Вопрос" } })
    const threadUuid = bodyOf<{ thread: { uuid: string } }>(thread).thread.uuid
    const messageRequest = randomUUID()
    const sends = await Promise.all(Array.from({ length: 20 }, () =>
      m.invoke("messages.send", c, { payload: { requestUuid: messageRequest, threadUuid, body: "Дубль?" } })))
    expect(new Set(sends.map((answer) => bodyOf<{ uuid: string }>(answer).uuid)).size).toBe(1)
    const [messages] = await m.sql<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE thread_uuid = $1", threadUuid)
    expect(messages?.n).toBe(2)
  })
})

describe("bad input", () => {
  const counts = () =>
    m.sql<{ relations: number; messages: number; threads: number; events: number; keys: number }>(
      `SELECT (SELECT count(*)::int FROM relations) AS relations, (SELECT count(*)::int FROM messages) AS messages,
        (SELECT count(*)::int FROM threads) AS threads, (SELECT count(*)::int FROM outbox_events) AS events,
        (SELECT count(*)::int FROM idempotency_keys) AS keys`
    )

  it("each required field missing, 21 references, unknown and unused properties, wrong types: 400 envelope, nothing saved", async () => {
    const task = await m.publication(b, "task")
    const vacancy = await m.publication(b, "vacancy")
    const resume = await m.publication(b, "resume")
    const offer = await fixture("offer", "pending", "customer", b, a)
    const deal = await fixture("deal", "active", "customer", b, a)
    const job = await fixture("job_invitation", "invited", "employer", b, a)
    const thread = bodyOf<{ thread: { uuid: string } }>(await m.invoke("threads.open", a, {
      payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Здравствуйте" }
    })).thread.uuid
    const valid: Record<string, Record<string, unknown>> = {
      "responses.create": { requestUuid: randomUUID(), publicationUuid: task, body: "Отклик" },
      "offers.create": { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Предложение" },
      "offers.accept": { requestUuid: randomUUID(), relationUuid: offer, expectedRevision: 1 },
      "deals.results": { requestUuid: randomUUID(), relationUuid: deal, expectedRevision: 1, body: "Сдаю" },
      "job_responses.create": { requestUuid: randomUUID(), publicationUuid: vacancy, body: "Отклик" },
      "job_invitations.create": { requestUuid: randomUUID(), publicationUuid: resume, body: "Приглашение" },
      "job_contacts.status": { requestUuid: randomUUID(), relationUuid: job, expectedRevision: 1, status: "accepted" },
      "threads.open": { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, body: "Ещё раз" },
      "messages.send": { requestUuid: randomUUID(), threadUuid: thread, body: "Сообщение" }
    }
    const required: Record<string, ReadonlyArray<string>> = {
      "responses.create": ["requestUuid", "publicationUuid", "body"],
      "offers.create": ["requestUuid", "recipientProfileUuid", "body"],
      "offers.accept": ["requestUuid", "relationUuid", "expectedRevision"],
      "deals.results": ["requestUuid", "relationUuid", "expectedRevision"],
      "job_responses.create": ["requestUuid", "publicationUuid", "body"],
      "job_invitations.create": ["requestUuid", "publicationUuid", "body"],
      "job_contacts.status": ["requestUuid", "relationUuid", "expectedRevision", "status"],
      "threads.open": ["requestUuid", "body"],
      "messages.send": ["requestUuid", "threadUuid", "body"]
    }
    const before = await counts()
    const refused = async (id: string, payload: unknown, mentions?: string) => {
      const answer = await m.invoke(id, a, { payload })
      expect(answer.status, `${id} ${JSON.stringify(payload)}`).toBe(400)
      expect(typeof codeOf(answer)).toBe("string")
      if (mentions !== undefined) expect((answer.body as { error: { message: string } }).error.message, id).toContain(mentions)
    }
    const tooMany = Array.from({ length: 21 }, () => ({ kind: "file", uuid: randomUUID() }))
    for (const [id, payload] of Object.entries(valid)) {
      for (const field of required[id]!) {
        const { [field]: _, ...missing } = payload
        await refused(id, missing, field)
      }
      await refused(id, { ...payload, surprise: 1 }, "surprise")
      await refused(id, { ...payload, body: 5 }, "body")
      await refused(id, { ...payload, body: "" }, "body")
      await refused(id, { ...payload, body: "я".repeat(5001) }, "body")
      await refused(id, { ...payload, expectedRevision: "one" }, "expectedRevision")
      await refused(id, { ...payload, expectedRevision: -1 }, "expectedRevision")
      await refused(id, { ...payload, references: tooMany }, "references")
      await refused(id, { ...payload, references: [{ kind: "file" }] }, "references")
      await refused(id, { ...payload, requestUuid: "not-a-uuid" }, "requestUuid")
      await refused(id, { ...payload, limit: 5 }, "limit")
      await refused(id, { ...payload, cursor: "x" }, "cursor")
      await refused(id, "not an object")
    }
    // A field the operation does not use is named; a reference of the wrong kind lists its index.
    await refused("offers.accept", { ...valid["offers.accept"], reason: "Почему-то" }, "reason")
    await refused("offers.accept", { ...valid["offers.accept"], status: "accepted" }, "status")
    await refused("responses.create", { ...valid["responses.create"], references: [{ kind: "publication", uuid: task }, { kind: "file", uuid: randomUUID() }] }, "item 1")
    await refused("job_contacts.status", { ...valid["job_contacts.status"], status: "maybe" }, "status")
    await refused("threads.open", { requestUuid: randomUUID(), body: "x", recipientProfileUuid: b.profileUuid, publicationUuid: task })
    await refused("deals.results", { requestUuid: randomUUID(), relationUuid: deal, expectedRevision: 1 }, "body")
    for (const id of ["responses.list", "deals.get", "threads.list", "threads.messages"]) {
      for (const query of [{ references: "[]" }, { requestUuid: randomUUID() }, { limit: "-1" }, { limit: "ten" }, { expectedRevision: "1" }, { other: "1" }]) {
        const answer = await m.invoke(id, a, { urlParams: { threadUuid: thread, ...query } })
        expect([answer.status, id, query]).toEqual([400, id, query])
      }
    }
    expect(await counts()).toEqual(before)
    // The valid inputs themselves pass (the refusals above were for what was wrong, not for the rest).
    for (const [id, payload] of Object.entries(valid)) {
      expect((await m.invoke(id, a, { payload })).status, id).toBe(200)
    }
  })

  it("limit 0 reads as 20, above 100 as 100 (the spec's minimum 0, no maximum)", async () => {
    for (const limit of ["0", "1000"]) expect((await m.invoke("deals.list", a, { urlParams: { limit } })).status).toBe(200)
  })
})

describe("creating relations", () => {
  it("a response needs a visible open task of someone else, once per task", async () => {
    const open = await m.publication(a, "task")
    const closed = await m.publication(a, "task", { closed: true })
    const draft = await m.publication(a, "task", { visible: false })
    const service = await m.publication(a, "service")
    const respond = (actor: SessionActor, publicationUuid: string) =>
      m.invoke("responses.create", actor, { payload: { requestUuid: randomUUID(), publicationUuid, body: "Возьмусь" } })
    expect(codeOf(await respond(b, draft))).toBe("not_found")
    expect(codeOf(await respond(b, randomUUID()))).toBe("not_found")
    expect(codeOf(await respond(b, service))).toBe("invalid_reference")
    expect(codeOf(await respond(a, open))).toBe("forbidden")
    const refusedClosed = await respond(b, closed)
    expect(bodyOf(refusedClosed)["error"]).toMatchObject({ code: "invalid_state", resource: "task", uuid: closed, state: "closed", allowed: ["open"] })
    const first = await respond(b, open)
    expect([first.status, bodyOf<RelationView>(first).role, bodyOf<RelationView>(first).allowedActions]).toEqual([200, "contractor", ["responses.withdraw"]])
    expect(codeOf(await respond(b, open))).toBe("invalid_state")
    const owner = await m.invoke("responses.get", a, { urlParams: { relationUuid: bodyOf<RelationView>(first).uuid } })
    expect([bodyOf<RelationView>(owner).role, [...bodyOf<RelationView>(owner).allowedActions]]).toEqual(["customer", ["responses.status"]])
    await m.invoke("responses.withdraw", b, { payload: { requestUuid: randomUUID(), relationUuid: bodyOf<RelationView>(first).uuid, expectedRevision: 1 } })
    expect((await respond(b, open)).status).toBe(200)
  })

  it("an offer's sender role comes from the publication; a private stranger is 404; the recipient's task is 400", async () => {
    const stranger = await m.profile({ public: false })
    const ownService = await m.publication(a, "service")
    const theirService = await m.publication(b, "service")
    const theirTask = await m.publication(b, "task")
    const offer = (payload: Record<string, unknown>) => m.invoke("offers.create", a, { payload: { requestUuid: randomUUID(), body: "Условия", ...payload } })
    expect(codeOf(await offer({ recipientProfileUuid: stranger.profileUuid }))).toBe("not_found")
    expect(codeOf(await offer({ recipientProfileUuid: a.profileUuid }))).toBe("forbidden")
    expect(bodyOf<RelationView>(await offer({ recipientProfileUuid: b.profileUuid })).role).toBe("customer")
    expect(bodyOf<RelationView>(await offer({ recipientProfileUuid: b.profileUuid, publicationUuid: ownService })).role).toBe("contractor")
    expect(bodyOf<RelationView>(await offer({ recipientProfileUuid: b.profileUuid, publicationUuid: theirService })).role).toBe("customer")
    expect(codeOf(await offer({ recipientProfileUuid: b.profileUuid, publicationUuid: theirTask }))).toBe("invalid_reference")
  })

  it("accepting an offer that references a pending response accepts that response too, and the deal keeps the offer's terms", async () => {
    const task = await m.publication(a, "task")
    const response = bodyOf<RelationView>(await m.invoke("responses.create", b, { payload: { requestUuid: randomUUID(), publicationUuid: task, body: "Сделаю за 10" } }))
    const offer = bodyOf<RelationView>(await m.invoke("offers.create", a, {
      payload: { requestUuid: randomUUID(), recipientProfileUuid: b.profileUuid, publicationUuid: task, body: "Давайте за 8", budget: "8 000 ₽", references: [{ kind: "relation", uuid: response.uuid }] }
    }))
    const accepted = bodyOf<RelationView>(await m.invoke("offers.accept", b, { payload: { requestUuid: randomUUID(), relationUuid: offer.uuid, expectedRevision: 1 } }))
    const deal = bodyOf<RelationView>(await m.invoke("deals.get", b, { urlParams: { relationUuid: accepted.dealUuid! } }))
    expect([deal.status, deal.budget, deal.originRelationUuid, deal.role]).toEqual(["active", "8 000 ₽", offer.uuid, "contractor"])
    const after = bodyOf<RelationView>(await m.invoke("responses.get", a, { urlParams: { relationUuid: response.uuid } }))
    expect([after.status, after.history.at(-1)?.byRole]).toEqual(["accepted", "system"])
  })

  it("job contacts: one open per vacancy and candidate; an invitation may name the employer's own vacancy", async () => {
    const vacancy = await m.publication(a, "vacancy")
    const resume = await m.publication(b, "resume")
    const apply = () => m.invoke("job_responses.create", b, { payload: { requestUuid: randomUUID(), publicationUuid: vacancy, body: "Хочу к вам" } })
    const applied = await apply()
    expect([bodyOf<RelationView>(applied).status, bodyOf<RelationView>(applied).role]).toEqual(["applied", "candidate"])
    expect(codeOf(await apply())).toBe("invalid_state")
    const invited = await m.invoke("job_invitations.create", a, {
      payload: { requestUuid: randomUUID(), publicationUuid: resume, body: "Приглашаем", references: [{ kind: "publication", uuid: vacancy }] }
    })
    expect([bodyOf<RelationView>(invited).status, bodyOf<RelationView>(invited).role]).toEqual(["invited", "employer"])
    expect(codeOf(await m.invoke("job_invitations.create", a, { payload: { requestUuid: randomUUID(), publicationUuid: vacancy, body: "x" } }))).toBe("invalid_reference")
  })
})
