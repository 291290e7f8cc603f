import { PostgresBlobStore, seedDemoData } from "@birzha/domain/server"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import Pg from "pg"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium } from "../../../../testing/browser.js"
import { startTestService, type TestService } from "../testService.js"

// The public pages in real headless Chromium, over the demo marketplace.

let service: TestService
let db: Pg.Client
let origin: string
let browser: Browser

beforeAll(async () => {
  service = await startTestService("public_pages")
  ;({ db, origin } = service)
  await Effect.runPromise(
    seedDemoData({ publications: 120, seed: 3, profilesPerType: 3, reset: false }).pipe(
      Effect.provide(PostgresBlobStore),
      Effect.provide(Layer.orDie(PgClient.layer({ url: Redacted.make(service.database.url), maxConnections: 2 })))
    )
  )
  browser = await launchChromium()
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await service?.close()
})

/** The newest public publications as the database holds them (approval order, as the API lists them). */
const newest = async (where = "TRUE", values: ReadonlyArray<unknown> = []) =>
  (await db.query<{ uuid: string; title: string; kind: string; owner: string }>(
    `SELECT uuid, approved->>'title' AS title, kind, owner_profile_uuid AS owner FROM publications
     WHERE approved IS NOT NULL AND NOT hidden AND deleted_at IS NULL AND ${where} ORDER BY approved_at DESC, uuid DESC LIMIT 20`,
    [...values]
  )).rows

describe("the public pages in a browser", () => {
  it("the home page says what the service is, links to the catalog, sign-in, API reference and SDK, and shows the newest demo publications", async () => {
    const page = await browser.newPage()
    const response = await page.goto(`${origin}/?lang=en`)
    expect(response?.status()).toBe(200)
    expect(await page.getAttribute("html", "lang")).toBe("en")
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Birzha: tasks, services and specialists")
    expect(await page.getByRole("main").textContent()).toContain("Birzha is a marketplace")
    const nav = page.getByRole("navigation", { name: "Sections" })
    expect(await nav.getByRole("link", { name: "Catalog" }).getAttribute("href")).toBe("/catalog?lang=en")
    expect(await nav.getByRole("link", { name: "Sign in" }).getAttribute("href")).toBe("/sign-in?lang=en")
    expect(await nav.getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/api/docs")
    expect(await nav.getByRole("link", { name: /SDK/ }).getAttribute("href")).toContain("@birzha/client")
    const titles = await page.locator("section[aria-labelledby=latest] h3").allTextContents()
    expect(titles).toEqual((await newest()).slice(0, 10).map((row) => row.title))
    expect(titles).toHaveLength(10)
    // Russian for a browser that prefers it (the Accept-Language of a Russian locale), the same page.
    const ru = await browser.newPage({ locale: "ru-RU" })
    await ru.goto(`${origin}/`)
    expect(await ru.getAttribute("html", "lang")).toBe("ru")
    expect(await ru.getByRole("link", { name: "Каталог" }).first().getAttribute("href")).toBe("/catalog?lang=ru")
    await page.close()
    await ru.close()
  })

  it("the catalog searches by words and kind through its labelled form, pages on, and leads to a publication and its author", async () => {
    const page = await browser.newPage()
    await page.goto(`${origin}/catalog?lang=en`)
    expect(await page.locator("ul.cards > li").count()).toBe(20)
    expect(await page.locator("a[rel=next]").count()).toBe(1)
    // A word of the newest task's title, searched among tasks.
    const [task] = await newest("kind = 'task'")
    const word = task!.title.split(/\s+/).find((w) => w.length >= 4)!
    await page.getByLabel("Words to search for").fill(word)
    await page.getByLabel("Kind").selectOption("task")
    await page.getByRole("button", { name: "Search" }).click()
    await page.waitForURL(/\/catalog\?.*q=/)
    const url = new URL(page.url())
    expect(url.searchParams.get("kind")).toBe("task")
    const api = await (await fetch(`${origin}/api/v1/publications?q=${encodeURIComponent(word)}&kind=task&limit=20`)).json() as {
      items: Array<{ uuid: string; approved: { title: string } }>
    }
    const shown = await page.locator("ul.cards h3").allTextContents()
    expect(shown).toEqual(api.items.map((p) => p.approved.title))
    expect(shown).toContain(task!.title)
    expect(await page.locator("ul.cards .meta").allTextContents()).toSatisfy((metas: Array<string>) => metas.every((m) => m.startsWith("Task · ")))

    await page.locator(`#p-${task!.uuid} a`).click()
    await page.waitForURL(`${origin}/p/${task!.uuid}?lang=en`)
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(task!.title)
    const authorName = (await db.query<{ name: string }>("SELECT name FROM profiles WHERE uuid = $1", [task!.owner])).rows[0]!.name
    expect(await page.locator("#author").textContent()).toBe(authorName)
    await page.locator("#author").click()
    await page.waitForURL(`${origin}/u/${task!.owner}?lang=en`)
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(authorName)
    expect(await page.locator("section[aria-labelledby=own] h3").allTextContents()).toContain(task!.title)
    await page.close()
  })

  it("answers an absent publication or profile with a 404 page and a bad query with a 400 page naming the field", async () => {
    const absent = await fetch(`${origin}/p/00000000-0000-4000-8000-000000000000?lang=en`)
    expect(absent.status).toBe(404)
    expect(await absent.text()).toContain("There is no such page")
    expect((await fetch(`${origin}/u/00000000-0000-4000-8000-000000000000`)).status).toBe(404)
    expect((await fetch(`${origin}/p/not-a-uuid`)).status).toBe(400)
    const badKind = await fetch(`${origin}/catalog?kind=nope&lang=en`)
    expect(badKind.status).toBe(400)
    expect(await badKind.text()).toContain("kind")
    const longQuery = await fetch(`${origin}/catalog?q=${"а".repeat(4097)}`)
    expect(longQuery.status).toBe(400)
    expect((await fetch(`${origin}/catalog?q=${"а".repeat(4096)}`)).status).toBe(200)
    const headers = (await fetch(`${origin}/`)).headers
    expect(headers.get("content-security-policy")).toContain("default-src 'none'")
  })
})
