import type { Browser, BrowserContext, Page } from "playwright-core"
import { launchChromium } from "../../../../testing/browser.js"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestService, type TestService } from "../testService.js"

// Real headless Chromium (Debian's package) driving the integrations settings page.
const secretPattern = /birzha_pk_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}/

let service: TestService
let db: Pg.Client
let origin: string
let browser: Browser

beforeAll(async () => {
  service = await startTestService("integrations_page")
  ;({ db, origin } = service)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await service?.close()
})

/** Signs in on the sign-in page with the mailed code, as a person would. */
const signedInPage = async (email: string): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${origin}/sign-in?lang=en`)
  await page.getByLabel("Email", { exact: true }).fill(email)
  await page.getByRole("button", { name: "Send me a code" }).click()
  await page.getByLabel("Code from the email (6 digits)").waitFor()
  const { rows } = await db.query<{ text_body: string }>(
    "SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1",
    [email]
  )
  await page.getByLabel("Code from the email (6 digits)").fill(rows[0]!.text_body.match(/\b(\d{6})\b/)![1]!)
  await page.getByRole("button", { name: "Sign in", exact: true }).click()
  await page.waitForURL(`${origin}/account`)
  return { context, page }
}

const bearerGet = (path: string, secret: string) => fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${secret}` } })

describe("the integrations page in a browser", () => {
  it("creates a key with chosen permissions and reveals its secret once; the page never holds it again", async () => {
    const email = `browser.keys.${Date.now()}@example.com`
    const { context, page } = await signedInPage(email)
    const served = await page.goto(`${origin}/settings/integrations?lang=en`)
    expect(served!.headers()["content-security-policy"]).toContain("script-src 'self'")
    await expect(page.title()).resolves.toBe("Integrations · Birzha")
    // The automatic personal key is listed, without a secret yet.
    expect(await page.locator("form.key").count()).toBe(1)
    expect(await page.locator("form.key legend").textContent()).toContain("personal")
    expect(await page.locator("#secret-box").isHidden()).toBe(true)

    const create = page.locator("#create-form")
    await create.getByLabel("Name").fill("CI bot")
    await create.locator("summary").click()
    await create.locator("input[name=scope][value='tasks:read']").check()
    await create.getByRole("button", { name: "Create key" }).click()
    await page.locator("#secret-box").waitFor({ state: "visible" })
    const secret = (await page.locator("#secret-value").textContent()) ?? ""
    expect(secret).toMatch(new RegExp(`^${secretPattern.source}$`))

    // It works, with exactly the chosen permission.
    expect((await bearerGet("/api/v1/commands/tasks.list", secret)).status).toBe(200)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", secret)).status).toBe(403)

    await page.getByRole("button", { name: "I have saved the secret" }).click()
    await page.waitForLoadState("load")
    await page.locator("form.key").nth(1).waitFor()
    const html = await page.content()
    expect(html).not.toMatch(secretPattern)
    expect(html).not.toContain(secret.slice(10, 42))
    expect(await page.locator("#secret-box").isHidden()).toBe(true)
    const listed = page.locator("form.key").nth(1)
    expect(await listed.locator("legend").textContent()).toContain("CI bot")
    expect(await listed.locator(".facts").textContent()).toContain(`birzha_pk_…${secret.slice(-4)}`)
    const raw = await context.request.get(`${origin}/settings/integrations?lang=en`)
    expect(await raw.text()).not.toContain(secret.slice(10, 42))

    // Turning HTTP off on the page applies to the next request.
    await listed.getByLabel("HTTP API").uncheck()
    await listed.getByRole("button", { name: "Save" }).click()
    await page.waitForLoadState("load")
    await expect.poll(async () => (await bearerGet("/api/v1/commands/tasks.list", secret)).status).toBe(403)

    // Revoking stops it at once.
    page.once("dialog", (dialog) => void dialog.accept())
    await page.locator("form.key").nth(1).getByRole("button", { name: "Revoke" }).click()
    await page.waitForLoadState("load")
    await expect.poll(async () => (await bearerGet("/api/v1/commands/tasks.list", secret)).status).toBe(401)
    await expect.poll(async () => page.locator("form.key").nth(1).locator(".facts").textContent()).toContain("revoked")
    await context.close()
  })

  it("shows the personal key's secret once, and only after a recent sign-in; otherwise links to sign in again", async () => {
    const email = `browser.keys.old.${Date.now()}@example.com`
    const { context, page } = await signedInPage(email)
    await db.query("UPDATE sessions SET created_at = now() - interval '11 minutes' WHERE account_uuid = (SELECT uuid FROM accounts WHERE email = $1 AND deleted_at IS NULL)", [email])
    await page.goto(`${origin}/settings/integrations?lang=en`)
    expect(await page.locator("#reauth").isVisible()).toBe(true)
    expect(await page.getByRole("link", { name: "Sign in again" }).getAttribute("href")).toBe("/sign-in?lang=en")
    expect(await page.locator("#create-form").isHidden()).toBe(true)
    expect(await page.getByRole("button", { name: "Show secret" }).count()).toBe(0)

    await db.query("UPDATE sessions SET created_at = now() WHERE account_uuid = (SELECT uuid FROM accounts WHERE email = $1 AND deleted_at IS NULL)", [email])
    await page.reload()
    expect(await page.locator("#reauth").isHidden()).toBe(true)
    await page.getByRole("button", { name: "Show secret" }).click()
    await page.locator("#secret-box").waitFor({ state: "visible" })
    const secret = (await page.locator("#secret-value").textContent()) ?? ""
    expect(secret).toMatch(secretPattern)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", secret)).status).toBe(200)
    await page.reload()
    expect(await page.content()).not.toContain(secret.slice(10, 42))
    // Once issued, the button issues a new secret (after a confirmation) and the old one stops.
    page.once("dialog", (dialog) => void dialog.accept())
    await page.getByRole("button", { name: "Issue a new secret" }).click()
    await page.locator("#secret-box").waitFor({ state: "visible" })
    const second = (await page.locator("#secret-value").textContent()) ?? ""
    expect(second).not.toBe(secret)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", secret)).status).toBe(401)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", second)).status).toBe(200)
    await context.close()
  })

  it("speaks Russian with ?lang=ru, and sends an anonymous visitor to sign in", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${origin}/settings/integrations`)
    expect(page.url()).toContain("/sign-in")
    const email = `browser.keys.ru.${Date.now()}@example.com`
    const signed = await signedInPage(email)
    await signed.page.goto(`${origin}/settings/integrations?lang=ru`)
    expect(await signed.page.title()).toBe("Интеграции · Birzha")
    expect(await signed.page.getByRole("button", { name: "Создать ключ" }).count()).toBe(1)
    await signed.context.close()
    await context.close()
  })
})
