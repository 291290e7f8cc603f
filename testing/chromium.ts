import type { LaunchOptions } from "playwright-core"

/** Debian's Chromium (or `BIRZHA_CHROMIUM`), headless, with the flags every page test uses. */
export const chromiumOptions: LaunchOptions = {
  executablePath: process.env["BIRZHA_CHROMIUM"] ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
    // The tests' pages come from one site: one renderer process per site, without a process per
    // cross-site frame, spends less of the machine per page load (same-origin rules are unchanged).
    "--disable-site-isolation-trials", "--disable-features=site-per-process,IsolateOrigins", "--process-per-site",
    // V8 without its optimizing compiler: a test's page lives for seconds, too short for TurboFan's
    // background compilations to pay for themselves. Chromium spent about 8 % less CPU over signed-in
    // page loads that run a command and axe-core (docs/decisions.md, "The suite's CPU").
    "--js-flags=--no-opt"
  ]
}
