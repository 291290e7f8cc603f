import { sequencePending } from "@birzha/worker-host/internal"
import { ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { openJourney, poll } from "./webJourney.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

// The integrations page of the web application (packages/web, IntegrationsPage) in real headless
// Chromium: keys made, changed, reissued and revoked through the page; a secret shown once, never
// rendered by the server.

const world = openJourney({ label: "web_keys", shots: "web-keys", subnet: 110 })

const secretPattern = /birzha_pk_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}/
const bearerGet = (path: string, secret: string) => fetch(`${world.origin}${path}`, { headers: { authorization: `Bearer ${secret}` } })
const ageSessions = "UPDATE sessions SET created_at = now() - $2::interval WHERE account_uuid = (SELECT uuid FROM accounts WHERE email = $1 AND deleted_at IS NULL)"

describe("the integrations page", { timeout: 900_000 }, () => {
  it("creates a key from a preset said in words, narrowed one by one; reveals its secret once with a copy button; the page never holds it again; HTTP off and revoke apply at once", async () => {
    const person = await world.person(`keys.${Date.now()}@example.com`)
    const { tab, context } = person
    const served = await tab.goto(`${world.origin}/settings/integrations?lang=en`)
    expect(served!.status()).toBe(200)
    expect(served!.headers()["content-security-policy"]).toContain("script-src 'self'")
    expect(served!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'")
    expect(await tab.title()).toBe("Integrations · Birzha")
    // The automatic personal key is listed, without a secret yet.
    expect(await tab.locator("form.key").count()).toBe(1)
    expect(await tab.locator("form.key > fieldset > legend").textContent()).toContain("Personal key · personal")
    expect(await tab.locator("#secret-box").count()).toBe(0)
    // A key without a secret offers to issue one, never to "show" what does not exist.
    expect(await tab.locator("form.key .facts-line").textContent()).toContain("no secret issued yet")
    expect(await tab.getByRole("button", { name: "Show secret" }).count()).toBe(0)
    expect(await tab.getByRole("button", { name: "Issue the secret" }).count()).toBe(1)

    const create = tab.locator("#create-form")
    await create.getByLabel("Name").fill("CI bot")
    // A preset ticks the permissions it says in words; the exact choice stays one click away.
    await create.getByLabel("Publish and manage my tasks").check()
    await create.locator("#custom-scopes > summary").click()
    for (const scope of ["tasks:read", "tasks:write", "tasks:submit", "profiles:read"]) expect(await create.locator(`input[name=scope][value='${scope}']`).isChecked(), scope).toBe(true)
    expect(await create.locator("input[name=scope][value='services:read']").isChecked()).toBe(false)
    expect(await create.getByLabel("Read your tasks, drafts included.").isChecked()).toBe(true)
    await create.locator("input[name=scope][value='profiles:read']").uncheck()
    expect(await create.getByLabel("Choose permissions one by one").isChecked()).toBe(true)
    await create.getByRole("button", { name: "Create key" }).click()
    await tab.locator("#secret-box").waitFor({ state: "visible" })
    const secret = (await tab.locator("#secret-value").textContent()) ?? ""
    expect(secret).toMatch(new RegExp(`^${secretPattern.source}$`))
    expect(await tab.locator("#shown-once").textContent()).toContain("Shown once")
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: world.origin })
    await tab.getByRole("button", { name: "Copy" }).click()
    await poll(() => tab.locator("#copy-status").textContent()).toBe("Copied to the clipboard.")
    expect(await tab.evaluate(() => navigator.clipboard.readText())).toBe(secret)

    // It works, with exactly the chosen permissions: the preset's, less the one taken away.
    expect((await bearerGet("/api/v1/commands/tasks.list", secret)).status).toBe(200)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", secret)).status).toBe(403)
    expect((await bearerGet("/api/v1/commands/services.list", secret)).status).toBe(403)

    await tab.getByRole("button", { name: "I have saved the secret" }).click()
    await tab.locator("form.key").nth(1).waitFor()
    expect(await tab.content()).not.toMatch(secretPattern)
    expect(await tab.content()).not.toContain(secret.slice(10, 42))
    expect(await tab.locator("#secret-box").count()).toBe(0)
    const listed = tab.locator("form.key").nth(1)
    expect(await listed.locator(":scope > fieldset > legend").textContent()).toContain("CI bot")
    expect(await listed.locator(".facts-line").textContent()).toContain(`birzha_pk_…${secret.slice(-4)}`)
    const raw = await context.request.get(`${world.origin}/settings/integrations?lang=en`)
    expect(await raw.text()).not.toContain(secret.slice(10, 42))

    // Turning HTTP off on the page applies to the next request.
    await listed.getByLabel("HTTP API").uncheck()
    await listed.getByRole("button", { name: "Save" }).click()
    await poll(async () => (await bearerGet("/api/v1/commands/tasks.list", secret)).status).toBe(403)

    // Revoking stops it at once.
    await tab.waitForLoadState("load")
    tab.once("dialog", (dialog) => void dialog.accept())
    await tab.locator("form.key").nth(1).getByRole("button", { name: "Revoke" }).click()
    await poll(async () => (await bearerGet("/api/v1/commands/tasks.list", secret)).status).toBe(401)
    await poll(async () => tab.locator("form.key").nth(1).locator(".facts-line").textContent()).toContain("revoked")
    expect(person.errors).toEqual([])
    await context.close()
  })

  it("shows the personal key's secret once, and only after a recent sign-in; otherwise links to sign in again", async () => {
    const email = `keys.old.${Date.now()}@example.com`
    const { tab, context } = await world.person(email)
    await world.db.query(ageSessions, [email, "11 minutes"])
    await tab.goto(`${world.origin}/settings/integrations?lang=en`)
    expect(await tab.locator("#reauth").isVisible()).toBe(true)
    expect(await tab.getByRole("link", { name: "Sign in again" }).getAttribute("href")).toBe("/sign-in?lang=en")
    expect(await tab.locator("#create-form").count()).toBe(0)
    expect(await tab.getByRole("button", { name: "Issue the secret" }).count()).toBe(0)

    await world.db.query(ageSessions, [email, "0 minutes"])
    await tab.reload()
    expect(await tab.locator("#reauth").count()).toBe(0)
    await tab.getByRole("button", { name: "Issue the secret" }).click()
    await tab.locator("#secret-box").waitFor({ state: "visible" })
    const secret = (await tab.locator("#secret-value").textContent()) ?? ""
    expect(secret).toMatch(secretPattern)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", secret)).status).toBe(200)
    await tab.reload()
    expect(await tab.content()).not.toContain(secret.slice(10, 42))
    // Once issued, the button issues a new secret (after a confirmation) and the old one stops.
    tab.once("dialog", (dialog) => void dialog.accept())
    await tab.getByRole("button", { name: "Issue a new secret" }).click()
    await tab.locator("#secret-box").waitFor({ state: "visible" })
    const second = (await tab.locator("#secret-value").textContent()) ?? ""
    expect(second).not.toBe(secret)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", secret)).status).toBe(401)
    expect((await bearerGet("/api/v1/commands/profiles.get_own", second)).status).toBe(200)

    // A session that grew old meanwhile: the page says to sign in again instead of failing.
    await tab.getByRole("button", { name: "I have saved the secret" }).click()
    await tab.locator("#create-form").waitFor()
    await world.db.query(ageSessions, [email, "11 minutes"])
    await tab.locator("#create-form").getByLabel("Name").fill("Late")
    await tab.getByRole("button", { name: "Create key" }).click()
    await tab.locator("#reauth").waitFor()
    expect(await tab.locator("#create-form").count()).toBe(0)
    await context.close()
  })

  it("the event log: the person's events newest first, filtered by type, each with its envelope, and the cursor to resume after them", async () => {
    const person = await world.person(`events.${Date.now()}@example.com`)
    const { tab, context } = person
    const session = (await context.cookies()).find((c) => c.name === "__Host-birzha_session")!
    const cookie = `${session.name}=${session.value}`
    const task = { category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    const first = await world.service.call("POST", "/api/v1/commands/tasks.save", { cookie }, { requestUuid: randomUUID(), data: { ...task, title: "Первая задача" } })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const submitted = await world.service.call("POST", "/api/v1/commands/tasks.submit", { cookie }, { requestUuid: randomUUID(), publicationUuid: first.body.uuid, expectedRevision: first.body.revision })
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200)
    const second = await world.service.call("POST", "/api/v1/commands/tasks.save", { cookie }, { requestUuid: randomUUID(), data: { ...task, title: "Вторая задача" } })
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    // What the worker's sequencer does (this journey runs no worker), then what the API gives the same person, oldest first.
    const worker = ManagedRuntime.make(testPgLayer(world.service.database.url, 1))
    const unsequenced = async () => (await world.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_events WHERE position IS NULL")).rows[0]!.n
    await poll(async () => {
      await worker.runPromise(sequencePending(1000))
      return unsequenced()
    }).toBe(0)
    await worker.dispose()
    type Listed = Array<{ uuid: string; type: string; aggregate: { uuid: string } }>
    const events = (await world.service.call("GET", "/api/v1/events?limit=100", { cookie })).body.items as Listed
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(["publication.draft_saved", "publication.submitted"]))

    await tab.goto(`${world.origin}/settings/integrations?lang=en`)
    await tab.getByRole("link", { name: "Event log" }).click()
    await tab.waitForURL(`${world.origin}/settings/events?lang=en`)
    expect(await tab.title()).toBe("Event log · Birzha")
    const rows = tab.locator("#events > li")
    expect(await rows.evaluateAll((items) => items.map((item) => item.getAttribute("data-uuid")))).toEqual(events.map((event) => event.uuid).reverse())
    expect(await rows.first().locator(".row__title").textContent()).toBe("A draft was saved publication.draft_saved")
    await rows.first().locator("summary").click()
    const envelope = JSON.parse((await rows.first().locator("pre").textContent()) ?? "{}") as { uuid: string; aggregate: { uuid: string }; data: { objectUuid: string } }
    expect(envelope.uuid).toBe(events.at(-1)!.uuid)
    expect(envelope.aggregate.uuid).toBe(second.body.uuid)
    // The cursor after them: the API given it answers nothing older; a new event appears after it.
    const cursor = (await tab.locator("#resume-cursor").textContent()) ?? ""
    const after = await world.service.call("GET", `/api/v1/events?cursor=${encodeURIComponent(cursor)}`, { cookie })
    expect(after.body.items).toEqual([])

    // Filtered by type.
    await tab.getByLabel("Event type").selectOption("publication.submitted")
    await tab.getByRole("button", { name: "Show", exact: true }).click()
    await tab.waitForURL(/type=publication.submitted/)
    expect(await rows.evaluateAll((items) => items.map((item) => item.getAttribute("data-type")))).toEqual(["publication.submitted"])
    expect(await rows.first().getAttribute("data-uuid")).toBe(events.find((event) => event.type === "publication.submitted")!.uuid)
    // Resuming after the cursor shows only what came later.
    await tab.locator("#after").click()
    await tab.locator("#no-events").waitFor()
    expect(await tab.locator("#no-events").textContent()).toBe("No events of this type.")
    // A cursor the log no longer keeps, or one never issued, is said plainly, never a failure.
    const refused = await tab.goto(`${world.origin}/settings/events?lang=en&cursor=${encodeURIComponent("not a cursor")}`)
    expect(refused!.status()).toBe(200)
    expect(await tab.locator("#cursor-problem").textContent()).toBe("This is not a cursor of your event log. From the oldest kept")

    await world.checkPage(tab, "event-log", "/settings/events")
    expect(person.errors).toEqual([])
    await context.close()
  })

  it("speaks Russian, sends an anonymous visitor to sign in and back, and passes axe-core at both widths", async () => {
    const anonymous = await world.browser.newContext()
    const page = await anonymous.newPage()
    await page.goto(`${world.origin}/settings/integrations?lang=ru`)
    expect(page.url()).toBe(`${world.origin}/sign-in?lang=ru&next=${encodeURIComponent("/settings/integrations?lang=ru")}`)
    await anonymous.close()

    const person = await world.person(`keys.ru.${Date.now()}@example.com`)
    await person.tab.goto(`${world.origin}/settings/integrations?lang=ru`)
    expect(await person.tab.title()).toBe("Интеграции · Биржа")
    expect(await person.tab.getByRole("button", { name: "Создать ключ" }).count()).toBe(1)
    // The automatic key's name, the presets and the permissions' sentences in Russian.
    expect(await person.tab.locator("form.key > fieldset > legend").textContent()).toContain("Личный ключ · личный")
    expect(await person.tab.getByLabel("Агент, который работает от моего имени через MCP").count()).toBe(1)
    await person.tab.getByLabel("Агент, который работает от моего имени через MCP").check()
    expect(await person.tab.locator("#new-mcp").isChecked()).toBe(true)
    expect(await person.tab.locator("#custom-scopes > summary").textContent()).toBe("Разрешения по одному (выбрано: 18)")
    await world.checkPage(person.tab, "integrations", "/settings/integrations")
    // The permissions one by one, grouped by area with a sentence each (looked at in the screenshots).
    await person.tab.goto(`${world.origin}/settings/integrations?lang=ru`)
    await person.tab.locator("#custom-scopes > summary").click()
    expect(await person.tab.locator("#custom-scopes .scope-group > legend").allTextContents()).toEqual([
      "Профиль и аккаунт", "Публикации", "Отклики, предложения, сделки и переписка", "Обучение", "Файлы", "События, вебхуки и автоматизация"
    ])
    expect(await person.tab.locator("#create-form").getByLabel("Читать ваши задачи, включая черновики.").isChecked()).toBe(true)
    for (const width of [1280, 390]) {
      await person.tab.setViewportSize({ width, height: 900 })
      await screenshot(person.tab, `web-keys/integrations-custom-ru-${width}`)
    }
    expect(person.errors).toEqual([])
    await person.context.close()
  })
})
