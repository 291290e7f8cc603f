import { randomUUID } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { Client, StreamableHTTPClientTransport } from "../testMcp.js"
import { sdkProvider } from "../testOAuth.js"
import { openJourney } from "./webJourney.js"

// MCP authorization end to end in real headless Chromium: the official SDK client's OAuth flow
// against the running host (discovery from the 401, registration, the consent page, the token),
// then tools, the approval flow and disconnecting. The protocol's refusals are OAuth.test.ts.

const world = openJourney({ label: "web_oauth", shots: "web-oauth", subnet: 142 })

/** The agent's redirect listener on loopback: it answers a plain page and hands over the code. */
let callback: Server
let callbackUrl = ""
const codes: Array<(code: string) => void> = []
beforeAll(async () => {
  callback = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    res.writeHead(200, { "content-type": "text/plain" }).end("You can close this window.")
    const code = url.searchParams.get("code")
    if (url.pathname === "/callback" && code !== null) codes.shift()?.(code)
  })
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve))
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`
})
afterAll(async () => {
  await new Promise<void>((resolve) => callback.close(() => resolve()))
})

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  JSON.parse((result.content as ReadonlyArray<{ text?: string }>)[0]?.text ?? "null") as Record<string, any>

describe("an agent signs in with the official SDK's OAuth client", { timeout: 900_000 }, () => {
  it("discovers, registers, the person signs in and allows on the consent page, the agent lists and runs tools, an approval goes through, disconnecting stops it", async () => {
    const email = `oauth.agent.${Date.now()}@example.com`
    const context = await world.browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": "198.51.142.200" }, locale: "en-GB" })
    context.setDefaultTimeout(90_000)
    const tab = await context.newPage()
    const errors: Array<string> = []
    tab.on("pageerror", (error) => errors.push(error.message))

    // The browser opens the authorization URL the SDK made; the person, signed out, signs in first.
    const consent = async (url: URL) => {
      const code = new Promise<string>((resolve) => codes.push(resolve))
      await tab.goto(url.toString())
      await tab.waitForURL(/\/sign-in\?/)
      await tab.getByLabel("Email", { exact: true }).fill(email)
      await tab.getByRole("button", { name: "Send me a code" }).click()
      await tab.getByLabel("Code from the email (6 digits)").waitFor()
      const { rows } = await world.db.query<{ text_body: string }>(
        "SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1", [email])
      await tab.getByLabel("Code from the email (6 digits)").fill(rows[0]!.text_body.match(/\b(\d{6})\b/)![1]!)
      await tab.getByRole("button", { name: "Sign in", exact: true }).click()
      // Back on the consent page after signing in.
      await tab.waitForURL(/\/oauth\/consent\/[0-9a-f-]{36}/)
      await tab.locator("#oauth-allow:not([disabled])").waitFor()
      expect(await tab.locator("#oauth-client-name").textContent()).toBe("SDK agent")
      expect(await tab.locator("#oauth-redirect").textContent()).toBe(new URL(callbackUrl).origin)
      expect(await tab.locator("#oauth-account").textContent()).toBe(email)
      expect(await tab.locator("[data-scope='tasks:submit']").count()).toBe(1)
      await screenshot(tab, "web-oauth/consent-flow")
      await tab.locator("#oauth-allow").click()
      await tab.waitForURL((at) => at.toString().startsWith(callbackUrl))
      return code
    }
    const sdk = sdkProvider(callbackUrl, consent)
    const serverUrl = new URL(`${world.origin}/mcp`)
    const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: sdk.provider })
    await expect(new Client({ name: "agent", version: "1" }).connect(first)).rejects.toThrow(/Unauthorized/)
    await first.finishAuth(await sdk.code())
    expect(sdk.tokens()?.access_token).toMatch(/^birzha_at_/)

    const client = new Client({ name: "agent", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: sdk.provider }))
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(["get_my_capabilities", "tasks_save", "tasks_submit", "integration_commands_commit"]))
    const own = await client.callTool({ name: "get_my_capabilities", arguments: {} })
    expect(own.isError ?? false, JSON.stringify(own)).toBe(false)

    // A write that needs approval: prepared with the absolute approval URL; the person approves on its page; the commit runs.
    const saved = await client.callTool({
      name: "tasks_save",
      arguments: { requestUuid: randomUUID(), data: { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] } }
    })
    expect(saved.isError ?? false, JSON.stringify(saved)).toBe(false)
    const task = textOf(saved)
    const prepared = await client.callTool({ name: "tasks_submit", arguments: { publicationUuid: task["uuid"], expectedRevision: task["revision"] } })
    const command = textOf(prepared)["command"]
    expect(command.approvalUrl).toBe(`${world.origin}/approvals/${command.uuid}`)
    await tab.goto(`${command.approvalUrl}?lang=en`)
    await tab.locator("#approve:not([disabled])").click()
    await tab.locator("#command-state[data-state='approved']").waitFor()
    const committed = await client.callTool({ name: "integration_commands_commit", arguments: { uuid: command.uuid } })
    expect(committed.isError ?? false, JSON.stringify(committed)).toBe(false)
    expect(textOf(committed)["command"].state).toBe("committed")

    // The connected agents page lists it; disconnecting it there makes the agent's next call 401.
    await world.checkPage(tab, "agents", "/settings/agents")
    await tab.goto(`${world.origin}/settings/agents?lang=en`)
    expect(await tab.locator("#oauth-agents h2").first().textContent()).toBe("SDK agent")
    await tab.getByRole("button", { name: "Disconnect the agent SDK agent" }).click()
    await tab.locator(".agent-revoked").waitFor()
    const after = await fetch(`${world.service.host.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${sdk.tokens()!.access_token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
    })
    expect(after.status).toBe(401)
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"')
    expect(errors).toEqual([])
    await client.close().catch(() => undefined)
    await context.close()
  })

  it("the consent page passes axe-core in both languages at both widths and says in Russian who asks for what", async () => {
    const person = await world.person(`oauth.consent.${Date.now()}@example.com`)
    const registered = await fetch(`${world.service.host.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Помощник", redirect_uris: ["http://127.0.0.1:9/cb"] })
    })
    const clientId = ((await registered.json()) as { client_id: string }).client_id
    const started = await fetch(`${world.service.host.url}/oauth/authorize?${new URLSearchParams({
      response_type: "code", client_id: clientId, redirect_uri: "http://127.0.0.1:9/cb", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256", state: "s", scope: "profiles:read tasks:read tasks:write"
    })}`, { redirect: "manual" })
    const path = new URL(started.headers.get("location")!).pathname
    // Signed out, the page sends to sign-in and back.
    const anonymous = await fetch(`${world.service.host.url}${path}?lang=en`, { redirect: "manual" })
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get("location")).toBe(`/sign-in?lang=en&next=${encodeURIComponent(`${path}?lang=en`)}`)
    await world.checkPage(person.tab, "consent", path)
    await person.tab.goto(`${world.origin}${path}?lang=ru`)
    expect(await person.tab.locator("h1").textContent()).toBe("Разрешить агенту Помощник действовать от вашего имени?")
    expect(await person.tab.getByRole("button", { name: "Разрешить доступ" }).count()).toBe(1)
    // Opening the page decided nothing.
    expect((await world.db.query("SELECT decision FROM oauth_requests WHERE uuid = $1", [path.split("/").at(-1)])).rows[0].decision).toBeNull()
    await world.checkPage(person.tab, "agents-empty", "/settings/agents")
    expect(person.errors).toEqual([])
    await person.context.close()
  })
})
