import type { Browser } from "playwright-core"
import { axeViolations, launchChromium } from "../../../../testing/browser.js"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestService, type TestService } from "../testService.js"

// Real headless Chromium (Debian's package) driving the server-rendered pages.

let service: TestService
let db: Pg.Client
let origin: string
let browser: Browser

beforeAll(async () => {
  service = await startTestService("pages")
  ;({ db, origin } = service)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await service?.close()
})

const mailTo = async (email: string) => {
  const { rows } = await db.query<{ text_body: string }>("SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1", [email])
  const text = rows[0]?.text_body ?? ""
  return {
    code: text.match(/\b(\d{6})\b/)?.[1] ?? "",
    link: text.match(/(http:\/\/localhost:\d+\/auth\/link#\S+)/)?.[1] ?? ""
  }
}

/** Asks for a sign-in email on the sign-in page and waits for the code form. */
const requestEmail = async (email: string) => {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${origin}/sign-in?lang=en`)
  await page.getByLabel("Email", { exact: true }).fill(email)
  await page.getByRole("button", { name: "Send me a code" }).click()
  await page.getByLabel("Code from the email (6 digits)").waitFor()
  return { context, page }
}

describe("the pages in a browser", () => {
  it("sign in by code: email, then the code, then the account page", async () => {
    const email = `browser.code.${Date.now()}@example.com`
    const { context, page } = await requestEmail(email)
    const { code } = await mailTo(email)
    expect(code).toMatch(/^\d{6}$/)
    await page.getByLabel("Code from the email (6 digits)").fill(code)
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.waitForURL(`${origin}/account`)
    expect(await page.locator("#signed-in-email").textContent()).toBe(email)
    const cookies = await context.cookies()
    const session = cookies.find((c) => c.name === "__Host-birzha_session")
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: "Lax", path: "/" })
    // The cookie is HttpOnly: page scripts cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain("birzha_session")
    // The account page leads to the integrations page (keys, MCP).
    expect(await page.getByRole("link", { name: "Integrations: API keys and MCP" }).getAttribute("href")).toBe("/settings/integrations?lang=en")
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForURL(/\/sign-in/)
    await page.goto(`${origin}/account`)
    expect(page.url()).toContain("/sign-in")
    await context.close()
  })

  it("sign in by the link opened in another browser context (another device)", async () => {
    const email = `browser.link.${Date.now()}@example.com`
    const first = await requestEmail(email)
    const { link } = await mailTo(email)
    expect(link).toContain("#challenge=")
    const other = await browser.newContext()
    const page = await other.newPage()
    await page.goto(link)
    await page.getByRole("button", { name: "Sign in on this device" }).click()
    await page.waitForURL(`${origin}/account`)
    expect(await page.locator("#signed-in-email").textContent()).toBe(email)
    // The device that asked is not signed in by the other one's click.
    await first.page.goto(`${origin}/account`)
    expect(first.page.url()).toContain("/sign-in")
    await first.context.close()
    await other.close()
  })

  it("opening the link page without a click does not sign in", async () => {
    const email = `browser.noclick.${Date.now()}@example.com`
    const first = await requestEmail(email)
    const { code, link } = await mailTo(email)
    const other = await browser.newContext()
    const page = await other.newPage()
    await page.goto(link)
    await page.getByRole("button", { name: "Sign in on this device" }).waitFor()
    await page.waitForTimeout(500)
    expect((await other.cookies()).some((c) => c.name === "__Host-birzha_session")).toBe(false)
    const { rows } = await db.query<{ consumed_at: Date | null }>("SELECT consumed_at FROM sign_in_challenges WHERE email = $1", [email])
    expect(rows).toEqual([{ consumed_at: null }])
    expect(await db.query("SELECT 1 FROM accounts WHERE email = $1", [email]).then((r) => r.rowCount)).toBe(0)
    // The challenge is still whole: the code from the same email signs in.
    await first.page.getByLabel("Code from the email (6 digits)").fill(code)
    await first.page.getByRole("button", { name: "Sign in", exact: true }).click()
    await first.page.waitForURL(`${origin}/account`)
    await first.context.close()
    await other.close()
  })

  it("renders the sign-in page in Russian by default, with a strict CSP and no inline script (the page's data is a JSON block, never run)", async () => {
    const response = await fetch(`${origin.replace("localhost", "127.0.0.1")}/sign-in`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'")
    const html = await response.text()
    expect(html).toContain('<html lang="ru">')
    expect(html).toContain("<h1>Вход</h1>")
    expect(html).not.toMatch(/<script(?![^>]*\b(?:src=|type="application\/json"))[^>]*>/)
  })
})

describe("the accessibility check every page test runs (testing/browser.ts)", () => {
  it("reports serious and critical violations, and only those", async () => {
    const context = await browser.newContext()
    const tab = await context.newPage()
    // An image without a text alternative (image-alt: critical), a field without a label (label:
    // critical), and content outside every landmark (region: moderate, not looked for).
    await tab.setContent(`<!doctype html><html lang="en"><head><title>t</title></head><body><p>outside</p><main><h1>x</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><input type="text"></main></body></html>`)
    const violations = await axeViolations(tab)
    expect(violations.map((violation) => violation.slice(0, violation.indexOf(":")))).toEqual(["image-alt", "label"])
    // Run again on the same document (axe-core is injected once): the same answer.
    expect(await axeViolations(tab)).toEqual(violations)
    await tab.setContent(`<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>x</h1><img alt="a dot" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><label>Name <input type="text"></label></main></body></html>`)
    expect(await axeViolations(tab)).toEqual([])
    await context.close()
  })
})
