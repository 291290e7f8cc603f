import { DatabaseLive, MigrationsAtStart } from "@birzha/infrastructure"
import { WorkerHostLive } from "@birzha/worker-host/internal"
import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { randomUUID } from "node:crypto"
import type { Browser } from "playwright-core"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, screenshot } from "../../../../testing/browser.js"
import { type Received, type Receiver, startReceiver } from "../../../../testing/webhookReceiver.js"
import { startTestService, type TestService } from "../testService.js"
import { journey, poll } from "./webJourney.js"

// The webhook pages of the web application (packages/web: WebhooksPage, WebhookPage, and the URL
// approval page) in real headless Chromium, against a real HTTP receiver on 127.0.0.1 and a worker
// beside the host that sequences events and delivers them: a webhook is created, approved and
// tested on the pages; a refused delivery is replayed from its row; the secret is rotated and the
// receiver verifies both signatures during the overlap.

const shots = "web-webhooks"
const secret = "web webhooks journey tests: a server secret of 32+ characters"
let service: TestService
let browser: Browser
let worker: Scope.CloseableScope
let receiver: Receiver
let world: ReturnType<typeof journey>

beforeAll(async () => {
  const env = { BIRZHA_SECRET: secret, BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1" }
  service = await startTestService("web_webhooks", { env, trustProxy: true })
  // A worker beside the host, as `birzha worker` runs: the sequencer and webhook delivery among its jobs.
  worker = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(
    Layer.mergeAll(WorkerHostLive, MigrationsAtStart).pipe(
      Layer.provide(DatabaseLive),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...env, DATABASE_URL: service.database.url }))))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.None))
    ),
    worker
  ))
  receiver = await startReceiver()
  browser = await launchChromium()
  world = journey({ browser, origin: service.origin, db: service.db, shots, subnet: 140 })
})

afterAll(async () => {
  await browser?.close()
  await receiver?.stop()
  if (worker !== undefined) await Effect.runPromise(Scope.close(worker, Exit.void))
  await service?.close()
})

const headersOf = (request: Received) =>
  Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => [name, String(request.headers[name])]))

/** Whether the receiver, holding only `signingSecret`, accepts the request (standardwebhooks, as the page's Node snippet does). */
const verifies = (signingSecret: string, request: Received) => {
  try {
    new Webhook(signingSecret).verify(request.body, headersOf(request))
    return true
  } catch {
    return false
  }
}

describe("the webhook pages", { timeout: 900_000 }, () => {
  it("create from the catalog, approve and test on the pages; replay a refused delivery from its row to 2xx; rotate the secret with both signatures verifying during the overlap", async () => {
    const person = await world.person(`hooks.${Date.now()}@example.com`)
    const { tab, context } = person
    const session = (await context.cookies()).find((c) => c.name === "__Host-birzha_session")!
    const cookie = `${session.name}=${session.value}`

    // From the integrations page to the webhooks, none yet.
    await tab.goto(`${service.origin}/settings/integrations?lang=en`)
    await tab.getByRole("link", { name: "Webhooks", exact: true }).click()
    await tab.waitForURL(`${service.origin}/settings/webhooks?lang=en`)
    expect(await tab.title()).toBe("Webhooks · Birzha")
    expect(await tab.locator("#no-webhooks").textContent()).toBe("You have no webhooks yet.")

    // A new one: the URL, the event types picked from the catalog (each with a sample), the payload mode explained.
    const form = tab.locator("#create-form")
    await form.getByLabel("Receiver URL").fill(receiver.url)
    await form.getByLabel("Note for yourself (optional)").fill("CRM")
    await form.locator("#area-publications > summary").click()
    const drafts = form.locator("li.webhook-type").filter({ has: tab.locator("#type-publication\\.draft_saved") })
    await drafts.locator("summary").click()
    expect(JSON.parse((await drafts.locator("pre").textContent()) ?? "{}")).toMatchObject({ type: "publication.draft_saved", data: { status: expect.any(String) } })
    await form.getByLabel("A draft was saved publication.draft_saved").check()
    expect(await form.locator("#area-publications > summary").textContent()).toBe("Profile, publications and files (chosen: 1)")
    expect(await form.getByLabel("Reference: the record's id and status").isChecked()).toBe(true)
    expect(await form.locator("#mode-current-help").textContent()).toContain("as your profile reads it")
    await form.getByRole("button", { name: "Create webhook" }).click()

    // The signing secret, shown once, with the verification code for common receivers.
    await tab.locator("#secret-box").waitFor({ state: "visible" })
    const firstSecret = (await tab.locator("#secret-value").textContent()) ?? ""
    expect(firstSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(await tab.locator("#shown-once").textContent()).toContain("Shown once")
    expect(await tab.locator("#snippet-node-code").textContent()).toContain("new Webhook(process.env.BIRZHA_WEBHOOK_SECRET)")
    expect(await tab.locator("#snippet-python-code").textContent()).toContain("from standardwebhooks.webhooks import Webhook")
    expect(await tab.locator("#snippet-go-code").textContent()).toContain("standardwebhooks.NewWebhook")
    for (const width of [1280, 390]) {
      await tab.setViewportSize({ width, height: 900 })
      expect(await tab.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `secret box ${width}`).toBe(true)
      await screenshot(tab, `${shots}/webhook-secret-en-${width}`)
    }
    await tab.setViewportSize({ width: 1280, height: 900 })

    // The exact URL approved on the approval page, then back to the webhook's own page.
    await tab.locator("#approve-link").click()
    await tab.waitForURL(/\/webhooks\/[0-9a-f-]{36}\/approve/)
    const uuid = /\/webhooks\/([0-9a-f-]{36})\/approve/.exec(tab.url())![1]!
    expect(await tab.locator("#webhook-url").textContent()).toBe(receiver.url)
    await tab.getByRole("button", { name: "Approve this URL" }).click()
    await tab.locator("#approved").waitFor()
    await tab.getByRole("link", { name: "Back to the webhook" }).click()
    await tab.waitForURL(`${service.origin}/settings/webhooks/${uuid}?lang=en`)
    expect(await tab.title()).toBe("Webhook settings · Birzha")
    expect(await tab.locator("#webhook-state").getAttribute("data-state")).toBe("awaiting_test")
    expect(await tab.locator("#webhook-events").textContent()).toBe("A draft was saved publication.draft_saved")

    // The test delivery and its result, on the page: answered 200, the webhook active.
    await tab.getByRole("button", { name: "Send a test delivery" }).click()
    await poll(() => tab.locator("#delivery-result").textContent()).toMatch(/^Test delivery: answered 200 in [\d,]+ ms\.$/)
    await poll(() => tab.locator("#webhook-state").getAttribute("data-state")).toBe("active")
    expect(receiver.received).toHaveLength(1)
    expect(verifies(firstSecret, receiver.received[0]!)).toBe(true)
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ type: "webhook.test", data: { test: true } })
    const testRow = tab.locator("li.delivery[data-kind=test]")
    expect(await testRow.getAttribute("data-status")).toBe("succeeded")
    expect(await testRow.locator("li.attempt").getAttribute("data-code")).toBe("200")

    // The receiver refuses: an event (a draft saved) is delivered, answered 500, and waits for its next retry.
    receiver.answerWith((_request, response) => {
      response.statusCode = 500
      response.end("down for maintenance")
    })
    const task = { category: "Сайты", title: "Лендинг для кофейни", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    const saved = await service.call("POST", "/api/v1/commands/tasks.save", { cookie }, { requestUuid: randomUUID(), data: task })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const eventRow = tab.locator("li.delivery[data-kind=event]")
    await poll(async () => {
      await tab.locator("#refresh").click()
      return eventRow.locator("li.attempt[data-code='500']").count()
    }).toBeGreaterThan(0)
    expect(await eventRow.locator(".row__title").textContent()).toBe("A draft was saved publication.draft_saved")
    // (An attempt before it may have found no answer: a connection the receiver closed as it went out.)
    expect(await eventRow.locator("li.attempt[data-code='500']").first().textContent()).toMatch(/answered 500 · \d{1,3}(,\d{3})* ms · down for maintenance/)
    await poll(async () => {
      await tab.locator("#refresh").click()
      return eventRow.locator(".next-attempt").count()
    }).toBe(1)
    expect(await eventRow.locator(".next-attempt").textContent()).toMatch(/^Next attempt .+\(.+\)$/)
    const refused = receiver.received.filter((request) => request.headers["webhook-id"] !== receiver.received[0]!.headers["webhook-id"])
    expect(refused.length).toBeGreaterThan(0)
    expect(verifies(firstSecret, refused[0]!)).toBe(true)

    // Paused: the waiting delivery is cancelled and says why; resumed, then replayed from its row once the receiver is back.
    await tab.getByRole("button", { name: "Pause" }).click()
    await poll(() => tab.locator("#webhook-state").getAttribute("data-state")).toBe("paused")
    await poll(async () => {
      await tab.locator("#refresh").click()
      return eventRow.getAttribute("data-status")
    }).toBe("cancelled")
    expect(await eventRow.locator(".card__meta").textContent()).toContain("cancelled because the webhook was paused")
    expect(await tab.locator("#next-step").textContent()).toContain("Paused by you")
    await tab.getByRole("button", { name: "Resume" }).click()
    await poll(() => tab.locator("#webhook-state").getAttribute("data-state")).toBe("active")
    receiver.answerWith((_request, response) => response.end("ok"))
    const before = receiver.received.length
    await eventRow.getByRole("button", { name: "Send again" }).click()
    await poll(() => eventRow.getAttribute("data-status")).toBe("succeeded")
    expect(await eventRow.locator("li.attempt").last().getAttribute("data-code")).toBe("200")
    expect(await tab.locator("#delivery-result").textContent()).toMatch(/^Delivery sent again: answered 200 in [\d,]+ ms\.$/)
    const replayed = receiver.received.slice(before)
    expect(replayed).toHaveLength(1)
    // The same webhook-id as the refused attempts: a receiver deduplicates by it.
    expect(replayed[0]!.headers["webhook-id"]).toBe(refused[0]!.headers["webhook-id"])
    expect(verifies(firstSecret, replayed[0]!)).toBe(true)
    expect(JSON.parse(replayed[0]!.body)).toMatchObject({ type: "publication.draft_saved", data: { objectUuid: saved.body.uuid } })

    // Recovery: another event refused, its delivery cancelled by a pause; everything since yesterday is sent again.
    receiver.answerWith((_request, response) => {
      response.statusCode = 503
      response.end("still down")
    })
    const again = await service.call("POST", "/api/v1/commands/tasks.save", { cookie }, { requestUuid: randomUUID(), data: { ...task, title: "Второй лендинг" } })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    const eventRows = tab.locator("li.delivery[data-kind=event]")
    await poll(async () => {
      await tab.locator("#refresh").click()
      return eventRows.first().locator("li.attempt[data-code='503']").count()
    }).toBeGreaterThan(0)
    await tab.getByRole("button", { name: "Pause" }).click()
    await poll(async () => {
      await tab.locator("#refresh").click()
      return eventRows.first().getAttribute("data-status")
    }).toBe("cancelled")
    await tab.getByRole("button", { name: "Resume" }).click()
    await poll(() => tab.locator("#webhook-state").getAttribute("data-state")).toBe("active")
    receiver.answerWith((_request, response) => response.end("ok"))
    const yesterday = new Date(Date.now() - 24 * 3600_000).toISOString().slice(0, 16)
    await tab.getByLabel("Since").fill(yesterday)
    await tab.getByRole("button", { name: "Send them again" }).click()
    await poll(() => tab.locator("#recovered").textContent()).toBe("1 delivery queued again.")
    await poll(async () => {
      await tab.locator("#refresh").click()
      return eventRows.first().getAttribute("data-status")
    }).toBe("succeeded")
    expect(await eventRows.first().locator("li.attempt").last().getAttribute("data-code")).toBe("200")

    // The secret rotated: the new one shown once; the page shows the 24-hour overlap; the next delivery carries both signatures.
    tab.once("dialog", (dialog) => void dialog.accept())
    await tab.getByRole("button", { name: "Rotate the secret" }).click()
    await tab.locator("#secret-box").waitFor({ state: "visible" })
    const secondSecret = (await tab.locator("#secret-value").textContent()) ?? ""
    expect(secondSecret).toMatch(/^whsec_/)
    expect(secondSecret).not.toBe(firstSecret)
    await tab.getByRole("button", { name: "I have saved the secret" }).click()
    await tab.locator("#overlap").waitFor()
    expect(await tab.locator("#overlap").textContent()).toMatch(/the previous secret stops signing .*\(in (23|24) hours\)/)
    expect(await tab.content()).not.toContain(secondSecret.slice(6))
    const beforeTest = receiver.received.length
    await tab.getByRole("button", { name: "Send a test delivery" }).click()
    await poll(async () => receiver.received.length).toBeGreaterThan(beforeTest)
    const overlapped = receiver.received[beforeTest]!
    expect(String(overlapped.headers["webhook-signature"]).split(" ")).toHaveLength(2)
    expect(verifies(firstSecret, overlapped)).toBe(true)
    expect(verifies(secondSecret, overlapped)).toBe(true)
    expect(verifies(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, overlapped)).toBe(false)
    await poll(() => tab.locator("#delivery-result").textContent()).toMatch(/^Test delivery: answered 200/)

    // The list shows it active; every page of this area passes the page check (axe, widths, languages, keyboard).
    await tab.goto(`${service.origin}/settings/webhooks?lang=en`)
    expect(await tab.locator(`li.webhook-row[data-uuid='${uuid}']`).getAttribute("data-state")).toBe("active")
    await world.checkPage(tab, "webhooks", "/settings/webhooks")
    await world.checkPage(tab, "webhook", `/settings/webhooks/${uuid}`)
    expect(person.errors).toEqual([])
    await context.close()
  })

  it("speaks Russian: the list, the new webhook's form and a prepared webhook's page, which leads to the URL's approval", async () => {
    const person = await world.person(`hooks.ru.${Date.now()}@example.com`)
    const { tab, context } = person
    await tab.goto(`${service.origin}/settings/webhooks?lang=ru`)
    expect(await tab.title()).toBe("Вебхуки · Биржа")
    await tab.locator("#area-learning > summary").click()
    expect(await tab.getByLabel("Курс пройден learning.course.completed").count()).toBe(1)
    await tab.getByLabel("Все события, включая типы, добавленные позже").check()
    expect(await tab.getByLabel("Курс пройден learning.course.completed").isDisabled()).toBe(true)
    await tab.getByLabel("Адрес приёмника").fill(receiver.url)
    await tab.getByRole("button", { name: "Создать вебхук" }).click()
    await tab.locator("#secret-box").waitFor({ state: "visible" })
    for (const width of [1280, 390]) {
      await tab.setViewportSize({ width, height: 900 })
      await screenshot(tab, `${shots}/webhook-secret-ru-${width}`)
    }
    await tab.setViewportSize({ width: 1280, height: 900 })
    await tab.getByRole("link", { name: "Открыть вебхук" }).click()
    await tab.waitForURL(/\/settings\/webhooks\/[0-9a-f-]{36}\?lang=ru/)
    expect(await tab.locator("#webhook-state").textContent()).toBe("ждёт подтверждения адреса")
    expect(await tab.locator("#webhook-events").textContent()).toBe("Все события, включая типы, добавленные позже *")
    expect(await tab.getByRole("link", { name: "Подтвердить адрес" }).count()).toBe(1)
    const path = new URL(tab.url()).pathname
    await world.checkPage(tab, "webhook-prepared", path)
    // An address that is no webhook of this profile is not found, and an anonymous visitor is sent to sign in.
    const missing = await tab.goto(`${service.origin}/settings/webhooks/${randomUUID()}?lang=ru`)
    expect(missing!.status()).toBe(404)
    const anonymous = await browser.newContext()
    const page = await anonymous.newPage()
    await page.goto(`${service.origin}/settings/webhooks?lang=ru`)
    expect(page.url()).toBe(`${service.origin}/sign-in?lang=ru&next=${encodeURIComponent("/settings/webhooks?lang=ru")}`)
    await anonymous.close()
    expect(person.errors).toEqual([])
    await context.close()
  })
})
