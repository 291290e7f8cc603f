import { randomUUID } from "node:crypto"
import Pg from "pg"
import type { Browser, BrowserContext } from "playwright-core"
import { launchChromium, signInThroughPage } from "../../../../testing/browser.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningHost } from "../testing.js"
import { type Caller, startTestService, type TestService } from "../testService.js"


let service: TestService
let host: RunningHost
let db: Pg.Client
let origin: string
let browser: Browser

beforeAll(async () => {
  service = await startTestService("integration_commands", { env: { BIRZHA_SECRET: "integration command tests: a server secret of 32+ characters" }, trustProxy: true })
  ;({ host, db, origin } = service)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await service?.close()
})

interface Owner {
  readonly context: BrowserContext
  readonly cookie: string
}

let ip = 0
/** Signs in through the real sign-in page, so the browser holds the owner's session. */
const signInBrowser = async (): Promise<Owner> => {
  const email = `owner-${randomUUID()}@example.com`
  const context = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": `198.51.100.${++ip}` } })
  const tab = await context.newPage()
  await signInThroughPage(tab, { origin, db, email })
  await tab.close()
  const session = (await context.cookies()).find((c) => c.name === "__Host-birzha_session")!
  return { context, cookie: `${session.name}=${session.value}` }
}

const call = (method: string, path: string, who: Caller, body?: unknown) => service.call<Record<string, any>>(method, path, who, body)

const makeKey = async (owner: Owner, scopes: ReadonlyArray<string>) => {
  const made = await call("POST", "/api/v1/keys", owner, { requestUuid: randomUUID(), name: "agent", scopes, httpEnabled: true, mcpEnabled: false })
  expect(made.status, JSON.stringify(made.body)).toBe(200)
  return { uuid: made.body.key.uuid as string, secret: made.body.secret as string }
}

const saveTask = async (owner: Owner) => {
  const saved = await call("POST", "/api/v1/commands/tasks.save", owner, {
    requestUuid: randomUUID(),
    data: { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
  })
  expect(saved.status, JSON.stringify(saved.body)).toBe(200)
  return { uuid: saved.body.uuid as string, revision: saved.body.revision as number }
}

const revisionOf = async (uuid: string) =>
  (await db.query<{ revision: number }>("SELECT revision FROM publications WHERE uuid = $1", [uuid])).rows[0]!.revision

const prepare = (bearer: string, operationId: string, args: Record<string, unknown>) =>
  call("POST", "/api/v1/integration-commands/prepare", { bearer }, { operationId, arguments: args })

const commit = (bearer: string, uuid: string, body?: unknown) =>
  call("POST", `/api/v1/integration-commands/${uuid}/commit`, { bearer }, body)

/** The owner opens the approval URL in Chromium and presses a button. */
const decide = async (owner: Owner, approvalUrl: string, button: "Approve" | "Deny", expected: { readonly operationId: string; readonly args: Record<string, unknown> }) => {
  const tab = await owner.context.newPage()
  await tab.goto(`${approvalUrl}?lang=en`)
  expect(await tab.locator("#operation-id").textContent()).toBe(expected.operationId)
  expect(await tab.locator("#command-state").getAttribute("data-state")).toBe("pending")
  expect(JSON.parse((await tab.locator("#raw-arguments").textContent())!)).toEqual(expected.args)
  for (const [name, value] of Object.entries(expected.args)) {
    expect(await tab.locator("#parameters").textContent()).toContain(name)
    expect(await tab.locator("#parameters").textContent()).toContain(typeof value === "string" ? value : JSON.stringify(value))
  }
  // The decision buttons come before the parameters: what is seen first.
  const order = await tab.evaluate(() => {
    const approve = document.getElementById("approve")!
    const parameters = document.getElementById("parameters")!
    return approve.compareDocumentPosition(parameters) & Node.DOCUMENT_POSITION_FOLLOWING
  })
  expect(order).toBeTruthy()
  await tab.getByRole("button", { name: button, exact: true }).click()
  await tab.locator("#command-state:not([data-state=pending])").waitFor()
  const state = await tab.locator("#command-state").getAttribute("data-state")
  await tab.close()
  return state
}

describe("the approval flow for bearer clients", () => {
  it("prepare → the owner approves in the browser → commit runs the operation once; a repeated commit answers the same result", async () => {
    const owner = await signInBrowser()
    const key = await makeKey(owner, ["tasks:submit"])
    const task = await saveTask(owner)

    const direct = await call("POST", "/api/v1/commands/tasks.submit", { bearer: key.secret }, {
      requestUuid: randomUUID(), publicationUuid: task.uuid, expectedRevision: task.revision
    })
    expect(direct.status).toBe(403)
    expect(direct.body.error.code).toBe("approval_required")

    const prepared = await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: task.revision })
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200)
    const command = prepared.body.command
    expect(command.operationId).toBe("tasks.submit")
    expect(command.state).toBe("pending")
    expect(command.approvalUrl).toBe(`${origin}/approvals/${command.uuid}`)
    const expiresIn = Date.parse(command.expiresAt) - Date.now()
    expect(expiresIn).toBeGreaterThan(59 * 60_000)
    expect(expiresIn).toBeLessThanOrEqual(60 * 60_000)
    // The server fixed requestUuid; the client's fields are exactly as sent.
    expect(command.arguments.publicationUuid).toBe(task.uuid)
    expect(command.arguments.requestUuid).toMatch(/^[0-9a-f-]{36}$/)

    const early = await commit(key.secret, command.uuid, { confirmed: true })
    expect(early.status).toBe(409)
    expect(early.body.error.code).toBe("approval_pending")
    expect(await revisionOf(task.uuid)).toBe(task.revision)

    expect(await decide(owner, command.approvalUrl, "Approve", { operationId: "tasks.submit", args: command.arguments })).toBe("approved")

    const first = await commit(key.secret, command.uuid)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.command.state).toBe("committed")
    expect(first.body.command.result.status).toBe(200)
    expect(first.body.command.result.body.uuid).toBe(task.uuid)
    const afterFirst = await revisionOf(task.uuid)
    expect(afterFirst).toBe(task.revision + 1)

    const second = await commit(key.secret, command.uuid)
    expect(second.status).toBe(200)
    expect(second.body.command.result).toEqual(first.body.command.result)
    expect(await revisionOf(task.uuid)).toBe(afterFirst)
    await owner.context.close()
  })

  it("the approval page shows a command to the key's own account only, under a strict CSP; deciding needs the service's own origin", async () => {
    const owner = await signInBrowser()
    const stranger = await signInBrowser()
    const key = await makeKey(owner, ["tasks:submit"])
    const task = await saveTask(owner)
    const command = (await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: task.revision })).body.command
    const path = `/approvals/${command.uuid}`
    const get = (cookie?: string) => fetch(`${host.url}${path}?lang=ru`, { redirect: "manual", headers: cookie === undefined ? {} : { cookie } })
    expect((await get()).status).toBe(303)
    expect((await get(stranger.cookie)).status).toBe(404)
    const shown = await get(owner.cookie)
    expect(shown.status).toBe(200)
    const policy = shown.headers.get("content-security-policy") ?? ""
    for (const part of ["default-src 'none'", "script-src 'self'", "form-action 'self'", "frame-ancestors 'none'"]) expect(policy).toContain(part)
    expect(shown.headers.get("cache-control")).toBe("no-store")
    const html = await shown.text()
    expect(html).toContain("Подтвердить")
    expect(html).toContain(task.uuid)
    // The page decides through the API, which takes a session's change only from the service's own origin.
    const decide = (cookie: string, headers: Record<string, string>) =>
      fetch(`${host.url}/api/v1/integration-commands/${command.uuid}/decide`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie, ...headers },
        body: JSON.stringify({ decision: "approve" })
      })
    expect((await decide(owner.cookie, { origin: "https://evil.example" })).status).toBe(403)
    expect((await decide(owner.cookie, {})).status).toBe(403)
    expect((await decide(stranger.cookie, { origin })).status).toBe(404)
    // A key never decides: the owner's operations are for a browser session only.
    expect((await call("POST", `/api/v1/integration-commands/${command.uuid}/decide`, { bearer: key.secret }, { decision: "approve" })).status).toBe(403)
    // Nor does a page opened by GET, nor a form posted to the page's address.
    expect((await fetch(`${host.url}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: owner.cookie, origin }, body: "decision=approve" })).status).toBe(405)
    const state = async () => (await db.query("SELECT state FROM integration_commands WHERE uuid = $1", [command.uuid])).rows[0].state
    expect(await state()).toBe("pending")
    const decided = await decide(owner.cookie, { origin })
    expect(decided.status).toBe(200)
    expect(((await decided.json()) as { command: { state: string } }).command.state).toBe("approved")
    expect(await state()).toBe("approved")
    await owner.context.close()
    await stranger.context.close()
  })

  it("a webhook secret returned through commit is kept sealed in the stored command and answered again to the same key", async () => {
    const owner = await signInBrowser()
    const key = await makeKey(owner, ["webhooks:write"])
    const args = { url: "https://example.com/birzha-hook", eventTypes: ["publication.*"] }
    const prepared = await prepare(key.secret, "webhooks.create", args)
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200)
    const command = prepared.body.command
    expect(await decide(owner, command.approvalUrl, "Approve", { operationId: "webhooks.create", args: command.arguments })).toBe("approved")
    const first = await commit(key.secret, command.uuid)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const secret = first.body.command.result.body.secret as string
    expect(secret).toMatch(/^whsec_/)
    expect(first.body.command.result.body.sealedSecret).toBeUndefined()
    // At rest: no trace of the secret, only its sealed form.
    const { rows } = await db.query<{ result: string }>("SELECT result::text AS result FROM integration_commands WHERE uuid = $1", [command.uuid])
    expect(rows[0]!.result).not.toContain(secret)
    expect(rows[0]!.result).not.toContain(secret.slice("whsec_".length))
    expect(JSON.parse(rows[0]!.result)).toHaveProperty("sealedSecret")
    // A repeated commit answers the same result, secret included.
    const again = await commit(key.secret, command.uuid)
    expect(again.body.command.result.body.secret).toBe(secret)
    await owner.context.close()
  })

  it("a denied command never commits, confirmed: true included", async () => {
    const owner = await signInBrowser()
    const key = await makeKey(owner, ["tasks:submit"])
    const task = await saveTask(owner)
    const prepared = await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: task.revision })
    expect(prepared.status).toBe(200)
    const command = prepared.body.command
    expect(await decide(owner, command.approvalUrl, "Deny", { operationId: "tasks.submit", args: command.arguments })).toBe("denied")
    for (const body of [undefined, { confirmed: true }]) {
      const refused = await commit(key.secret, command.uuid, body)
      expect(refused.status).toBe(409)
      expect(refused.body.error.code).toBe("command_denied")
    }
    expect(await revisionOf(task.uuid)).toBe(task.revision)
    await owner.context.close()
  })

  it("only the key that prepared a command commits it; a revoked key's commands stop; expired ones are refused", async () => {
    const owner = await signInBrowser()
    const key = await makeKey(owner, ["tasks:submit"])
    const other = await makeKey(owner, ["tasks:submit"])
    const task = await saveTask(owner)
    const prepared = await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: task.revision })
    const command = prepared.body.command
    expect(await decide(owner, command.approvalUrl, "Approve", { operationId: "tasks.submit", args: command.arguments })).toBe("approved")

    const foreign = await commit(other.secret, command.uuid, { confirmed: true })
    expect(foreign.status).toBe(404)
    expect(foreign.body.error.code).toBe("not_found")
    const bySession = await commit(owner.cookie, command.uuid)
    expect(bySession.status).toBe(401)
    const withCookie = await call("POST", `/api/v1/integration-commands/${command.uuid}/commit`, { cookie: owner.cookie })
    expect(withCookie.status).toBe(403)
    expect(withCookie.body.error.code).toBe("key_required")

    // Expiry: an approved command past its hour cannot commit.
    await db.query("UPDATE integration_commands SET expires_at = now() - interval '1 second' WHERE uuid = $1", [command.uuid])
    const expired = await commit(key.secret, command.uuid)
    expect(expired.status).toBe(410)
    expect(expired.body.error.code).toBe("command_expired")
    await db.query("UPDATE integration_commands SET expires_at = now() + interval '1 hour' WHERE uuid = $1", [command.uuid])

    const revoked = await call("POST", `/api/v1/keys/${key.uuid}/revoke`, owner)
    expect(revoked.status).toBe(200)
    const afterRevoke = await commit(key.secret, command.uuid)
    expect(afterRevoke.status).toBe(401)
    expect(await revisionOf(task.uuid)).toBe(task.revision)
    const shown = await fetch(`${host.url}/approvals/${command.uuid}?lang=en`, { headers: { cookie: owner.cookie } })
    expect(shown.status).toBe(200)
    expect(await shown.text()).toContain('data-state="revoked"')
    // Nor can the owner approve it any more: the answer is the command as it stands.
    const late = await call("POST", `/api/v1/integration-commands/${command.uuid}/decide`, owner, { decision: "approve" })
    expect(late.status).toBe(200)
    expect(late.body.command.state).toBe("revoked")
    expect((await db.query("SELECT state FROM integration_commands WHERE uuid = $1", [command.uuid])).rows[0].state).toBe("approved")
    await owner.context.close()
  })

  it("an approval opened while signed out returns to itself after sign-in and shows what it does and the task's title", async () => {
    const owner = await signInBrowser()
    const key = await makeKey(owner, ["tasks:submit"])
    const task = await saveTask(owner)
    const command = (await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: task.revision })).body.command
    // The same person on another device, not signed in there yet.
    const email = (await db.query<{ email: string }>("SELECT a.email FROM accounts a JOIN api_keys k ON k.account_uuid = a.uuid WHERE k.uuid = $1", [key.uuid])).rows[0]!.email
    // The address signed in a moment ago: its one-email-a-minute limit would make this device wait.
    await db.query("DELETE FROM rate_limit_hits WHERE subject = $1", [email])
    const device = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": `198.51.100.${++ip}` } })
    const signedOut = await fetch(`${command.approvalUrl}?lang=en`, { redirect: "manual" })
    expect(signedOut.headers.get("location")).toBe(`/sign-in?lang=en&next=${encodeURIComponent(`/approvals/${command.uuid}?lang=en`)}`)
    const tab = await device.newPage()
    await signInThroughPage(tab, { origin, db, email, from: `${command.approvalUrl}?lang=en`, until: `${origin}/approvals/${command.uuid}?lang=en` })
    expect(await tab.getByRole("heading", { name: "What it does" }).isVisible()).toBe(true)
    expect(await tab.locator("#operation-summary").textContent()).toBe("Send the task draft to moderation")
    expect(await tab.locator("#record").textContent()).toBe("Task: «Сделать сайт»")
    expect(await tab.locator("#command-state").getAttribute("data-state")).toBe("pending")
    // Which key asks, and the expiry in the reader's own time.
    expect(await tab.locator("#command-key").textContent()).toBe("agent")
    expect(await tab.locator("#command-expires").getAttribute("datetime")).toBe(new Date(command.expiresAt).toISOString())
    expect(await tab.locator("#command-expires").textContent()).not.toContain("UTC")
    expect(await tab.locator("#command-expires").textContent()).toMatch(/in \d+ minutes/)
    await device.close()

    // The emailed link opened in the browser that asked returns to the approval too.
    await db.query("DELETE FROM rate_limit_hits WHERE subject = $1", [email])
    const third = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": `198.51.100.${++ip}` } })
    const asking = await third.newPage()
    await asking.goto(`${command.approvalUrl}?lang=en`)
    await asking.getByLabel("Email", { exact: true }).fill(email)
    await asking.getByRole("button", { name: "Send me a code" }).click()
    await asking.getByLabel("Code from the email (6 digits)").waitFor()
    const mail = (await db.query<{ text_body: string }>(
      "SELECT text_body FROM development_mailbox WHERE to_address = $1 ORDER BY created_at DESC LIMIT 1", [email]
    )).rows[0]!.text_body
    const linkTab = await third.newPage()
    await linkTab.goto(mail.match(/(http:\/\/localhost:\d+\/auth\/link#\S+)/)![1]!)
    await linkTab.getByRole("button", { name: "Sign in on this device" }).click()
    await linkTab.waitForURL(`${origin}/approvals/${command.uuid}?lang=en`)
    expect(await linkTab.locator("#record").textContent()).toBe("Task: «Сделать сайт»")
    await third.close()
    await owner.context.close()
  })

  it("a save with submit: true needs approval; its page shows the changes against the current draft, and commit saves and submits", async () => {
    const owner = await signInBrowser()
    const key = await makeKey(owner, ["tasks:write", "tasks:submit"])
    const task = await saveTask(owner)
    const data = { title: "Сделать новый сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 50 000 ₽", deadline: "две недели", files: [] }
    const plain = await prepare(key.secret, "tasks.save", { publicationUuid: task.uuid, expectedRevision: task.revision, data })
    expect(plain.status).toBe(400)
    expect(plain.body.error.code).toBe("approval_not_required")
    const direct = await call("POST", "/api/v1/commands/tasks.save", { bearer: key.secret }, {
      requestUuid: randomUUID(), publicationUuid: task.uuid, expectedRevision: task.revision, data, submit: true
    })
    expect(direct.body.error.code).toBe("approval_required")
    const prepared = await prepare(key.secret, "tasks.save", { publicationUuid: task.uuid, expectedRevision: task.revision, data, submit: true })
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200)
    const command = prepared.body.command
    const tab = await owner.context.newPage()
    await tab.goto(`${command.approvalUrl}?lang=en`)
    expect(await tab.locator(".also").textContent()).toBe("Also: Send the task draft to moderation")
    expect(await tab.locator("#record").textContent()).toBe("Task: «Сделать новый сайт»")
    const rows = await tab.locator("#changes tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector("th code")?.textContent, tr.querySelector("td del")?.textContent, tr.querySelector("td ins")?.textContent]))
    expect(rows).toEqual([["title", "Сделать сайт", "Сделать новый сайт"], ["budget", "до 30 000 ₽", "до 50 000 ₽"]])
    await tab.close()
    expect(await decide(owner, command.approvalUrl, "Approve", { operationId: "tasks.save", args: command.arguments })).toBe("approved")
    const committed = await commit(key.secret, command.uuid)
    expect(committed.status, JSON.stringify(committed.body)).toBe(200)
    expect(committed.body.command.result.status).toBe(200)
    const stored = (await db.query("SELECT status, draft->>'title' AS title FROM publications WHERE uuid = $1", [task.uuid])).rows[0]
    expect(stored).toEqual({ status: "pending", title: "Сделать новый сайт" })
    await owner.context.close()
  })

  it("/approvals lists the account's pending commands with their expiry; decided ones and other accounts' are not listed", async () => {
    const owner = await signInBrowser()
    const stranger = await signInBrowser()
    const key = await makeKey(owner, ["tasks:submit"])
    const waiting = await saveTask(owner)
    const decided = await saveTask(owner)
    const pending = (await prepare(key.secret, "tasks.submit", { publicationUuid: waiting.uuid, expectedRevision: waiting.revision })).body.command
    const done = (await prepare(key.secret, "tasks.submit", { publicationUuid: decided.uuid, expectedRevision: decided.revision })).body.command
    await db.query("UPDATE integration_commands SET state = 'denied', decided_at = now() WHERE uuid = $1", [done.uuid])
    const signedOut = await fetch(`${host.url}/approvals?lang=en`, { redirect: "manual" })
    expect(signedOut.status).toBe(303)
    expect(signedOut.headers.get("location")).toBe("/sign-in?lang=en&next=%2Fapprovals%3Flang%3Den")
    const tab = await owner.context.newPage()
    await tab.goto(`${origin}/approvals?lang=en`)
    const items = tab.locator("#pending li")
    expect(await items.count()).toBe(1)
    const link = items.first().getByRole("link", { name: "Send the task draft to moderation" })
    expect(await link.getAttribute("href")).toBe(`/approvals/${pending.uuid}?lang=en`)
    expect(await items.first().locator(".record").textContent()).toBe(" — Task «Сделать сайт»")
    expect(await items.first().textContent()).toContain("asked by the key “agent”")
    expect(await items.first().locator("time").getAttribute("datetime")).toBe(new Date(pending.expiresAt).toISOString())
    expect(await tab.content()).not.toContain(done.uuid)
    await tab.close()
    const other = await stranger.context.newPage()
    await other.goto(`${origin}/approvals?lang=en`)
    expect(await other.content()).not.toContain(pending.uuid)
    // An empty list is a calm state, not an error.
    expect(await other.locator("#empty").textContent()).toBe("Nothing is waiting for your decision.")
    expect(await other.locator("#empty").getAttribute("class")).not.toContain("status")
    await other.close()
    await owner.context.close()
    await stranger.context.close()
  })

  it("prepare decodes the arguments with the operation's own schema and refuses server-fixed fields", async () => {
    const owner = await signInBrowser()
    const key = await makeKey(owner, ["tasks:submit", "articles:write"])
    const task = await saveTask(owner)
    const count = async () => Number((await db.query("SELECT count(*) FROM integration_commands")).rows[0].count)
    const before = await count()

    // The same code a direct tasks.submit gives for the same violation (tasks: invalid_task).
    const negative = await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: -1 })
    const directNegative = await call("POST", "/api/v1/commands/tasks.submit", owner, { requestUuid: randomUUID(), publicationUuid: task.uuid, expectedRevision: -1 })
    expect(negative.status).toBe(400)
    expect(directNegative.status).toBe(400)
    expect(negative.body.error.code).toBe(directNegative.body.error.code)
    const zero = await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: 0 })
    expect(zero.status).toBe(200)
    const extra = await prepare(key.secret, "articles.delete", { publicationUuid: task.uuid, expectedRevision: 1, title: "x" })
    expect(extra.status).toBe(400)
    expect(extra.body.error.code).toBe("invalid_request")
    const missing = await prepare(key.secret, "articles.delete", { publicationUuid: task.uuid })
    expect(missing.status).toBe(400)

    for (const field of ["requestUuid", "profileUuid"]) {
      const fixed = await prepare(key.secret, "tasks.submit", { publicationUuid: task.uuid, expectedRevision: 1, [field]: randomUUID() })
      expect(fixed.status).toBe(400)
      expect(fixed.body.error.code).toBe("invalid_request")
      expect(fixed.body.error.message).toContain(field)
    }

    const unknown = await prepare(key.secret, "tasks.nothing", {})
    expect(unknown.status).toBe(400)
    const direct = await prepare(key.secret, "tasks.list", {})
    expect(direct.status).toBe(400)
    expect(direct.body.error.code).toBe("approval_not_required")
    const noScope = await prepare(key.secret, "portfolio.delete", { publicationUuid: task.uuid, expectedRevision: 1 })
    expect(noScope.status).toBe(403)
    expect(noScope.body.error.code).toBe("insufficient_scope")
    const session = await call("POST", "/api/v1/integration-commands/prepare", owner, { operationId: "tasks.submit", arguments: {} })
    expect(session.status).toBe(403)
    expect(session.body.error.code).toBe("key_required")

    expect(await count()).toBe(before + 1)
    await owner.context.close()
  })
})
