import { fanOutAutomations } from "@birzha/domain/internal"
import { sequencePending } from "@birzha/worker-host/internal"
import { Effect, ManagedRuntime } from "effect"
import { readFileSync } from "node:fs"
import type Pg from "pg"
import type { SqlClient } from "@effect/sql"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, expect, type ExpectStatic } from "vitest"
import { axeViolations, launchChromium, screenshot } from "../../../../testing/browser.js"
import { startTestService, type TestService } from "../testService.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

// What the journeys through the web application's pages share (WebTaskJourney.test.ts,
// WebProfileSettings.test.ts, …): people signed in, each in their own browser
// context, and the check every page passes (axe-core, widths, languages, keyboard).

/**
 * Waits for what a page shows after a command (it loads itself again): a liveness bound only, as
 * generous as the journeys' other waits (a machine running a second copy of the suite only waits
 * longer).
 */
export const poll: <T>(read: () => Promise<T>) => ReturnType<ExpectStatic["poll"]> = (read) => expect.poll(read, { timeout: 90_000 })

export interface Person {
  readonly context: BrowserContext
  readonly tab: Page
  readonly errors: Array<string>
}

const english = JSON.parse(readFileSync(new URL("../../../web/src/translations/en.json", import.meta.url), "utf8")) as Record<string, string>
const russian = JSON.parse(readFileSync(new URL("../../../web/src/translations/ru.json", import.meta.url), "utf8")) as Record<string, string>
/** The English catalog's words a Russian page must not show (each differing message's longest fixed part). */
const englishWords = Object.entries(english)
  .filter(([key, message]) => message !== russian[key])
  .map(([, message]) => message.split(/\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}/).map((part) => part.trim()).sort((x, y) => y.length - x.length)[0] ?? "")
  .filter((part) => part.length >= 5 && !/^[@\w/().-]*\(@birzha\/client\)$/.test(part))

/**
 * A journey's browser and service: `person` signs someone in, in a
 * context of their own (an address of their own, so sign-in limits do not meet), `checkPage`
 * checks a page and takes its screenshots into the folder `shots` (when `BIRZHA_SCREENSHOTS` is set:
 * testing/browser.ts's `screenshot`).
 */
export const journey = (options: { readonly browser: Browser; readonly origin: string; readonly db: Pg.Client; readonly shots: string; readonly subnet: number }) => {
  const { browser, origin, db, shots } = options
  let ip = 0

  /**
   * Someone signed in, in a browser context of their own, with an empty tab. The sign-in is the
   * API's (`auth.email.start`, the mailed code, `auth.email.verify`) sent by the context's own
   * request client, so the session cookie lands in the context's cookie jar without a page load:
   * the sign-in page has its own tests (WebPages.test.ts, IntegrationCommandsHandlers.test.ts);
   * a journey's pages start after it.
   */
  const person = async (email: string): Promise<Person> => {
    const context = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": `198.51.${options.subnet}.${++ip}` }, locale: "en-GB" })
    const tab = await context.newPage()
    const errors: Array<string> = []
    tab.on("pageerror", (error) => errors.push(error.message))
    const headers = { origin }
    const started = await context.request.post(`${origin}/api/v1/auth/email/start`, { headers, data: { email } })
    expect(started.status(), await started.text()).toBe(200)
    const { challengeUuid } = (await started.json()) as { challengeUuid: string }
    const { rows } = await db.query<{ text_body: string }>(
      "SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1",
      [email]
    )
    const verified = await context.request.post(`${origin}/api/v1/auth/email/verify`, {
      headers,
      data: { challengeUuid, code: rows[0]!.text_body.match(/\b(\d{6})\b/)![1]! }
    })
    expect(verified.status(), await verified.text()).toBe(200)
    expect((await context.cookies(origin)).map((cookie) => cookie.name)).toContain("__Host-birzha_session")
    return { context, tab, errors }
  }

  /**
   * The page at `path` as it is now, in both languages at 1280 and 390 px: nothing scrolling
   * sideways, no serious or critical axe-core violation, no English on the Russian page;
   * screenshots. axe-core runs at both widths in Russian and at the narrow one in English: the two
   * languages are the same elements with other words (a control's name, the page's language are
   * checked in each), the two widths show and hide different ones.
   */
  const checkPage = async (tab: Page, name: string, path: string) => {
    // One load per language: the server's HTML does not depend on the width, so the other width
    // is the same page resized (its layout and what axe-core sees follow the viewport).
    for (const [language, widths] of [["ru", [1280, 390]], ["en", [390, 1280]]] as const) {
      for (const [at, width] of widths.entries()) {
        await tab.setViewportSize({ width, height: 900 })
        if (at === 0) {
          await tab.goto(`${origin}${path}${path.includes("?") ? "&" : "?"}lang=${language}`)
          await tab.waitForLoadState("networkidle")
        } else {
          // The resized layout is laid out by the next frame.
          await tab.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))))
        }
        expect(await tab.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} ${language} ${width}`).toBe(true)
        if (language === "ru" || at === 0) expect(await axeViolations(tab), `${name} ${language} ${width}`).toEqual([])
        if (language === "ru") {
          const text = await tab.evaluate(() => `${document.querySelector("header")?.textContent ?? ""} ${document.querySelector("main")?.innerText ?? ""}`)
          expect(englishWords.filter((words) => text.includes(words)), `${name}: English on the Russian page`).toEqual([])
        }
        await screenshot(tab, `${shots}/${name}-${language}-${width}`)
      }
    }
    // Keyboard: Tab reaches every visible control of the page's content in turn (a radio group
    // once, at its checked radio), each visibly focused.
    const controlsOf = () =>
      [...document.querySelectorAll<HTMLElement>("main :is(a[href], button:not([disabled]), input:not([disabled]), select, textarea, summary)")]
        .filter((element) => element.checkVisibility() && !(element instanceof HTMLInputElement && element.type === "radio" && !element.checked))
    const controls = await tab.evaluate(`(${controlsOf.toString()})().length`) as number
    expect(controls, `${name}: controls in the content`).toBeGreaterThan(0)
    await tab.locator("#main").focus()
    // What each Tab focuses is recorded by the page as it happens (its place among the controls,
    // whether its outline shows), and read after a batch of presses.
    await tab.evaluate(`(() => {
      const focused = []
      window.__focused = focused
      document.addEventListener("focusin", (event) => {
        const element = event.target
        if (!(element instanceof HTMLElement) || element.closest("main") === null) return
        const style = getComputedStyle(element)
        focused.push({ at: (${controlsOf.toString()})().indexOf(element), tag: element.tagName, visible: style.outlineStyle !== "none" && style.outlineWidth !== "0px" })
      })
    })()`)
    const reached = new Set<number>()
    // A date field takes a Tab stop per part (day, month, year), so the presses may outnumber the controls.
    for (let pressed = 0; pressed < controls * 3 + 5 && reached.size < controls;) {
      const batch = Math.min(controls - reached.size, controls * 3 + 5 - pressed)
      for (let i = 0; i < batch; i++) await tab.keyboard.press("Tab")
      pressed += batch
      const focused = await tab.evaluate("window.__focused.splice(0)") as Array<{ at: number; tag: string; visible: boolean }>
      for (const { at, tag, visible } of focused) {
        expect(visible, `${name}: ${tag} ${at} focused without a visible outline`).toBe(true)
        reached.add(at)
      }
    }
    expect(reached.size, `${name}: controls reached by Tab`).toBe(controls)
    await tab.setViewportSize({ width: 1280, height: 900 })
  }

  return { person, checkPage }
}

export interface JourneyWorld extends ReturnType<typeof journey> {
  readonly service: TestService
  readonly db: Pg.Client
  readonly origin: string
  readonly browser: Browser
}

/**
 * A journey file's world, opened before its tests and closed after them: its own service on
 * Postgres (`moderators` granted at start), one Chromium, and `journey`'s helpers. Read its fields
 * inside a test, once `beforeAll` has run.
 */
export const openJourney = (options: {
  readonly label: string
  readonly moderators?: ReadonlyArray<string>
  /** Addresses granted the operator role at start (`BIRZHA_OPERATORS`). */
  readonly operators?: ReadonlyArray<string>
  readonly shots: string
  readonly subnet: number
}): JourneyWorld => {
  const world = {} as { -readonly [K in keyof JourneyWorld]: JourneyWorld[K] }
  beforeAll(async () => {
    const service = await startTestService(options.label, {
      env: {
        BIRZHA_SECRET: `${options.label} journey tests: a server secret of 32+ characters`,
        ...(options.moderators === undefined ? {} : { BIRZHA_MODERATORS: options.moderators.join(",") }),
        ...(options.operators === undefined ? {} : { BIRZHA_OPERATORS: options.operators.join(",") })
      },
      trustProxy: true
    })
    const browser = await launchChromium()
    Object.assign(world, { service, db: service.db, origin: service.origin, browser }, journey({ browser, origin: service.origin, db: service.db, shots: options.shots, subnet: options.subnet }))
  })
  afterAll(async () => {
    await world.browser?.close()
    await world.service?.close()
  })
  return world
}

/**
 * A worker's event steps for a journey whose service runs none: each call numbers the events the
 * pages' commands wrote and fans them out to the automation rules (notifications included), until
 * nothing is left. Its database connections close after the file's tests.
 */
export const eventWorker = (world: JourneyWorld): () => Promise<void> => {
  let worker: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown> | undefined
  afterAll(async () => {
    await worker?.dispose()
  })
  return async () => {
    worker ??= ManagedRuntime.make(testPgLayer(world.service.database.url, 2))
    await worker.runPromise(Effect.gen(function*() {
      for (;;) {
        const sequenced = yield* sequencePending(1000)
        const { covered } = yield* fanOutAutomations
        if (sequenced === 0 && covered === 0) return
      }
    }))
  }
}
