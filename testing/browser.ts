import type Pg from "pg"
import { chromium, type Page } from "playwright-core"

/** Debian's Chromium (or `BIRZHA_CHROMIUM`), headless, with the flags every page test uses. */
export const launchChromium = () =>
  chromium.launch({
    executablePath: process.env["BIRZHA_CHROMIUM"] ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })

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
