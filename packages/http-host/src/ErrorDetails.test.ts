import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { type Caller, type JsonAnswer, startTestService, type TestService } from "./testService.js"

// The members an error carries beside code and message (docs/decisions.md, "Errors"), over real
// HTTP and Postgres: what a client can act on, and nothing about another account's records.
let service: TestService
let owner: SignedIn
let stranger: SignedIn

beforeAll(async () => {
  service = await startTestService("error_details", { trustProxy: true })
  owner = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
  stranger = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
})
afterAll(async () => {
  await service?.close()
})

type ErrorBody = { readonly error: Record<string, unknown> }
const call = (method: string, path: string, who: Caller, body?: unknown) => service.call<ErrorBody & Record<string, any>>(method, path, who, body)
const command = (who: Caller, id: string, body: Record<string, unknown>) => call("POST", `/api/v1/commands/${id}`, who, { requestUuid: randomUUID(), ...body })

const taskData = (title = "Лендинг для кофейни") => ({
  title,
  category: "Сайты",
  description: "Нужен лендинг для кофейни с меню, картой и формой заказа",
  budget: "до 30 000 ₽",
  deadline: "две недели",
  files: []
})

/** The members of an error answer besides its code and message. */
const membersOf = (answer: JsonAnswer<ErrorBody>) => {
  const { code: _, message, ...members } = answer.body.error
  expect(typeof message).toBe("string")
  return members
}

const makeKey = async (scopes: ReadonlyArray<string>) => {
  const created = await call("POST", "/api/v1/keys", { cookie: owner.cookie }, { requestUuid: randomUUID(), name: "details", scopes, httpEnabled: true, mcpEnabled: true })
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  return { bearer: created.body["secret"] as string }
}

describe("errors that say what", () => {
  it("a transition refused in the wrong state names the record, its state and the states that allow it", async () => {
    const saved = await command({ cookie: owner.cookie }, "tasks.save", { submit: true, data: taskData() })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const again = await command({ cookie: owner.cookie }, "tasks.submit", { publicationUuid: saved.body["uuid"], expectedRevision: saved.body["revision"] })
    expect([again.status, again.body.error["code"]]).toEqual([409, "invalid_state"])
    expect(membersOf(again)).toEqual({ resource: "task", uuid: saved.body["uuid"], state: "pending", allowed: ["draft", "returned"] })
  })

  it("another account's record is a bare 404: no state, no revision, nothing that tells it exists", async () => {
    const saved = await command({ cookie: owner.cookie }, "tasks.save", { data: taskData() })
    expect(saved.status).toBe(200)
    const theirs = await command({ cookie: stranger.cookie }, "tasks.submit", { publicationUuid: saved.body["uuid"], expectedRevision: 99 })
    const nobodys = await command({ cookie: stranger.cookie }, "tasks.submit", { publicationUuid: randomUUID(), expectedRevision: 99 })
    expect([theirs.status, theirs.body.error["code"]]).toEqual([404, "not_found"])
    expect(membersOf(theirs)).toEqual({})
    expect(theirs.body).toEqual(nobodys.body)
  })

  it("a stale revision names the record's kind and its current revision", async () => {
    const saved = await command({ cookie: owner.cookie }, "tasks.save", { data: taskData() })
    const stale = await command({ cookie: owner.cookie }, "tasks.save", {
      publicationUuid: saved.body["uuid"],
      expectedRevision: Number(saved.body["revision"]) + 5,
      data: taskData("Другой заголовок")
    })
    expect([stale.status, stale.body.error["code"]]).toEqual([409, "revision_conflict"])
    expect(membersOf(stale)).toEqual({ resource: "task", uuid: saved.body["uuid"], revision: saved.body["revision"] })
  })

  it("input that breaks its schema names the first failing field and the rule it breaks, under the operation's own code", async () => {
    const long = await command({ cookie: owner.cookie }, "tasks.save", { data: taskData("x".repeat(161)) })
    expect([long.status, long.body.error["code"]]).toEqual([400, "invalid_task"])
    expect(membersOf(long)).toEqual({ field: "data.title", rule: "maxLength 160" })
    const page = await call("GET", "/api/v1/commands/tasks.list?limit=0", { cookie: owner.cookie })
    expect([page.status, page.body.error["code"]]).toEqual([400, "invalid_request"])
    expect(membersOf(page)).toEqual({ field: "limit", rule: "type integer, minimum 1, maximum 100" })
    const unknown = await command({ cookie: owner.cookie }, "deals.complete", { relationUuid: randomUUID(), expectedRevision: 1, colour: "red" })
    expect([unknown.status, unknown.body.error["code"]]).toEqual([400, "invalid_request"])
    expect(membersOf(unknown)).toEqual({ field: "colour", rule: "not allowed" })
  })

  it("a key without the scope is refused naming the operation and the scopes that allow it", async () => {
    const key = await makeKey([])
    const refused = await call("GET", "/api/v1/commands/tasks.list", key)
    expect([refused.status, refused.body.error["code"]]).toEqual([403, "insufficient_scope"])
    expect(membersOf(refused)).toEqual({ operation: "tasks.list", scopes: ["tasks:read"] })
  })

  it("a flag that needs the owner's approval names the operation it widens into", async () => {
    const key = await makeKey(["tasks:write", "tasks:submit"])
    const refused = await command(key, "tasks.save", { submit: true, data: taskData() })
    expect([refused.status, refused.body.error["code"]]).toEqual([403, "approval_required"])
    expect(membersOf(refused)).toEqual({ operation: "tasks.submit" })
  })

  it("a reached limit names the limit, its window and the wait Retry-After gives", async () => {
    const start = (email: string) =>
      fetch(`${service.host.url}/api/v1/auth/email/start`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: service.origin, "x-forwarded-for": "203.0.113.77" },
        body: JSON.stringify({ email })
      })
    const email = `limit.${randomUUID()}@example.com`
    expect((await start(email)).status).toBe(200)
    const refused = await start(email)
    expect(refused.status).toBe(429)
    const body = (await refused.json()) as ErrorBody
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(body.error["code"]).toBe("rate_limited")
    expect(membersOf({ status: 429, headers: refused.headers, body })).toEqual({ limit: 1, windowSeconds: 60, retryAfterSeconds: retryAfter })
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
  })
})
