import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestService, type TestService } from "../testService.js"

// The operator's theme (BIRZHA_WEB_THEME): the web application's name, logo and colours.

let service: TestService
const dir = mkdtempSync(join(tmpdir(), "birzha-theme-"))

beforeAll(async () => {
  const file = join(dir, "theme.json")
  writeFileSync(file, JSON.stringify({
    name: { ru: "Ярмарка", en: "Yarmarka" },
    logoUrl: "https://cdn.example.com/yarmarka.svg",
    // A malformed colour (CSS that would break out of its rule) keeps its default; the rest apply.
    colors: { primary: "#0f766e", text: "red; } body { display: none" }
  }))
  service = await startTestService("web_theme", { env: { BIRZHA_WEB_THEME: file } })
})
afterAll(async () => {
  await service?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("the web application's theme", () => {
  it("takes the operator's name, logo and colours, and keeps the default of a malformed entry", async () => {
    const ru = await (await fetch(`${service.host.url}/?lang=ru`)).text()
    expect(ru).toContain("<title>Ярмарка: задачи, услуги и специалисты</title>")
    expect(ru).toContain('<img src="https://cdn.example.com/yarmarka.svg" alt="" width="32" height="32"/><span>Ярмарка</span>')
    const en = await (await fetch(`${service.host.url}/sign-in?lang=en`)).text()
    expect(en).toContain("<title>Sign in · Yarmarka</title>")
    const css = await (await fetch(`${service.host.url}/app/theme.css`)).text()
    expect(css).toContain("--primary: #0f766e;")
    expect(css).toContain("--text: #1a1d23;")
    expect(css).not.toContain("display: none")
  })
})
