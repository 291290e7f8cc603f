import { catalog } from "@birzha/domain"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../../testing/postgres.js"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { type RunningHost, startService, untilReady } from "./testing.js"

/**
 * The admin area over HTTP (packages/domain/src/admin): only an operator (BIRZHA_OPERATORS or a
 * grant) gets past any of its operations; every other account gets 404, as for a path the service
 * does not have, and a key is refused (session only). What an operator reads of another account
 * holds no secret, and each change is in the audit trail.
 */

const origin = "http://localhost:8080"
const secret = "admin-area-test-secret-0123456789-abcdef"
let database: TestDatabase
let db: Pg.Client
let host: RunningHost
let boss: SignedIn
let stranger: SignedIn

const call = async (method: string, path: string, who: { readonly cookie?: string; readonly bearer?: string }, body?: object) => {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: {
      origin,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(who.cookie === undefined ? {} : { cookie: who.cookie }),
      ...(who.bearer === undefined ? {} : { authorization: `Bearer ${who.bearer}` })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, text, json: text === "" ? undefined : JSON.parse(text) }
}

/** A valid request of each admin operation: a refusal then comes from who calls, not from the input. */
const validCalls = (target: string): Record<string, { readonly path: string; readonly body?: object }> => ({
  "admin.health": { path: "/api/v1/admin/health" },
  "admin.accounts.find": { path: "/api/v1/admin/accounts?email=example" },
  "admin.accounts.get": { path: `/api/v1/admin/accounts/${target}` },
  "admin.accounts.delete": { path: "/api/v1/admin/accounts/delete", body: { accountUuid: target, confirmEmail: "x@example.com" } },
  "admin.roles.list": { path: "/api/v1/admin/roles" },
  "admin.roles.grant": { path: "/api/v1/admin/roles/grant", body: { role: "operator", email: "sneaky@example.com" } },
  "admin.roles.revoke": { path: "/api/v1/admin/roles/revoke", body: { role: "operator", email: "boss@example.com" } },
  "admin.audit.list": { path: "/api/v1/admin/audit" },
  "admin.mail.list": { path: "/api/v1/admin/mail" }
})

beforeAll(async () => {
  database = await createTestDatabase("admin_area", { migrated: true })
  db = new Pg.Client({ connectionString: database.url })
  await db.connect()
  host = await startService({
    env: { DATABASE_URL: database.url, BIRZHA_SECRET: secret, BIRZHA_OPERATORS: " Boss@Example.com " },
    publicOrigin: origin,
    trustProxy: true
  })
  await untilReady(host)
  boss = await signIn({ url: host.url, origin, db, email: "boss@example.com" })
  stranger = await signIn({ url: host.url, origin, db })
})
afterAll(async () => {
  await host?.close()
  await db?.end()
  await database?.drop()
})

describe("the admin area", () => {
  it("answers 404 to every account that is not an operator, 401 to nobody, and refuses keys, changing nothing", async () => {
    const admin = catalog.filter((entry) => entry.group === "admin")
    expect(admin.map((entry) => entry.id).sort()).toEqual(Object.keys(validCalls(boss.accountUuid)).sort())
    for (const entry of admin) {
      expect(entry.sessionOnly, entry.id).toBe(true)
      expect(entry.scopes.every((scope) => scope.startsWith("admin:")), entry.id).toBe(true)
    }
    const key = await call("POST", "/api/v1/keys", { cookie: stranger.cookie }, {
      requestUuid: randomUUID(), name: "probe", scopes: ["profiles:read"], httpEnabled: true, mcpEnabled: false
    })
    expect(key.status, key.text).toBe(200)
    const bearer = String(key.json.secret)
    for (const entry of admin) {
      const request = validCalls(boss.accountUuid)[entry.id]!
      const refused = await call(entry.method, request.path, { cookie: stranger.cookie }, request.body)
      expect([entry.id, refused.status, refused.json?.error?.code]).toEqual([entry.id, 404, "not_found"])
      expect((await call(entry.method, request.path, {}, request.body)).status, entry.id).toBe(401)
      expect((await call(entry.method, request.path, { bearer }, request.body)).status, entry.id).toBe(403)
    }
    const { rows } = await db.query("SELECT email FROM operators ORDER BY email")
    expect(rows).toEqual([{ email: "boss@example.com" }])
    expect((await db.query("SELECT count(*)::int AS n FROM admin_actions")).rows[0].n).toBe(0)
    // The stranger's capabilities carry no admin scope; the operator's do.
    const mine = await call("GET", "/api/v1/me/capabilities", { cookie: stranger.cookie })
    expect(mine.json.scopes.some((scope: string) => scope.startsWith("admin:"))).toBe(false)
    const boss2 = await call("GET", "/api/v1/me/capabilities", { cookie: boss.cookie })
    expect(boss2.json.scopes).toContain("admin:read")
  })

  it("shows the operator health, an account found by email with its sessions and keys but no secret, and records each change", async () => {
    const health = await call("GET", "/api/v1/admin/health", { cookie: boss.cookie })
    expect(health.status).toBe(200)
    expect(health.json.readiness).toEqual({ database: true, migrations: true })
    expect(Object.keys(health.json.webhookDeliveries).sort()).toEqual(["cancelled", "failed", "pending", "succeeded"])
    expect(health.json.failingEndpoints).toEqual([])
    expect(health.json.suspendedCheckers).toEqual([])

    // No SMTP configured: the development mailbox holds the stranger's sign-in message.
    const mail = await call("GET", `/api/v1/admin/mail?to=${encodeURIComponent(stranger.email.toUpperCase())}`, { cookie: boss.cookie })
    expect(mail.status, mail.text).toBe(200)
    expect(mail.json.available).toBe(true)
    expect(mail.json.items.length).toBeGreaterThanOrEqual(1)
    expect(mail.json.items.every((item: { to: string }) => item.to === stranger.email)).toBe(true)

    const found = await call("GET", `/api/v1/admin/accounts?email=${encodeURIComponent(stranger.email.toUpperCase())}`, { cookie: boss.cookie })
    expect(found.json.items.map((item: { uuid: string }) => item.uuid)).toEqual([stranger.accountUuid])
    const detail = await call("GET", `/api/v1/admin/accounts/${stranger.accountUuid}`, { cookie: boss.cookie })
    expect(detail.status).toBe(200)
    expect(detail.json.account.email).toBe(stranger.email)
    expect(detail.json.roles).toEqual([])
    expect(detail.json.sessions.length).toBeGreaterThanOrEqual(1)
    expect(detail.json.keys.some((key: { kind: string }) => key.kind === "personal")).toBe(true)
    const token = stranger.cookie.split("=")[1]!
    expect(detail.text).not.toContain(token)
    expect(detail.text).not.toMatch(/hash|secret_|birzha_pk_/)
    expect((await call("GET", `/api/v1/admin/accounts/${randomUUID()}`, { cookie: boss.cookie })).status).toBe(404)

    // Roles: the stranger becomes a moderator and then an operator, and loses both again.
    const queue = async () => (await call("GET", "/api/v1/moderation/queue", { cookie: stranger.cookie })).status
    expect(await queue()).toBe(403)
    const granted = await call("POST", "/api/v1/admin/roles/grant", { cookie: boss.cookie }, { role: "moderator", email: stranger.email.toUpperCase() })
    expect(granted.status).toBe(200)
    expect(granted.json.moderators).toEqual([expect.objectContaining({ email: stranger.email, source: "cli" })])
    expect(await queue()).toBe(200)
    await call("POST", "/api/v1/admin/roles/grant", { cookie: boss.cookie }, { role: "operator", email: stranger.email })
    expect((await call("GET", "/api/v1/admin/health", { cookie: stranger.cookie })).status).toBe(200)
    expect((await call("GET", `/api/v1/admin/accounts/${stranger.accountUuid}`, { cookie: boss.cookie })).json.roles).toEqual(["moderator", "operator"])
    for (const role of ["moderator", "operator"]) {
      expect((await call("POST", "/api/v1/admin/roles/revoke", { cookie: boss.cookie }, { role, email: stranger.email })).status).toBe(200)
    }
    expect(await queue()).toBe(403)
    expect((await call("GET", "/api/v1/admin/health", { cookie: stranger.cookie })).status).toBe(404)
    // Not held: 404; one's own operator role: refused.
    expect((await call("POST", "/api/v1/admin/roles/revoke", { cookie: boss.cookie }, { role: "moderator", email: stranger.email })).status).toBe(404)
    const own = await call("POST", "/api/v1/admin/roles/revoke", { cookie: boss.cookie }, { role: "operator", email: boss.email })
    expect([own.status, own.json.error.code]).toEqual([403, "forbidden"])
    // A change without the service's Origin is refused before it runs.
    const crossSite = await fetch(`${host.url}/api/v1/admin/roles/grant`, {
      method: "POST", headers: { "content-type": "application/json", cookie: boss.cookie }, body: JSON.stringify({ role: "operator", email: "x@example.com" })
    })
    expect(crossSite.status).toBe(403)

    // Deleting: the address must be typed again; then the account's session stops working.
    const wrong = await call("POST", "/api/v1/admin/accounts/delete", { cookie: boss.cookie }, { accountUuid: stranger.accountUuid, confirmEmail: "other@example.com" })
    expect(wrong.status).toBe(403)
    const self = await call("POST", "/api/v1/admin/accounts/delete", { cookie: boss.cookie }, { accountUuid: boss.accountUuid, confirmEmail: boss.email })
    expect(self.status).toBe(403)
    const deleted = await call("POST", "/api/v1/admin/accounts/delete", { cookie: boss.cookie }, { accountUuid: stranger.accountUuid, confirmEmail: stranger.email })
    expect(deleted.status).toBe(204)
    expect((await call("GET", "/api/v1/me/capabilities", { cookie: stranger.cookie })).status).toBe(401)
    const after = await call("GET", `/api/v1/admin/accounts/${stranger.accountUuid}`, { cookie: boss.cookie })
    expect(after.json.account.deletedAt).not.toBeNull()
    expect(after.json.sessions).toEqual([])

    const audit = await call("GET", "/api/v1/admin/audit", { cookie: boss.cookie })
    expect(audit.json.items.map((item: { operation: string; operator: string; target: string; detail: object }) =>
      [item.operation, item.operator, item.target, item.detail]).reverse()).toEqual([
      ["admin.roles.grant", boss.email, stranger.email, { role: "moderator" }],
      ["admin.roles.grant", boss.email, stranger.email, { role: "operator" }],
      ["admin.roles.revoke", boss.email, stranger.email, { role: "moderator" }],
      ["admin.roles.revoke", boss.email, stranger.email, { role: "operator" }],
      ["admin.accounts.delete", boss.email, stranger.accountUuid, { email: stranger.email }]
    ])
  })
})
