import { grantableScopes, allScopes } from "@birzha/domain"
import { createHmac, randomUUID } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../../testing/signIn.js"
import { type RunningHost } from "../testing.js"
import { type Caller, startTestService, type TestService } from "../testService.js"

const origin = "http://localhost:8080"
const serverSecret = "keys-test-secret-0123456789-abcdefghijklmnop"
let service: TestService
let host: RunningHost
let db: Pg.Client

beforeAll(async () => {
  service = await startTestService("keys", { env: { BIRZHA_SECRET: serverSecret }, publicOrigin: origin, trustProxy: true })
  ;({ host, db } = service)
})
afterAll(async () => {
  await service?.close()
})

/** Status and body only: answers are compared whole (a retried update equals the first), headers aside. */
const call = async <T = any>(method: string, path: string, who: Caller = {}, body?: unknown) => {
  const answer = await service.call<T>(method, path, who, body)
  return { status: answer.status, body: answer.body }
}

const user = () => signIn({ url: host.url, origin, db })

const create = (owner: SignedIn, fields: Record<string, unknown> = {}) =>
  call("POST", "/api/v1/keys", owner, {
    requestUuid: randomUUID(),
    name: "CI",
    scopes: ["profiles:read"],
    httpEnabled: true,
    mcpEnabled: false,
    ...fields
  })

const created = async (owner: SignedIn, fields: Record<string, unknown> = {}) => {
  const answer = await create(owner, fields)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body as { key: { uuid: string; revision: number; [k: string]: unknown }; secret: string }
}

const getOwn = (bearer: string) => call("GET", "/api/v1/commands/profiles.get_own", { bearer })

const signedInAgo = (owner: SignedIn, interval: string) =>
  db.query(
    `UPDATE sessions SET created_at = now() - $2::interval
     WHERE account_uuid = $1 AND revoked_at IS NULL`,
    [owner.accountUuid, interval]
  )

describe("the personal key", () => {
  it("exists from the first sign-in: profiles:read, HTTP only, 90 days, and no secret until its owner shows it", async () => {
    const owner = await user()
    const { rows } = await db.query("SELECT * FROM api_keys WHERE account_uuid = $1", [owner.accountUuid])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      kind: "personal",
      profile_uuid: owner.profileUuid,
      scopes: ["profiles:read"],
      http_enabled: true,
      mcp_enabled: false,
      lifetime_days: 90,
      secret_hash: null,
      revoked_at: null
    })
    const list = await call("GET", "/api/v1/keys", owner)
    expect(list.status).toBe(200)
    expect(list.body.items).toHaveLength(1)
    expect(list.body.items[0]).toMatchObject({ kind: "personal", status: "not_issued", scopes: ["profiles:read"], httpEnabled: true, mcpEnabled: false })
    expect(list.body.items[0].secretHint).toBeUndefined()

    const shown = await call("POST", `/api/v1/keys/${list.body.items[0].uuid}/reissue`, owner)
    expect(shown.status).toBe(200)
    expect(shown.body.key.status).toBe("active")
    const [lifetime] = (await db.query(
      "SELECT expires_at - issued_at = interval '90 days' AS ninety FROM api_keys WHERE uuid = $1",
      [shown.body.key.uuid]
    )).rows
    expect(lifetime.ninety).toBe(true)

    // Default permission: read of the own profile, nothing else.
    const own = await getOwn(shown.body.secret)
    expect(own.status).toBe(200)
    expect(own.body.profile.uuid).toBe(owner.profileUuid)
    const tasks = await call("GET", "/api/v1/commands/tasks.list", { bearer: shown.body.secret })
    expect(tasks.status).toBe(403)
    expect(tasks.body.error.code).toBe("insufficient_scope")
    const write = await call("POST", "/api/v1/commands/profiles.update", { bearer: shown.body.secret }, {})
    expect(write.status).toBe(403)
    expect(write.body.error.code).toBe("insufficient_scope")
  })

  it("is replaced by a fresh one (without a secret) once revoked, and the revoked one stays listed", async () => {
    const owner = await user()
    const [personal] = (await call("GET", "/api/v1/keys", owner)).body.items
    const { secret } = (await call("POST", `/api/v1/keys/${personal.uuid}/reissue`, owner)).body
    expect((await call("POST", `/api/v1/keys/${personal.uuid}/revoke`, owner)).status).toBe(200)
    expect((await getOwn(secret)).status).toBe(401)
    const items = (await call("GET", "/api/v1/keys", owner)).body.items as Array<{ uuid: string; kind: string; status: string }>
    expect(items.map((k) => [k.kind, k.status]).sort()).toEqual([["personal", "not_issued"], ["personal", "revoked"]])
    expect(items.find((k) => k.status === "not_issued")!.uuid).not.toBe(personal.uuid)
  })
})

describe("key secrets", () => {
  it("have the birzha_pk_ prefix and checksum, and only their keyed hash is stored", async () => {
    const owner = await user()
    const { key, secret } = await created(owner)
    expect(secret).toMatch(/^birzha_pk_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/)
    expect(key.secretHint).toBe(`birzha_pk_…${secret.slice(-4)}`)
    const { rows } = await db.query("SELECT * FROM api_keys WHERE uuid = $1", [key.uuid])
    expect(rows[0].secret_hash).toBe(createHmac("sha256", serverSecret).update(`api_key\n${secret}`).digest("base64url"))
    // The secret itself is nowhere in the database, not even in the stored idempotent answer.
    const dump = await db.query(
      `SELECT (SELECT count(*) FROM api_keys k WHERE row_to_json(k)::text LIKE '%' || $1 || '%')
            + (SELECT count(*) FROM idempotency_keys i WHERE row_to_json(i)::text LIKE '%' || $1 || '%') AS n`,
      [secret.slice(10, 42)]
    )
    expect(Number(dump.rows[0].n)).toBe(0)
    // ...and never again in an answer.
    const list = await call("GET", "/api/v1/keys", owner)
    expect(JSON.stringify(list.body)).not.toContain(secret.slice(10, 42))
  })

  it("are shown only to a session signed in less than 10 minutes ago; otherwise 403 reauthentication_required and nothing is made", async () => {
    const owner = await user()
    const { key } = await created(owner)
    await signedInAgo(owner, "10 minutes 1 second")
    const refused = await create(owner)
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe("reauthentication_required")
    const reissue = await call("POST", `/api/v1/keys/${key.uuid}/reissue`, owner)
    expect(reissue.status).toBe(403)
    expect(reissue.body.error.code).toBe("reauthentication_required")
    const { rows } = await db.query("SELECT count(*)::int AS n, max(revision) AS revision FROM api_keys WHERE account_uuid = $1 AND kind = 'application'", [owner.accountUuid])
    expect(rows[0]).toEqual({ n: 1, revision: 1 })
    // Listing, changing and revoking do not need a recent sign-in: they show no secret.
    expect((await call("GET", "/api/v1/keys", owner)).status).toBe(200)
    await signedInAgo(owner, "9 minutes 55 seconds")
    expect((await create(owner)).status).toBe(200)
    expect((await call("POST", `/api/v1/keys/${key.uuid}/reissue`, owner)).status).toBe(200)
  })

  it("reissue invalidates the previous secret at once and renews the lifetime", async () => {
    const owner = await user()
    const first = await created(owner, { lifetimeDays: 7 })
    expect((await getOwn(first.secret)).status).toBe(200)
    await db.query("UPDATE api_keys SET expires_at = now() + interval '1 hour' WHERE uuid = $1", [first.key.uuid])
    const second = (await call("POST", `/api/v1/keys/${first.key.uuid}/reissue`, owner)).body
    expect(second.secret).not.toBe(first.secret)
    expect(second.key.uuid).toBe(first.key.uuid)
    expect(second.key.revision).toBe(first.key.revision + 1)
    const old = await getOwn(first.secret)
    expect(old.status).toBe(401)
    expect(old.body.error.code).toBe("unauthenticated")
    expect((await getOwn(second.secret)).status).toBe(200)
    const [row] = (await db.query("SELECT expires_at - issued_at = interval '7 days' AS renewed FROM api_keys WHERE uuid = $1", [first.key.uuid])).rows
    expect(row.renewed).toBe(true)
  })

  it("a retried create (same requestUuid) returns the same key with a fresh secret; another body is a conflict", async () => {
    const owner = await user()
    const requestUuid = randomUUID()
    const a = await created(owner, { requestUuid })
    const b = await created(owner, { requestUuid })
    expect(b.key.uuid).toBe(a.key.uuid)
    expect(b.secret).not.toBe(a.secret)
    expect((await getOwn(a.secret)).status).toBe(401)
    expect((await getOwn(b.secret)).status).toBe(200)
    const other = await create(owner, { requestUuid, name: "Другое" })
    expect(other.status).toBe(409)
    expect(other.body.error.code).toBe("request_conflict")
  })
})

describe("a key stops working", () => {
  it("at once when revoked (401); revoking again changes nothing; a revoked key cannot be reissued or changed", async () => {
    const owner = await user()
    const { key, secret } = await created(owner)
    const revoked = await call("POST", `/api/v1/keys/${key.uuid}/revoke`, owner)
    expect(revoked.status).toBe(200)
    expect(revoked.body.key.status).toBe("revoked")
    const after = await getOwn(secret)
    expect(after.status).toBe(401)
    expect(after.body.error.code).toBe("unauthenticated")
    const again = await call("POST", `/api/v1/keys/${key.uuid}/revoke`, owner)
    expect(again.body.key).toEqual(revoked.body.key)
    expect((await call("POST", `/api/v1/keys/${key.uuid}/reissue`, owner)).body.error.code).toBe("invalid_state")
    const update = await call("PUT", `/api/v1/keys/${key.uuid}`, owner, {
      requestUuid: randomUUID(), expectedRevision: revoked.body.key.revision, name: "x", scopes: [], httpEnabled: true, mcpEnabled: false
    })
    expect(update.status).toBe(409)
    expect(update.body.error.code).toBe("invalid_state")
  })

  it("when it expires (401), and works until then", async () => {
    const owner = await user()
    const { key, secret } = await created(owner)
    await db.query("UPDATE api_keys SET expires_at = now() + interval '2 seconds' WHERE uuid = $1", [key.uuid])
    expect((await getOwn(secret)).status).toBe(200)
    await db.query("UPDATE api_keys SET expires_at = now() - interval '1 millisecond' WHERE uuid = $1", [key.uuid])
    const expired = await getOwn(secret)
    expect(expired.status).toBe(401)
    expect(expired.body.error.code).toBe("unauthenticated")
    expect((await call("GET", "/api/v1/keys", owner)).body.items.find((k: { uuid: string }) => k.uuid === key.uuid).status).toBe("expired")
  })

  it("when its account is deleted (its keys are revoked)", async () => {
    const owner = await user()
    const { key, secret } = await created(owner)
    expect((await call("POST", "/api/v1/commands/accounts.delete", owner, { confirmEmail: owner.email })).status).toBe(204)
    expect((await getOwn(secret)).status).toBe(401)
    const { rows } = await db.query("SELECT revoked_at FROM api_keys WHERE uuid = $1", [key.uuid])
    expect(rows[0].revoked_at).not.toBeNull()
  })

  it("answers 401 for a mistyped, unknown or non-bearer credential", async () => {
    const owner = await user()
    const { secret } = await created(owner)
    const mistyped = secret.slice(0, 15) + (secret[15] === "A" ? "B" : "A") + secret.slice(16)
    expect((await getOwn(mistyped)).status).toBe(401)
    expect((await getOwn("birzha_pk_" + "0".repeat(32) + "_000000")).status).toBe(401)
    const basic = await fetch(`${host.url}/api/v1/commands/profiles.get_own`, { headers: { authorization: `Basic ${secret}` } })
    expect(basic.status).toBe(401)
  })
})

describe("choosing what a key may do", () => {
  it("HTTP access off answers 403 key_http_disabled; on again works", async () => {
    const owner = await user()
    const { key, secret } = await created(owner)
    const off = await call("PUT", `/api/v1/keys/${key.uuid}`, owner, {
      requestUuid: randomUUID(), expectedRevision: key.revision, name: "CI", scopes: ["profiles:read"], httpEnabled: false, mcpEnabled: true
    })
    expect(off.status).toBe(200)
    expect(off.body.key).toMatchObject({ httpEnabled: false, mcpEnabled: true, revision: key.revision + 1 })
    const refused = await getOwn(secret)
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe("key_http_disabled")
    const on = await call("PUT", `/api/v1/keys/${key.uuid}`, owner, {
      requestUuid: randomUUID(), expectedRevision: key.revision + 1, name: "CI", scopes: ["profiles:read"], httpEnabled: true, mcpEnabled: false
    })
    expect(on.status).toBe(200)
    expect((await getOwn(secret)).status).toBe(200)
  })

  it("scope changes apply to the next request; stale revisions conflict; a retried update returns the same answer", async () => {
    const owner = await user()
    const { key, secret } = await created(owner)
    expect((await call("GET", "/api/v1/commands/tasks.list", { bearer: secret })).status).toBe(403)
    const body = { requestUuid: randomUUID(), expectedRevision: key.revision, name: "CI", scopes: ["tasks:read", "profiles:read", "tasks:read"], httpEnabled: true, mcpEnabled: false }
    const changed = await call("PUT", `/api/v1/keys/${key.uuid}`, owner, body)
    expect(changed.status).toBe(200)
    expect(changed.body.key.scopes).toEqual(["profiles:read", "tasks:read"])
    expect((await call("GET", "/api/v1/commands/tasks.list", { bearer: secret })).status).toBe(200)
    const retried = await call("PUT", `/api/v1/keys/${key.uuid}`, owner, body)
    expect(retried).toEqual(changed)
    const stale = await call("PUT", `/api/v1/keys/${key.uuid}`, owner, { ...body, requestUuid: randomUUID() })
    expect(stale.status).toBe(409)
    expect(stale.body.error.code).toBe("revision_conflict")
  })

  it("only scopes that exist and that a key may hold: never moderation or key management", async () => {
    const owner = await user()
    for (const scopes of [["nothing:read"], ["moderation:read"], ["moderation:write"], ["profiles:read", "keys:write"]]) {
      const answer = await create(owner, { scopes })
      expect(answer.status, scopes.join()).toBe(400)
      expect(answer.body.error.code, scopes.join()).toBe("invalid_scope")
    }
    expect((await create(owner, { scopes: ["Profiles:Read"] })).body.error.code).toBe("invalid_request")
    // Every grantable scope at once is fine, and is what a key may hold at most.
    const all = await created(owner, { scopes: grantableScopes })
    expect(all.key.scopes).toEqual([...grantableScopes].sort())
    expect(grantableScopes.some((s) => s.startsWith("moderation:"))).toBe(false)
    const { rows } = await db.query("SELECT count(*)::int AS n FROM api_keys WHERE account_uuid = $1 AND kind = 'application'", [owner.accountUuid])
    expect(rows[0].n).toBe(1)
  })

  it("a key with every scope still cannot manage keys, switch profiles or moderate: 403 session_required", async () => {
    const owner = await user()
    const { key, secret } = await created(owner, { scopes: grantableScopes })
    for (const [method, path, body] of [
      ["GET", "/api/v1/keys", undefined],
      ["POST", "/api/v1/keys", { requestUuid: randomUUID(), name: "x", scopes: [], httpEnabled: true, mcpEnabled: false }],
      ["POST", `/api/v1/keys/${key.uuid}/reissue`, undefined],
      ["POST", `/api/v1/keys/${key.uuid}/revoke`, undefined],
      ["POST", "/api/v1/commands/profiles.switch", { profileUuid: owner.profileUuid }],
      ["GET", "/api/v1/moderation/queue", undefined]
    ] as const) {
      const answer = await call(method, path, { bearer: secret }, body)
      expect(answer.status, path).toBe(403)
      expect(answer.body.error.code, path).toBe("session_required")
    }
    expect((await getOwn(secret)).status).toBe(200)
    // auth.session describes any caller (spec: 401 and 503 only): for a key, its account, profile and expiry.
    const described = await call("GET", "/api/v1/auth/session", { bearer: secret })
    expect(described.status).toBe(200)
    expect(described.body).toEqual({
      user: { uuid: owner.accountUuid, email: owner.email },
      profile: { uuid: owner.profileUuid, name: expect.any(String), type: "Физлицо" },
      expiresAt: key.expiresAt
    })
  })

  it("a key needs the kind's own write scope to create a publication through publications.create", async () => {
    const owner = await user()
    const { secret } = await created(owner, { scopes: ["services:write"] })
    const task = {
      kind: "task",
      requestUuid: randomUUID(),
      data: { title: "Лендинг", category: "Сайты", description: "", budget: "", deadline: "", files: [] }
    }
    const refused = await call("POST", "/api/v1/publications", { bearer: secret }, task)
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe("insufficient_scope")
    const allowed = await created(owner, { scopes: ["tasks:write"] })
    expect((await call("POST", "/api/v1/publications", { bearer: allowed.secret }, task)).status).toBe(200)
  })

  it("name 1 to 100 characters after trimming, lifetime 1 to 365 days (default 90)", async () => {
    const owner = await user()
    for (const name of ["", "   ", "x".repeat(101)]) expect((await create(owner, { name })).status, JSON.stringify(name)).toBe(400)
    expect((await created(owner, { name: "x".repeat(100) })).key.name).toBe("x".repeat(100))
    expect((await created(owner, { name: "  trimmed  " })).key.name).toBe("trimmed")
    for (const lifetimeDays of [0, 366, 1.5]) expect((await create(owner, { lifetimeDays })).status, String(lifetimeDays)).toBe(400)
    expect((await created(owner, { lifetimeDays: 1 })).key.lifetimeDays).toBe(1)
    expect((await created(owner, { lifetimeDays: 365 })).key.lifetimeDays).toBe(365)
    const byDefault = await created(owner)
    expect(byDefault.key.lifetimeDays).toBe(90)
    const [row] = (await db.query("SELECT expires_at - issued_at = interval '90 days' AS ninety FROM api_keys WHERE uuid = $1", [byDefault.key.uuid])).rows
    expect(row.ninety).toBe(true)
    expect((await create(owner, { extra: true })).status).toBe(400)
  })

  it("at most 50 live keys per account, the personal key included; a revoked one frees its place", async () => {
    const owner = await user()
    const made: Array<string> = []
    for (let i = 0; i < 49; i++) made.push((await created(owner, { name: `k${i}` })).key.uuid)
    const refused = await create(owner)
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe("forbidden")
    await call("POST", `/api/v1/keys/${made[0]}/revoke`, owner)
    expect((await create(owner)).status).toBe(200)
  })

  it("company keys act as the company profile; another account's profile is not found", async () => {
    const owner = await user()
    const other = await user()
    const company = await call("POST", "/api/v1/commands/profiles.create", owner, {
      requestUuid: randomUUID(),
      data: { name: "ООО Ромашка", type: "Компания", isPublic: false, showContacts: false, about: "", categories: [], contacts: "", networks: [], skills: [], structuredContacts: [] }
    })
    expect(company.status).toBe(200)
    const companyUuid = company.body.profile.uuid
    const { key, secret } = await created(owner, { profileUuid: companyUuid })
    expect(key.kind).toBe("company")
    expect((key.profile as { uuid: string }).uuid).toBe(companyUuid)
    expect((await getOwn(secret)).body.profile.uuid).toBe(companyUuid)
    const app = await created(owner)
    expect(app.key.kind).toBe("application")
    const foreign = await create(owner, { profileUuid: other.profileUuid })
    expect(foreign.status).toBe(404)
    // Keys of one account are invisible to another.
    expect((await call("POST", `/api/v1/keys/${key.uuid}/revoke`, other)).status).toBe(404)
    expect((await call("GET", "/api/v1/keys", other)).body.items.some((k: { uuid: string }) => k.uuid === key.uuid)).toBe(false)
  })
})

describe("capabilities", () => {
  it("report the acting profile, how the caller is authenticated, and its effective scopes", async () => {
    const owner = await user()
    const session = await call("GET", "/api/v1/me/capabilities", owner)
    expect(session.status).toBe(200)
    expect(session.body).toMatchObject({ authentication: "session", account: { uuid: owner.accountUuid }, profile: { uuid: owner.profileUuid } })
    expect(session.body.key).toBeUndefined()
    // A session holds every scope but moderation's and the admin area's, which need the moderator
    // and the operator role.
    const roleScopes = (scope: string) => scope.startsWith("moderation:") || scope.startsWith("admin:")
    expect(session.body.scopes).toEqual(allScopes.filter((scope) => !roleScopes(scope)))
    await db.query("INSERT INTO moderators (email, source) VALUES ($1, 'cli')", [owner.email])
    expect((await call("GET", "/api/v1/me/capabilities", owner)).body.scopes).toEqual(allScopes.filter((scope) => !scope.startsWith("admin:")))
    await db.query("INSERT INTO operators (email, source) VALUES ($1, 'cli')", [owner.email])
    expect((await call("GET", "/api/v1/me/capabilities", owner)).body.scopes).toEqual(allScopes)
    await db.query("DELETE FROM moderators WHERE email = $1", [owner.email])
    await db.query("DELETE FROM operators WHERE email = $1", [owner.email])
    expect((await call("GET", "/api/v1/me/capabilities", owner)).body.scopes).toEqual(allScopes.filter((scope) => !roleScopes(scope)))
    const { key, secret } = await created(owner, { name: "Бот", scopes: ["tasks:read", "profiles:read"], mcpEnabled: true })
    const viaKey = await call("GET", "/api/v1/me/capabilities", { bearer: secret })
    expect(viaKey.status).toBe(200)
    expect(viaKey.body).toMatchObject({
      authentication: "key",
      account: { uuid: owner.accountUuid, email: owner.email },
      profile: { uuid: owner.profileUuid },
      key: { uuid: key.uuid, name: "Бот", kind: "application", httpEnabled: true, mcpEnabled: true },
      scopes: ["profiles:read", "tasks:read"]
    })
    expect(viaKey.body.key.expiresAt).toBe(key.expiresAt)
  })

  it("with both credentials a usable key is used (the narrower rights); a refused one falls back to the session", async () => {
    const owner = await user()
    const { secret } = await created(owner)
    const both = await call("GET", "/api/v1/me/capabilities", { cookie: owner.cookie, bearer: secret })
    expect(both.body.authentication).toBe("key")
    const forged = await call("GET", "/api/v1/me/capabilities", { cookie: "__Host-birzha_session=forged", bearer: secret })
    expect(forged.body.authentication).toBe("key")
    // The key lacks tasks:read: the session answers instead; without the session, the key's own 403.
    expect((await call("GET", "/api/v1/commands/tasks.list", { cookie: owner.cookie, bearer: secret })).status).toBe(200)
    const alone = await call("GET", "/api/v1/commands/tasks.list", { cookie: "__Host-birzha_session=forged", bearer: secret })
    expect(alone.status).toBe(403)
    expect(alone.body.error.code).toBe("insufficient_scope")
    const unknownKey = await call("GET", "/api/v1/me/capabilities", { cookie: owner.cookie, bearer: "birzha_pk_" + "0".repeat(32) + "_000000" })
    expect(unknownKey.body.authentication).toBe("session")
  })
})

describe("the scope list", () => {
  it("is published at GET /api/v1/scopes and as x-scopes in the OpenAPI document, the same names", async () => {
    const scopes = await call("GET", "/api/v1/scopes")
    expect(scopes.status).toBe(200)
    const names = scopes.body.items.map((s: { name: string }) => s.name)
    expect(names).toEqual(allScopes)
    expect(scopes.body.items.find((s: { name: string }) => s.name === "moderation:write")).toMatchObject({
      grantable: false,
      operations: ["moderation.decide", "moderation.complaints.decide", "moderation.reviews.decide"]
    })
    expect(scopes.body.items.find((s: { name: string }) => s.name === "profiles:read")).toMatchObject({ grantable: true })
    const document = (await call("GET", "/api/v1/openapi.json")).body
    expect(document["x-scopes"]).toEqual(allScopes)
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(["bearer", "session"])
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
  })
})
