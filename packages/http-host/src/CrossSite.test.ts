import { randomUUID } from "node:crypto"
import { createServer, type Server } from "node:http"
import Pg from "pg"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, signInThroughPage } from "../../../testing/browser.js"
import { taskDraft } from "../../../testing/drafts.js"
import { freePort } from "../../../testing/net.js"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { startTestService, type TestService } from "./testService.js"

// A page of another site (another port of the same host is the same site, so
// SameSite=Lax does not stop it) made the victim's browser save a draft with a cookie-authenticated
// POST carrying JSON as text/plain and no usable Origin.
let service: TestService
let db: Pg.Client
let owner: SignedIn
let browser: Browser
let attacker: Server
let attackerOrigin: string

const drafts = async () =>
  Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM publications WHERE owner_profile_uuid = $1", [owner.profileUuid])).rows[0]?.n)

const save = (headers: Record<string, string>, body: BodyInit = JSON.stringify({ requestUuid: randomUUID(), data: taskDraft })) =>
  fetch(`${service.host.url}/api/v1/commands/tasks.save`, { method: "POST", headers, body })

beforeAll(async () => {
  service = await startTestService("cross_site", { trustProxy: true })
  db = service.db
  owner = await signIn({ url: service.host.url, origin: service.origin, db })
  browser = await launchChromium()
  const port = await freePort()
  attackerOrigin = `http://localhost:${port}`
  const victim = `${service.origin}/api/v1/commands/tasks.save`
  const forged = JSON.stringify({ requestUuid: randomUUID(), data: taskDraft })
  // The page a victim visits: it posts to the service with the victim's cookie, as the probe did.
  attacker = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end(`<!doctype html><script>
      window.done = Promise.all([
        fetch(${JSON.stringify(victim)}, { method: "POST", mode: "no-cors", credentials: "include", body: ${JSON.stringify(forged)} }),
        fetch(${JSON.stringify(victim)}, { method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": "text/plain" }, body: ${JSON.stringify(forged)} })
      ]).then(() => "sent", (e) => String(e))
    </script>`)
  })
  await new Promise<void>((resolve) => attacker.listen(port, "127.0.0.1", resolve))
})
afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => attacker?.close(resolve))
  await service?.close()
})

describe("changes made with the session cookie", () => {
  it("a page on another port of the same host cannot save a draft in a signed-in browser", async () => {
    const email = `cross.site.${Date.now()}@example.com`
    const context = await browser.newContext()
    await signInThroughPage(await context.newPage(), { origin: service.origin, db, email })
    const all = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM publications")).rows[0]?.n)
    const before = await all()
    const tab = await context.newPage()
    await tab.goto(attackerOrigin)
    expect(await tab.evaluate("window.done")).toBe("sent")
    expect(await all()).toBe(before)
    await context.close()
  })

  it("refuses a cookie change without Origin or with another origin: 403 forbidden_origin, nothing written", async () => {
    const before = await drafts()
    for (const origin of [undefined, attackerOrigin, "null", `${service.origin}/`, service.origin.replace("localhost", "127.0.0.1")]) {
      const response = await save({ "content-type": "application/json", cookie: owner.cookie, ...(origin === undefined ? {} : { origin }) })
      expect(response.status, String(origin)).toBe(403)
      expect((await response.json()).error.code).toBe("forbidden_origin")
    }
    // Also for changes without a body and other methods.
    const bodiless = await fetch(`${service.host.url}/api/v1/files/uploads/${randomUUID()}/complete`, { method: "POST", headers: { cookie: owner.cookie } })
    expect(bodiless.status).toBe(403)
    expect(await drafts()).toBe(before)
  })

  it("refuses a body that is not JSON, or has no Content-Type, with 415 even from the right origin", async () => {
    const before = await drafts()
    for (const contentType of ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const response = await save({ "content-type": contentType, cookie: owner.cookie, origin: service.origin })
      expect(response.status, contentType).toBe(415)
      expect((await response.json()).error.code).toBe("unsupported_media_type")
    }
    const untyped = await save({ cookie: owner.cookie, origin: service.origin }, new Blob([JSON.stringify({ requestUuid: randomUUID(), data: taskDraft })]))
    expect(untyped.status).toBe(415)
    expect(await drafts()).toBe(before)
  })

  it("accepts the service's own pages: the exact Origin and JSON", async () => {
    const before = await drafts()
    expect((await save({ "content-type": "application/json", cookie: owner.cookie, origin: service.origin })).status).toBe(200)
    expect(await drafts()).toBe(before + 1)
  })

  it("reads with the cookie need no Origin, and a bearer key is not a cookie: no Origin needed", async () => {
    expect((await fetch(`${service.host.url}/api/v1/commands/tasks.list`, { headers: { cookie: owner.cookie } })).status).toBe(200)
    const created = await fetch(`${service.host.url}/api/v1/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: service.origin, cookie: owner.cookie },
      body: JSON.stringify({ requestUuid: randomUUID(), name: "no origin", scopes: ["tasks:write"], httpEnabled: true, mcpEnabled: false })
    })
    expect(created.status).toBe(200)
    const { secret } = (await created.json()) as { secret: string }
    const before = await drafts()
    expect((await save({ "content-type": "application/json", authorization: `Bearer ${secret}` })).status).toBe(200)
    expect(await drafts()).toBe(before + 1)
  })
})
