import { randomUUID } from "node:crypto"
import Pg from "pg"
import type { Browser } from "playwright-core"
import { launchChromium, signInThroughPage } from "../../../../testing/browser.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../../testing/signIn.js"
import { type RunningHost } from "../testing.js"
import { startTestService, type TestService } from "../testService.js"


let service: TestService
let host: RunningHost
let db: Pg.Client
let origin: string
let browser: Browser

beforeAll(async () => {
  service = await startTestService("webhook_page", { env: { BIRZHA_SECRET: "webhook page tests: a server secret of 32+ characters" }, trustProxy: true })
  ;({ host, db, origin } = service)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await service?.close()
})

const create = async (who: SignedIn, url: string) => {
  const response = await fetch(`${host.url}/api/v1/webhook-endpoints`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: who.cookie, origin },
    body: JSON.stringify({ requestUuid: randomUUID(), url, eventTypes: ["publication.*"], payloadMode: "current" })
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { endpoint: { uuid: string; revision: number; approvalUrl: string } }).endpoint
}

const stateOf = async (uuid: string) =>
  (await db.query<{ state: string }>("SELECT state FROM webhook_endpoints WHERE uuid = $1", [uuid])).rows[0]!.state

const page = (path: string, init: RequestInit = {}) => fetch(`${host.url}${path}`, { redirect: "manual", ...init })

const form = (who: SignedIn, fields: Record<string, string>, headers: Record<string, string> = { origin }) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", cookie: who.cookie, ...headers },
  body: new URLSearchParams(fields).toString()
})

describe("the webhook approval page", () => {
  it("shows the exact URL to its owner only, and approves it only from the service's own origin", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const url = "https://hooks.example.com/in?a=1&b=<x>"
    const endpoint = await create(owner, url)
    const path = `/webhooks/${endpoint.uuid}/approve`
    expect(endpoint.approvalUrl).toBe(`${origin}${path}`)

    const anonymous = await page(path)
    expect(anonymous.status).toBe(303)
    // Signing in returns to the approval.
    expect(anonymous.headers.get("location")).toMatch(new RegExp(`^/sign-in\\?lang=(ru|en)&next=${encodeURIComponent(path)}$`))
    const stranger = await signIn({ url: host.url, origin, db })
    expect((await page(path, { headers: { cookie: stranger.cookie } })).status).toBe(404)

    const shown = await page(`${path}?lang=en`, { headers: { cookie: owner.cookie } })
    expect(shown.status).toBe(200)
    expect(shown.headers.get("content-security-policy")).toContain("form-action 'self'")
    const html = await shown.text()
    const normalized = new URL(url).href
    expect(html).toContain(`<code id="webhook-url">${normalized.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}</code>`)
    expect(html).toContain("Approve this URL")

    const fields = { url: normalized, expectedRevision: String(endpoint.revision) }
    expect((await page(path, form(owner, fields, {}))).status).toBe(403)
    expect((await page(path, form(owner, fields, { origin: "https://evil.example" }))).status).toBe(403)
    expect((await page(path, form(stranger, fields))).status).toBe(404)
    expect((await page(path, form(owner, { ...fields, url: normalized + "x" }))).status).toBe(409)
    expect((await page(path, form(owner, { ...fields, expectedRevision: "7" }))).status).toBe(409)
    expect(await stateOf(endpoint.uuid)).toBe("prepared")
    const approved = await page(`${path}?lang=en`, form(owner, fields))
    expect(approved.status).toBe(303)
    expect(approved.headers.get("location")).toBe(`${path}?lang=en`)
    expect(await stateOf(endpoint.uuid)).toBe("awaiting_test")
    const after = await (await page(`${path}?lang=en`, { headers: { cookie: owner.cookie } })).text()
    expect(after).toContain("The URL is approved")
    expect(after).not.toContain("Approve this URL")
  })

  it("works in a real browser: the owner signs in, reads the URL and presses the button", async () => {
    const email = `webhook.page.${Date.now()}@example.com`
    const context = await browser.newContext()
    const tab = await context.newPage()
    await signInThroughPage(tab, { origin, db, email })
    const session = (await context.cookies()).find((c) => c.name === "__Host-birzha_session")!
    const owner = { email, cookie: `${session.name}=${session.value}`, accountUuid: "", profileUuid: "" }
    const endpoint = await create(owner, "https://receiver.example.org/birzha")
    await tab.goto(`${endpoint.approvalUrl}?lang=en`)
    expect(await tab.locator("#webhook-url").textContent()).toBe("https://receiver.example.org/birzha")
    expect(await tab.locator("#webhook-state").textContent()).toBe("prepared")
    await tab.getByRole("button", { name: "Approve this URL" }).click()
    await tab.locator("#status").waitFor()
    expect(await tab.locator("#status").textContent()).toContain("The URL is approved")
    expect(await tab.locator("#webhook-state").textContent()).toBe("awaiting_test")
    expect(await stateOf(endpoint.uuid)).toBe("awaiting_test")
    await context.close()
  })
})
