import { mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type Pg from "pg"
import { type Browser, chromium, type Page } from "playwright-core"
import { inject } from "vitest"
import { chromiumOptions } from "./chromium.js"
import "./provided.js"

/**
 * The run's one Chromium (started by testing/globalSetup.ts when the machine has it), which
 * every test file connects to and works in with contexts of its own; closing the returned
 * browser disconnects this file only. Outside such a run (a bench, a script) a Chromium of its own.
 */
export const launchChromium = async (): Promise<Browser> => {
  const endpoint = inject("chromiumEndpoint")
  return generous(endpoint === undefined ? await chromium.launch(chromiumOptions) : await chromium.connect(endpoint))
}

/**
 * How long a page action or navigation may take before a test fails: a liveness bound, not a speed
 * limit (Playwright's own 30 s is exceeded by a page load on a machine running two suites at once).
 */
export const pageActionTimeoutMs = 90_000

/** The browser whose every new context waits `pageActionTimeoutMs` by default. */
const generous = (browser: Browser): Browser => {
  const newContext = browser.newContext.bind(browser)
  browser.newContext = async (options) => {
    const context = await newContext(options)
    context.setDefaultTimeout(pageActionTimeoutMs)
    return context
  }
  return browser
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/**
 * axe-core's serious and critical violations on the page as it is now, as `rule: targets`. Its
 * source is run through the debugging protocol (the pages' CSP allows no inline script), once per
 * document. Rules whose every finding is moderate or minor (axe-core fixes a rule's impact when it
 * declares one) are not run: they could not report what is looked for here.
 */
export const axeViolations = async (tab: Page): Promise<Array<string>> => {
  if (!(await tab.evaluate(() => "axe" in window))) await tab.evaluate(axeSource)
  return tab.evaluate(async () => {
    type Rule = { readonly id: string; readonly impact?: string | null }
    type Violation = { readonly id: string; readonly impact: string; readonly nodes: Array<{ readonly target: Array<string> }> }
    const axe = (window as unknown as {
      axe: {
        _audit: { rules: Array<Rule> }
        run: (context: Document, options: object) => Promise<{ violations: Array<Violation> }>
      }
    }).axe
    const lesser = axe._audit.rules.filter((rule) => rule.impact === "moderate" || rule.impact === "minor")
    const result = await axe.run(document, { rules: Object.fromEntries(lesser.map((rule) => [rule.id, { enabled: false }])), resultTypes: ["violations"] })
    return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
  })
}

/**
 * A screenshot of the page (the whole page unless `fullPage: false`), written to
 * `$BIRZHA_SCREENSHOTS/<name>.png` when that variable names a directory: pictures to look at, not
 * evidence a test asserts on, so a run without the variable spends nothing on them.
 */
export const screenshot = async (tab: Page, name: string, options: { readonly fullPage?: boolean } = {}): Promise<void> => {
  const directory = process.env["BIRZHA_SCREENSHOTS"]
  if (directory === undefined || directory === "") return
  const path = join(directory, `${name}.png`)
  mkdirSync(dirname(path), { recursive: true })
  await tab.screenshot({ path, fullPage: options.fullPage ?? true })
}

/**
 * Signs in through the service's real sign-in page in `tab` (the code read from the development
 * mailbox through `db`), so the browser holds the session cookie; ends on /account (or `until`).
 */
export const signInThroughPage = async (
  tab: Page,
  options: {
    readonly origin: string
    readonly db: Pg.Client
    readonly email: string
    /** Where to start (a page that sends to sign-in, in English); the sign-in page by default. */
    readonly from?: string
    /** Where signing in lands; the account page by default. */
    readonly until?: string
  }
): Promise<void> => {
  await tab.goto(options.from ?? `${options.origin}/sign-in?lang=en`)
  await tab.getByLabel("Email", { exact: true }).fill(options.email)
  await tab.getByRole("button", { name: "Send me a code" }).click()
  await tab.getByLabel("Code from the email (6 digits)").waitFor()
  const { rows } = await options.db.query<{ text_body: string }>(
    "SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1",
    [options.email]
  )
  await tab.getByLabel("Code from the email (6 digits)").fill(rows[0]!.text_body.match(/\b(\d{6})\b/)![1]!)
  await tab.getByRole("button", { name: "Sign in", exact: true }).click()
  await tab.waitForURL(options.until ?? `${options.origin}/account`)
}
