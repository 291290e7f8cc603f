import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningHost } from "../testing.js"
import { startTestService, type TestService } from "../testService.js"

const origin = "http://localhost:8080"
let service: TestService
let host: RunningHost
let db: Pg.Client
let n = 0

beforeAll(async () => {
  service = await startTestService("account", { publicOrigin: origin, trustProxy: true })
  ;({ host, db } = service)
})
afterAll(async () => {
  await service?.close()
})

const call = (method: string, path: string, body?: unknown, cookie?: string, ip = "198.51.100.1") =>
  fetch(`${host.url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      origin,
      "x-forwarded-for": ip,
      ...(cookie === undefined ? {} : { cookie })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const signIn = async () => {
  const email = `account.${++n}.${Date.now()}@example.com`
  const ip = `198.51.100.${n}`
  const started = await call("POST", "/api/v1/auth/email/start", { email }, undefined, ip)
  const { challengeUuid } = (await started.json()) as { challengeUuid: string }
  const { rows } = await db.query<{ text_body: string }>("SELECT text_body FROM development_mailbox WHERE to_address = $1", [email])
  const code = rows[0]!.text_body.match(/\b(\d{6})\b/)![1]
  const verified = await call("POST", "/api/v1/auth/email/verify", { challengeUuid, code }, undefined, ip)
  const cookie = verified.headers.get("set-cookie")!.split(";")[0]!
  const session = (await verified.json()) as { user: { uuid: string; email: string }; profile: { uuid: string } }
  return { email, cookie, session }
}

interface OwnProfileBody {
  uuid: string
  id: string
  name: string
  type: string
  revision: number
  contacts: string
  isPublic: boolean
  current: boolean
}

const data = (overrides: Record<string, unknown> = {}) => ({
  name: "Анна Петрова",
  type: "Самозанятый",
  isPublic: true,
  showContacts: false,
  contacts: "+7 900 000-00-00, anna@example.com",
  categories: ["Дизайн"],
  structuredContacts: [{ kind: "phone", value: "+7 900 000-00-00" }],
  ...overrides
})

const own = async (cookie: string) => {
  const response = await call("GET", "/api/v1/commands/profiles.get_own", undefined, cookie)
  expect(response.status).toBe(200)
  return (await response.json()) as { profile: OwnProfileBody; profiles: Array<OwnProfileBody> }
}

describe("profiles", () => {
  it("every profile operation needs a session", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/me/capabilities"],
      ["GET", "/api/v1/commands/profiles.get_own"],
      ["POST", "/api/v1/commands/profiles.update"],
      ["POST", "/api/v1/commands/profiles.create"],
      ["POST", "/api/v1/commands/profiles.switch"],
      ["POST", "/api/v1/commands/accounts.delete"]
    ] as const) {
      const response = await call(method, path, method === "POST" ? {} : undefined)
      expect(response.status, path).toBe(401)
    }
  })

  it("reports the caller's capabilities: session, account, acting profile and scopes", async () => {
    const { cookie, email, session } = await signIn()
    const response = await call("GET", "/api/v1/me/capabilities", undefined, cookie)
    const body = (await response.json()) as { authentication: string; account: { email: string }; profile: { uuid: string }; scopes: Array<string> }
    expect(body.authentication).toBe("session")
    expect(body.account.email).toBe(email)
    expect(body.profile.uuid).toBe(session.profile.uuid)
    expect(body.scopes).toContain("profiles:write")
  })

  it("updates at the expected revision, replays a retry, refuses a stale revision and a reused requestUuid", async () => {
    const { cookie } = await signIn()
    const before = await own(cookie)
    expect(before.profile.revision).toBe(1)
    const requestUuid = crypto.randomUUID()
    const body = { requestUuid, expectedRevision: 1, data: data() }
    const first = await call("POST", "/api/v1/commands/profiles.update", body, cookie)
    expect(first.status).toBe(200)
    const saved = ((await first.json()) as { profile: OwnProfileBody }).profile
    expect(saved).toMatchObject({ name: "Анна Петрова", type: "Самозанятый", revision: 2, isPublic: true })
    const retry = await call("POST", "/api/v1/commands/profiles.update", body, cookie)
    expect(((await retry.json()) as { profile: OwnProfileBody }).profile).toEqual(saved)
    const stale = await call("POST", "/api/v1/commands/profiles.update", { ...body, requestUuid: crypto.randomUUID() }, cookie)
    expect(stale.status).toBe(409)
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe("revision_conflict")
    const reused = await call("POST", "/api/v1/commands/profiles.update", { ...body, data: data({ name: "Other" }) }, cookie)
    expect(reused.status).toBe(409)
    expect(((await reused.json()) as { error: { code: string } }).error.code).toBe("request_conflict")
    expect((await own(cookie)).profile.revision).toBe(2)
    const events = await db.query("SELECT type FROM outbox_events WHERE aggregate_uuid = $1", [saved.uuid])
    expect(events.rows).toEqual([{ type: "profile.updated" }])
  })

  it("enforces the field bounds: name 1 to 160 characters, 20 categories, https avatars", async () => {
    const { cookie } = await signIn()
    const update = (revision: number, d: Record<string, unknown>) =>
      call("POST", "/api/v1/commands/profiles.update", { requestUuid: crypto.randomUUID(), expectedRevision: revision, data: d }, cookie)
    expect((await update(1, data({ name: "x".repeat(160) }))).status).toBe(200)
    for (const bad of [
      data({ name: "x".repeat(161) }),
      data({ name: "   " }),
      data({ type: "Корпорация" }),
      data({ categories: Array.from({ length: 21 }, (_, i) => `c${i}`) }),
      data({ avatarUrl: "http://example.com/a.png" }),
      data({ about: "x".repeat(5001) }),
      data({ unknownField: 1 })
    ]) {
      const response = await update(2, bad)
      expect(response.status, JSON.stringify(bad).slice(0, 80)).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_request")
    }
    expect((await own(cookie)).profile).toMatchObject({ revision: 2, name: "x".repeat(160) })
  })

  it("shows the public view as an allowlist: contacts only when showContacts, private profiles not at all", async () => {
    const { cookie, session } = await signIn()
    const uuid = session.profile.uuid
    expect((await call("GET", `/api/v1/profiles/${uuid}`)).status).toBe(404)
    await call("POST", "/api/v1/commands/profiles.update", { requestUuid: crypto.randomUUID(), expectedRevision: 1, data: data() }, cookie)
    const hidden = (await (await call("GET", `/api/v1/profiles/${uuid}`)).json()) as Record<string, unknown>
    expect(hidden["contacts"]).toBe("")
    expect(hidden["structuredContacts"]).toEqual([])
    expect(Object.keys(hidden).sort()).toEqual(["about", "categories", "contacts", "id", "name", "networks", "showContacts", "skills", "structuredContacts", "type", "uuid"])
    await call("POST", "/api/v1/commands/profiles.update", { requestUuid: crypto.randomUUID(), expectedRevision: 2, data: data({ showContacts: true }) }, cookie)
    const shown = (await (await call("GET", `/api/v1/profiles/${uuid}`)).json()) as Record<string, unknown>
    expect(shown["contacts"]).toBe("+7 900 000-00-00, anna@example.com")
    expect(JSON.stringify(shown)).not.toContain(session.user.email)
  })

  it("creates another profile, switches to it, and never reaches another account's profile", async () => {
    const { cookie } = await signIn()
    const created = await call("POST", "/api/v1/commands/profiles.create", { requestUuid: crypto.randomUUID(), data: data({ name: "ООО Ромашка", type: "Компания" }) }, cookie)
    expect(created.status).toBe(200)
    const company = ((await created.json()) as { profile: OwnProfileBody }).profile
    expect(company.current).toBe(false)
    const switched = await call("POST", "/api/v1/commands/profiles.switch", { profileUuid: company.uuid }, cookie)
    expect(switched.status).toBe(200)
    expect(((await switched.json()) as { profile: { name: string; type: string } }).profile).toMatchObject({ name: "ООО Ромашка", type: "Компания" })
    const after = await own(cookie)
    expect(after.profile.uuid).toBe(company.uuid)
    expect(after.profiles).toHaveLength(2)

    const stranger = await signIn()
    const foreign = await call("POST", "/api/v1/commands/profiles.switch", { profileUuid: company.uuid }, stranger.cookie)
    expect(foreign.status).toBe(404)
    const foreignUpdate = await call("POST", "/api/v1/commands/profiles.update", { requestUuid: crypto.randomUUID(), profileUuid: company.uuid, expectedRevision: 1, data: data() }, stranger.cookie)
    expect(foreignUpdate.status).toBe(404)
  })

  it("deletes the account only with the matching confirmEmail, and its session stops working", async () => {
    const { cookie, email } = await signIn()
    const wrong = await call("POST", "/api/v1/commands/accounts.delete", { confirmEmail: "someone.else@example.com" }, cookie)
    expect(wrong.status).toBe(403)
    const deleted = await call("POST", "/api/v1/commands/accounts.delete", { confirmEmail: email }, cookie)
    expect(deleted.status).toBe(204)
    expect(deleted.headers.get("set-cookie")).toMatch(/Max-Age=0/i)
    expect((await call("GET", "/api/v1/auth/session", undefined, cookie)).status).toBe(401)
  })
})
