import { PostgresBlobStore, seedDemoData } from "@birzha/domain/internal"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { axeViolations, launchChromium, screenshot, signInThroughPage } from "../../../../testing/browser.js"
import { signIn } from "../../../../testing/signIn.js"
import { startTestService, type TestService } from "../testService.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

// The web application (packages/web) served by the host, over the demo marketplace: its HTML as
// fetched (no JavaScript), and in real headless Chromium (one browser, contexts in parallel).

let service: TestService
let db: Pg.Client
let origin: string
let browser: Browser

const shots = "web"

/** The publication the journeys open: the newest public service with two or more pictures. */
let target: { uuid: string; title: string; owner: string; ownerName: string; word: string }
/** The customer who reviewed the target's author after a completed deal. */
const customerName = "Ирина Заказчица"

beforeAll(async () => {
  service = await startTestService("web_pages", { trustProxy: true })
  ;({ db, origin } = service)
  await Effect.runPromise(
    seedDemoData({ publications: 120, seed: 3, profilesPerType: 3, reset: false }).pipe(
      Effect.provide(PostgresBlobStore),
      Effect.provide(Layer.orDie(testPgLayer(service.database.url, 2)))
    )
  )
  const { rows } = await db.query<{ uuid: string; title: string; owner: string; owner_name: string }>(
    `SELECT p.uuid, p.approved->>'title' AS title, p.owner_profile_uuid AS owner, o.name AS owner_name
     FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid
     WHERE p.kind = 'service' AND p.approved IS NOT NULL AND NOT p.hidden AND p.deleted_at IS NULL
       AND jsonb_array_length(p.approved->'content'->'assets') >= 2 AND p.approved->'service'->'price' IS NOT NULL
     ORDER BY p.approved_at DESC, p.uuid DESC LIMIT 1`
  )
  const row = rows[0]!
  target = { uuid: row.uuid, title: row.title, owner: row.owner, ownerName: row.owner_name, word: row.title.split(/[\s:,.«»]+/).find((w) => w.length >= 6)! }

  // A completed deal between a new customer and the target's author, reviewed by both (so published).
  const contractorEmail = (await db.query<{ email: string }>(
    "SELECT a.email FROM accounts a JOIN profiles p ON p.account_uuid = a.uuid WHERE p.uuid = $1", [target.owner]
  )).rows[0]!.email
  const customer = await signIn({ url: service.host.url, origin, db })
  await db.query("UPDATE profiles SET is_public = true, name = $1 WHERE uuid = $2", [customerName, customer.profileUuid])
  const contractor = await signIn({ url: service.host.url, origin, db, email: contractorEmail })
  expect(contractor.profileUuid).toBe(target.owner)
  const offer = randomUUID()
  const deal = randomUUID()
  await db.query(
    `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body)
     VALUES ($1, 'offer', 'accepted', $2, $3, 'customer', 'Условия')`,
    [offer, customer.profileUuid, target.owner]
  )
  await db.query(
    `INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, body, completed_at, origin_relation_uuid)
     VALUES ($1, 'deal', 'completed', $2, $3, 'customer', 'Условия', now() - interval '1 day', $4)`,
    [deal, customer.profileUuid, target.owner, offer]
  )
  for (const [who, rating, body] of [[customer, 4, "Сделано в срок, тексты живые."], [contractor, 5, "Понятный бриф."]] as const) {
    const answer = await service.call("POST", "/api/v1/commands/reviews.create", who, { requestUuid: randomUUID(), relationUuid: deal, rating, body })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  }
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await service?.close()
})

const en = JSON.parse(readFileSync(new URL("../../../web/src/translations/en.json", import.meta.url), "utf8")) as Record<string, string>
const ru = JSON.parse(readFileSync(new URL("../../../web/src/translations/ru.json", import.meta.url), "utf8")) as Record<string, string>
/** The English catalog's words a Russian page must not show: each message's longest part outside placeholders. */
const englishMessages = Object.entries(en)
  .filter(([key, message]) => message !== ru[key])
  .map(([, message]) => message.split(/\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}/).map((part) => part.trim()).sort((x, y) => y.length - x.length)[0] ?? "")
  .filter((part) => part.length >= 5 && !/^[@\w/().-]*\(@birzha\/client\)$/.test(part))

/** A page as a browser asks for it (`Accept: text/html`). */
const page = async (path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${origin}${path}`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8", ...headers } })
  return { response, html: await response.text() }
}

/** The visible text of an HTML document's `<main>`, tags dropped. */
const mainText = (html: string) =>
  (html.match(/<main[^>]*>([\s\S]*)<\/main>/)?.[1] ?? "").replace(/<!-- -->/g, "").replace(/<[^>]+>/g, " ").replace(/&amp;/g, "&").replace(/&quot;/g, "\"").replace(/&#x27;|&#39;/g, "'").replace(/\s+/g, " ")

describe("the web application's HTML, without JavaScript", () => {
  it("renders every public page on the server: content readable in the HTML, no inline script, a strict CSP", async () => {
    const home = await page("/?lang=en")
    expect(home.response.status).toBe(200)
    const csp = home.response.headers.get("content-security-policy")!
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain("unsafe-inline")
    expect(home.html).toContain('<html lang="en">')
    expect(mainText(home.html)).toContain("Birzha is a marketplace")
    // Scripts: the hashed entry by src, and the page's data as JSON, which a browser does not run.
    for (const tag of home.html.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/\bsrc="\/app\/assets\/[\w-]+\.js"|type="application\/json"/)
    const state = JSON.parse(home.html.match(/<script type="application\/json" id="birzha-state">([\s\S]*?)<\/script>/)![1]!) as { data: { page: string } }
    expect(state.data.page).toBe("home")

    const catalog = await page(`/catalog?lang=ru&q=${encodeURIComponent(target.word)}&kind=service`)
    expect(catalog.response.status).toBe(200)
    expect(catalog.html).toContain('<html lang="ru">')
    expect(mainText(catalog.html)).toContain(target.title)
    // The author by name, linked to the profile (not «Автор»).
    expect(catalog.html).toContain(`href="/u/${target.owner}?lang=ru"`)
    expect(mainText(catalog.html)).toContain(`Автор: ${target.ownerName}`)

    // Paging: the next page's link carries the search and the cursor, and shows the next 20.
    const first = await page("/catalog?lang=en&kind=task")
    const next = first.html.match(/<a rel="next"[^>]*href="([^"]+)"/)![1]!.replace(/&amp;/g, "&")
    expect(new URL(next, origin).searchParams.get("kind")).toBe("task")
    const second = await page(next)
    const titles = (html: string) => [...html.matchAll(/<h3 id="p-([0-9a-f-]{36})"/g)].map((m) => m[1])
    expect(titles(second.html)).toHaveLength(20)
    expect(titles(second.html).filter((uuid) => titles(first.html).includes(uuid))).toEqual([])
    // The category filter: only that category's publications.
    const category = (await db.query<{ category: string }>("SELECT approved->>'category' AS category FROM publications WHERE uuid = $1", [target.uuid])).rows[0]!.category
    const inCategory = await page(`/catalog?lang=en&category=${encodeURIComponent(category)}`)
    const categories = [...inCategory.html.matchAll(/<span class="tag">[^<]*<\/span><span>([^<]*)<\/span>/g)].map((m) => m[1])
    expect(categories.length).toBeGreaterThan(0)
    expect(new Set(categories)).toEqual(new Set([category]))

    const publication = await page(`/p/${target.uuid}?lang=en`)
    const text = mainText(publication.html)
    expect(text).toContain(target.title)
    expect(text).toContain("Price")
    expect(text).toMatch(/£|€|\$|RUB|₽/)
    expect(text).not.toMatch(/\b(budget|deadline|priceUnit|deliveryDays)\b/)
    expect(publication.html.match(/<img src="\/api\/v1\/files\/[0-9a-f-]{36}\/content" alt="[^"]+"/g)?.length).toBeGreaterThanOrEqual(2)

    const profile = await page(`/u/${target.owner}?lang=en`)
    const profileText = mainText(profile.html)
    expect(profileText).toContain(target.ownerName)
    expect(profileText).toContain("Reviews")
    expect(profileText).toContain("Сделано в срок, тексты живые.")
    expect(profileText).toContain(customerName)
    expect(profileText).toContain("(1 review)")
    expect(profile.html).toContain('aria-label="Rated 4 out of 5"')
  })

  it("speaks the visitor's language: no English on a Russian page, Russian by Accept-Language, dates and money of the locale", async () => {
    for (const path of ["/", "/catalog", `/p/${target.uuid}`, `/u/${target.owner}`, "/sign-in", "/favorites"]) {
      const ru = await page(path, { "accept-language": "ru-RU,ru;q=0.9" })
      expect(ru.html, path).toContain('<html lang="ru">')
      // None of the application's English words (each message's longest fixed part) on it.
      const text = mainText(ru.html) + (ru.html.match(/<header[\s\S]*<\/header>/)?.[0] ?? "")
      const found = englishMessages.filter((message) => text.includes(message))
      expect(found, path).toEqual([])
    }
    const en = mainText((await page(`/p/${target.uuid}`, { "accept-language": "en-GB,en;q=0.9" })).html)
    expect(en).toMatch(/Published \d{1,2} [A-Z][a-z]+ \d{4}/)
    const ru = mainText((await page(`/p/${target.uuid}?lang=ru`)).html)
    expect(ru).toMatch(/Опубликовано \d{1,2} [а-я]+ \d{4}/)
    expect(ru).toMatch(/\d[\d\u00a0\u202f ]*\u00a0?₽/)
  })

  it("answers a browser path nothing serves with the application's HTML 404, /api/* with the JSON envelope, and a bad query with a 400 page naming the field", async () => {
    for (const path of ["/nothing-here", "/settings/nothing", "/jobs/a/b", "/p/a/b", "/tasks/a/b", "/messages/a/b"]) {
      const { response, html } = await page(`${path}?lang=en`)
      expect([path, response.status, response.headers.get("content-type")]).toEqual([path, 404, "text/html; charset=utf-8"])
      expect(mainText(html)).toContain("There is no such page")
      expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    }
    const api = await fetch(`${origin}/api/v1/nothing-here`)
    expect(api.status).toBe(404)
    expect(await api.json()).toMatchObject({ error: { code: "not_found" } })
    // A script that does not ask for HTML gets the envelope, wherever the path is.
    const script = await fetch(`${origin}/nothing-here`, { headers: { accept: "application/json" } })
    expect([script.status, await script.json()]).toEqual([404, { error: { code: "not_found", message: expect.any(String) } }])
    const absent = await page("/p/00000000-0000-4000-8000-000000000000?lang=en")
    expect(absent.response.status).toBe(404)
    expect(mainText(absent.html)).toContain("There is no such page")
    expect((await page("/u/00000000-0000-4000-8000-000000000000")).response.status).toBe(404)
    expect((await page("/p/not-a-uuid")).response.status).toBe(400)
    const badKind = await page("/catalog?kind=nope&lang=en")
    expect(badKind.response.status).toBe(400)
    expect(mainText(badKind.html)).toContain("“kind”")
    expect((await page(`/catalog?q=${"а".repeat(4097)}`)).response.status).toBe(400)
    expect((await page(`/catalog?q=${"а".repeat(4096)}`)).response.status).toBe(200)
  })

  it("serves the browser build: hashed files immutable, the theme and the favicon", async () => {
    const { html } = await page("/")
    const script = html.match(/src="(\/app\/assets\/[\w-]+\.js)"/)![1]!
    const js = await fetch(`${origin}${script}`)
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    const theme = await fetch(`${origin}/app/theme.css`)
    expect(await theme.text()).toContain("--primary: #1d4ed8;")
    expect(html).toContain('<link rel="icon" href="/app/favicon.svg"')
    expect((await fetch(`${origin}/app/favicon.svg`)).headers.get("content-type")).toBe("image/svg+xml")
    expect((await fetch(`${origin}/favicon.ico`)).status).toBe(200)
    for (const bad of ["/app/assets/..%2F..%2Fpackage.json", "/app/assets/nothing.js", "/app/..%2Fserver%2Fentry-server.js"]) {
      expect((await fetch(`${origin}${bad}`)).status, bad).toBe(404)
    }
  })
})

/** Fails the test on any error the page's script reports (a hydration mismatch is one). */
const watchErrors = (tab: Page) => {
  const errors: Array<string> = []
  tab.on("pageerror", (error) => errors.push(error.message))
  tab.on("console", (message) => {
    // An image the demo data names may be absent; scripts must not fail.
    if (message.type() === "error" && !message.text().includes("Failed to load resource")) errors.push(message.text())
  })
  return errors
}

const texts = {
  en: { catalog: "Catalog", search: "Words to search for", kind: "Kind", find: "Search", price: "Price", reviews: "Reviews", rated: "Rated 4 out of 5" },
  ru: { catalog: "Каталог", search: "Слова для поиска", kind: "Вид", find: "Найти", price: "Цена", reviews: "Отзывы", rated: "Оценка 4 из 5" }
} as const

describe("the web application in a browser", () => {
  it("the visitor's journey, in Russian and in English: home, catalog search, a publication with its pictures, its author's profile with reviews", async () => {
    await Promise.all((["ru", "en"] as const).map(async (language) => {
      const t = texts[language]
      const context = await browser.newContext({ locale: language === "ru" ? "ru-RU" : "en-GB" })
      const tab = await context.newPage()
      const errors = watchErrors(tab)
      // The messages a page loads: its own language's chunk only (entry-client.tsx).
      const messages = new Set<string>()
      tab.on("request", (request) => {
        const chunk = /\/app\/assets\/(ru|en)-[\w-]+\.js$/.exec(request.url())
        if (chunk !== null) messages.add(chunk[1]!)
      })
      const hydrated = () => expect.poll(() => tab.evaluate(() => performance.getEntriesByName("birzha:hydrated").length)).toBe(1)
      await tab.goto(`${origin}/`)
      expect(await tab.getAttribute("html", "lang")).toBe(language)
      await hydrated()
      await tab.getByRole("navigation").getByRole("link", { name: t.catalog, exact: true }).click()
      await tab.waitForURL(`${origin}/catalog?lang=${language}`)
      expect(await tab.locator("ul.cards > li").count()).toBe(20)
      await tab.getByLabel(t.search).fill(target.word)
      await tab.getByLabel(t.kind, { exact: true }).selectOption("service")
      await tab.getByRole("button", { name: t.find }).click()
      await tab.waitForURL(/\/catalog\?.*q=/)
      const shown = await tab.locator("ul.cards h3").allTextContents()
      const api = await (await fetch(`${origin}/api/v1/publications?q=${encodeURIComponent(target.word)}&kind=service&limit=20`)).json() as {
        items: Array<{ approved: { title: string } }>
      }
      expect(shown).toEqual(api.items.map((p) => p.approved.title))
      expect(shown).toContain(target.title)

      await tab.locator(`#p-${target.uuid} a`).click()
      await tab.waitForURL(`${origin}/p/${target.uuid}?lang=${language}`)
      expect(await tab.getByRole("heading", { level: 1 }).textContent()).toBe(target.title)
      expect(await tab.locator("dl.facts dt").first().textContent()).toBe(t.price)
      // Every picture is the file's bytes, loaded and decoded.
      const pictures = tab.locator(".gallery img")
      expect(await pictures.count()).toBeGreaterThanOrEqual(2)
      for (const picture of await pictures.all()) {
        await picture.scrollIntoViewIfNeeded()
        await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
      }
      expect(await tab.locator("#author").textContent()).toBe(target.ownerName)
      await tab.locator("#author").click()
      await tab.waitForURL(`${origin}/u/${target.owner}?lang=${language}`)
      expect(await tab.getByRole("heading", { level: 1 }).textContent()).toBe(target.ownerName)
      expect(await tab.locator("section[aria-labelledby=own] h3").allTextContents()).toContain(target.title)
      expect(await tab.getByRole("heading", { name: t.reviews }).count()).toBe(1)
      expect(await tab.locator(".reviews").textContent()).toContain(customerName)
      expect(await tab.getByRole("img", { name: t.rated, exact: true }).count()).toBe(1)
      // Hydrated without a mismatch or a failing script, with the messages of its language alone.
      await hydrated()
      expect(errors).toEqual([])
      expect([...messages]).toEqual([language])
      await context.close()
    }))
  })

  it("shows who is signed in in the header of every page, and the account page passes axe-core", async () => {
    const context = await browser.newContext()
    const tab = await context.newPage()
    const email = `web.header.${Date.now()}@example.com`
    await signInThroughPage(tab, { origin, db, email })
    await tab.goto(`${origin}/catalog?lang=en`)
    const name = (await db.query<{ name: string }>(
      "SELECT p.name FROM profiles p JOIN accounts a ON a.uuid = p.account_uuid WHERE a.email = $1", [email]
    )).rows[0]!.name
    expect(await tab.locator("#session").textContent()).toBe(`Signed in as ${name}`)
    expect(await tab.locator("#session").getAttribute("href")).toBe("/account?lang=en")
    // The account page, signed in: axe-core at both widths and languages, and its screenshots.
    for (const language of ["ru", "en"] as const) {
      for (const width of [1280, 390]) {
        await tab.setViewportSize({ width, height: 900 })
        await tab.goto(`${origin}/account?lang=${language}`)
        await tab.waitForLoadState("networkidle")
        expect(await tab.locator("#signed-in-email").textContent()).toBe(email)
        expect(await tab.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `account ${language} ${width}`).toBe(true)
        expect(await axeViolations(tab), `account ${language} ${width}`).toEqual([])
        await screenshot(tab, `${shots}/account-${language}-${width}`)
      }
    }
    await context.close()
  })

  it("passes axe-core (no serious or critical violation) and is usable at 1280 and 390 px, in both languages", async () => {
    const paths: ReadonlyArray<readonly [string, string]> = [
      ["home", "/"],
      ["catalog", "/catalog"],
      ["publication", `/p/${target.uuid}`],
      ["profile", `/u/${target.owner}`],
      ["sign-in", "/sign-in"],
      ["link", `/auth/link#challenge=${randomUUID()}&token=${"a".repeat(43)}`],
      ["not-found", "/favorites"]
    ]
    const runs = (["ru", "en"] as const).flatMap((language) => [1280, 390].map((width) => ({ language, width })))
    await Promise.all(runs.map(async ({ language, width }) => {
      const context = await browser.newContext({ viewport: { width, height: 900 }, locale: language === "ru" ? "ru-RU" : "en-GB" })
      const tab = await context.newPage()
      for (const [name, path] of paths) {
        const [pathname, hash] = path.split("#")
        await tab.goto(`${origin}${pathname}?lang=${language}${hash === undefined ? "" : `#${hash}`}`)
        await tab.waitForLoadState("networkidle")
        // The page fits the width: nothing scrolls sideways.
        expect(await tab.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} ${language} ${width}`).toBe(true)
        expect(await axeViolations(tab), `${name} ${language} ${width}`).toEqual([])
        await screenshot(tab, `${shots}/${name}-${language}-${width}`)
        await screenshot(tab, `${shots}/${name}-${language}-${width}-top`, { fullPage: false })
      }
      // Keyboard: the first Tab reaches the skip link, visibly focused, and it leads to the content.
      await tab.goto(`${origin}/catalog?lang=${language}`)
      await tab.keyboard.press("Tab")
      expect(await tab.evaluate(() => document.activeElement?.getAttribute("href"))).toBe("#main")
      expect(await tab.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe("none")
      await context.close()
    }))
  })
})
