import type { LaunchOptions } from "playwright-core"

/** Debian's Chromium (or `BIRZHA_CHROMIUM`), headless, with the flags every page test uses. */
export const chromiumOptions: LaunchOptions = {
  executablePath: process.env["BIRZHA_CHROMIUM"] ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
}
