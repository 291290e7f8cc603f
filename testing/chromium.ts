import { existsSync } from "node:fs"
import type { LaunchOptions } from "playwright-core"

/**
 * The Chromium page tests drive: `BIRZHA_CHROMIUM` when set; else Debian's headless shell
 * (`chromium-headless-shell`, which `.ci/run` installs beside `chromium`): the same Chromium built
 * without the desktop browser's layers, which spent 417 ms of CPU per page load where
 * `chromium --headless` spent 1,141, and 1.0 s where it spent 1.9 with axe-core's run
 * (docs/test-suite.md, "Page tests run Chromium's headless shell"); else Debian's `chromium`.
 */
const executablePath = process.env["BIRZHA_CHROMIUM"] ?? ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].find((path) => existsSync(path)) ?? "/usr/bin/chromium"

/** Headless Chromium (see `executablePath`) with the flags every page test uses. */
export const chromiumOptions: LaunchOptions = {
  executablePath,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
    // A context made without a locale asks for English pages, as the desktop browser does from the
    // machine's language (the headless shell sends no Accept-Language of its own).
    "--accept-lang=en-US,en",
    // The tests' pages come from one site: one renderer process per site, without a process per
    // cross-site frame, spends less of the machine per page load (same-origin rules are unchanged).
    "--disable-site-isolation-trials", "--disable-features=site-per-process,IsolateOrigins", "--process-per-site",
    // V8 without its optimizing compiler: a test's page lives for seconds, too short for TurboFan's
    // background compilations to pay for themselves. Chromium spent about 8 % less CPU over signed-in
    // page loads that run a command and axe-core (docs/test-suite.md, "The suite's CPU: the browser's client, …").
    "--js-flags=--no-opt"
  ]
}
