import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { openJourney, type Person, poll } from "./webJourney.js"

// The approval pages of the web application (packages/web: ApprovalsPage, ApprovalPage,
// WebhookApprovalPage) in real headless Chromium: what they show to whom, that opening one never
// decides anything, and that they pass axe-core in both languages at both widths. The approval
// flow itself (prepare → approve → commit) is handlers/IntegrationCommandsHandlers.test.ts.

const world = openJourney({ label: "web_approvals", shots: "web-approval", subnet: 111 })

const cookieOf = async (person: Person) => {
  const session = (await person.context.cookies()).find((c) => c.name === "__Host-birzha_session")!
  return `${session.name}=${session.value}`
}

const createEndpoint = async (cookie: string, url: string) => {
  const made = await world.service.call("POST", "/api/v1/webhook-endpoints", { cookie }, { requestUuid: randomUUID(), url, eventTypes: ["publication.*"], payloadMode: "current" })
  expect(made.status, JSON.stringify(made.body)).toBe(200)
  return made.body.endpoint as { uuid: string; revision: number; approvalUrl: string; url: string }
}

const stateOf = async (uuid: string) => (await world.db.query<{ state: string }>("SELECT state FROM webhook_endpoints WHERE uuid = $1", [uuid])).rows[0]!.state

describe("the webhook URL approval page", { timeout: 900_000 }, () => {
  it("shows the exact URL to its owner only; the page's button approves it, the API only from the service's own origin", async () => {
    const owner = await world.person(`hook.owner.${Date.now()}@example.com`)
    const stranger = await world.person(`hook.stranger.${Date.now()}@example.com`)
    const ownerCookie = await cookieOf(owner)
    const url = "https://hooks.example.com/in?a=1&b=<x>"
    const endpoint = await createEndpoint(ownerCookie, url)
    const path = `/webhooks/${endpoint.uuid}/approve`
    expect(endpoint.approvalUrl).toBe(`${world.origin}${path}`)

    const anonymous = await fetch(`${world.service.host.url}${path}?lang=en`, { redirect: "manual" })
    expect(anonymous.status).toBe(303)
    // Signing in returns to the approval.
    expect(anonymous.headers.get("location")).toBe(`/sign-in?lang=en&next=${encodeURIComponent(`${path}?lang=en`)}`)
    expect((await fetch(`${world.service.host.url}${path}`, { headers: { cookie: await cookieOf(stranger) } })).status).toBe(404)

    const shown = await owner.tab.goto(`${world.origin}${path}?lang=en`)
    const policy = shown!.headers()["content-security-policy"] ?? ""
    for (const part of ["script-src 'self'", "form-action 'self'", "frame-ancestors 'none'"]) expect(policy).toContain(part)
    const normalized = new URL(url).href
    expect(await owner.tab.locator("#webhook-url").textContent()).toBe(normalized)
    expect(await owner.tab.locator("#webhook-state").getAttribute("data-state")).toBe("prepared")
    // Opening the page approved nothing.
    expect(await stateOf(endpoint.uuid)).toBe("prepared")

    const approve = (cookie: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${world.service.host.url}/api/v1/webhook-endpoints/${endpoint.uuid}/approve`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie, ...headers },
        body: JSON.stringify(body)
      })
    const fields = { url: normalized, expectedRevision: endpoint.revision }
    expect((await approve(ownerCookie, fields, {})).status).toBe(403)
    expect((await approve(ownerCookie, fields, { origin: "https://evil.example" })).status).toBe(403)
    expect((await approve(await cookieOf(stranger), fields, { origin: world.origin })).status).toBe(404)
    expect((await approve(ownerCookie, { ...fields, url: normalized + "x" }, { origin: world.origin })).status).toBe(409)
    expect((await approve(ownerCookie, { ...fields, expectedRevision: 7 }, { origin: world.origin })).status).toBe(409)
    expect(await stateOf(endpoint.uuid)).toBe("prepared")

    await owner.tab.getByRole("button", { name: "Approve this URL" }).click()
    await owner.tab.locator("#approved").waitFor()
    expect(await owner.tab.locator("#approved").textContent()).toContain("The URL is approved")
    expect(await owner.tab.locator("#webhook-state").getAttribute("data-state")).toBe("awaiting_test")
    expect(await stateOf(endpoint.uuid)).toBe("awaiting_test")
    await owner.tab.reload()
    expect(await owner.tab.locator("#approved").textContent()).toContain("The URL is approved")
    expect(await owner.tab.getByRole("button", { name: "Approve this URL" }).count()).toBe(0)
    expect(owner.errors).toEqual([])
    await owner.context.close()
    await stranger.context.close()
  })

  it("passes axe-core in both languages at both widths, with the approval pages of commands", async () => {
    const owner = await world.person(`approvals.axe.${Date.now()}@example.com`)
    const cookie = await cookieOf(owner)
    const endpoint = await createEndpoint(cookie, "https://receiver.example.org/birzha")
    await world.checkPage(owner.tab, "webhook-approval", `/webhooks/${endpoint.uuid}/approve`)

    // The empty list, then a command of a key waiting for a decision, and its page.
    await world.checkPage(owner.tab, "approvals-empty", "/approvals")
    const key = await world.service.call("POST", "/api/v1/keys", { cookie }, { requestUuid: randomUUID(), name: "Агент", scopes: ["tasks:write", "tasks:submit"], httpEnabled: true, mcpEnabled: false })
    expect(key.status, JSON.stringify(key.body)).toBe(200)
    const saved = await world.service.call("POST", "/api/v1/commands/tasks.save", { cookie }, {
      requestUuid: randomUUID(),
      data: { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const data = { title: "Сделать новый сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню, картой и отзывами гостей", budget: "до 50 000 ₽", deadline: "две недели", files: [] }
    const prepared = await world.service.call("POST", "/api/v1/integration-commands/prepare", { bearer: key.body.secret }, {
      operationId: "tasks.save",
      arguments: { publicationUuid: saved.body.uuid, expectedRevision: saved.body.revision, data, submit: true }
    })
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200)
    await world.checkPage(owner.tab, "approvals", "/approvals")
    await world.checkPage(owner.tab, "approval", `/approvals/${prepared.body.command.uuid}`)
    // Opening the page decided nothing.
    expect((await world.db.query("SELECT state FROM integration_commands WHERE uuid = $1", [prepared.body.command.uuid])).rows[0].state).toBe("pending")
    // In Russian: the key's name, the record's title, the change, the decision buttons in Russian.
    await owner.tab.goto(`${world.origin}/approvals/${prepared.body.command.uuid}?lang=ru`)
    expect(await owner.tab.locator("#command-key").textContent()).toBe("Агент")
    expect(await owner.tab.locator("#record").textContent()).toBe("Задача: «Сделать новый сайт»")
    expect(await owner.tab.getByRole("button", { name: "Подтвердить", exact: true }).count()).toBe(1)
    expect(await owner.tab.getByRole("button", { name: "Отклонить", exact: true }).count()).toBe(1)
    // What will happen, in Russian: the save and what its submit flag adds.
    expect(await owner.tab.locator("#operation-summary").textContent()).toBe("Сохранить черновик задачи целиком (новый черновик, если задача не указана); сохранение ничего не публикует")
    expect(await owner.tab.locator(".also").textContent()).toBe("Заодно: Отправить черновик задачи на модерацию")
    expect(owner.errors).toEqual([])
    await owner.context.close()
  })
})

describe("an agent's request, approved on its page", { timeout: 900_000 }, () => {
  it("a key made from the agent preset prepares tasks.submit; the page says in Russian which key asks, what happens to which task, when it expires; the owner approves before the JSON; the commit succeeds and the page shows who decided and when", async () => {
    const email = `approvals.agent.${Date.now()}@example.com`
    const owner = await world.person(email)
    const { tab } = owner
    const cookie = await cookieOf(owner)

    // The key, from its preset on the integrations page.
    await tab.goto(`${world.origin}/settings/integrations?lang=ru`)
    await tab.locator("#create-form").getByLabel("Название").fill("Помощник")
    await tab.getByLabel("Агент, который работает от моего имени через MCP").check()
    await tab.getByRole("button", { name: "Создать ключ" }).click()
    const secret = (await tab.locator("#secret-value").textContent()) ?? ""
    expect(secret).toMatch(/^birzha_pk_/)
    const made = await world.service.call("GET", "/api/v1/keys", { cookie })
    const agent = (made.body.items as Array<{ name: string; scopes: Array<string>; mcpEnabled: boolean; httpEnabled: boolean }>).find((key) => key.name === "Помощник")!
    expect(agent.mcpEnabled).toBe(true)
    expect(agent.scopes).toEqual(expect.arrayContaining(["tasks:write", "tasks:submit", "threads:write", "events:read"]))

    const saved = await world.service.call("POST", "/api/v1/commands/tasks.save", { bearer: secret }, {
      requestUuid: randomUUID(),
      data: { title: "Логотип для пекарни", category: "Логотипы и графика", description: "Нужен простой логотип для семейной пекарни и вывески", budget: "до 15 000 ₽", deadline: "неделя", files: [] }
    })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const prepared = await world.service.call("POST", "/api/v1/integration-commands/prepare", { bearer: secret }, {
      operationId: "tasks.submit",
      arguments: { publicationUuid: saved.body.uuid, expectedRevision: saved.body.revision }
    })
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200)
    const path = `/approvals/${prepared.body.command.uuid}`
    expect(prepared.body.command.approvalUrl).toBe(`${world.origin}${path}`)

    // Signed out, the link sends to sign-in and back to the approval.
    const anonymous = await fetch(`${world.service.host.url}${path}?lang=ru`, { redirect: "manual" })
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get("location")).toBe(`/sign-in?lang=ru&next=${encodeURIComponent(`${path}?lang=ru`)}`)

    await tab.setViewportSize({ width: 390, height: 900 })
    const shown = await tab.goto(`${world.origin}${path}?lang=ru`)
    // The gate for everything an agent does: never framed, scripts only its own.
    const policy = shown!.headers()["content-security-policy"] ?? ""
    for (const part of ["default-src 'none'", "script-src 'self'", "form-action 'self'", "frame-ancestors 'none'"]) expect(policy).toContain(part)
    expect(policy).not.toContain("unsafe")

    expect(await tab.locator("#operation-summary").textContent()).toBe("Отправить черновик задачи на модерацию")
    expect(await tab.locator("#record").textContent()).toBe("Задача: «Логотип для пекарни»")
    expect(await tab.locator("#command-key").textContent()).toBe("Помощник")
    expect(await tab.locator("#key-made").textContent()).toMatch(/создан \d{1,2} [а-я]+ \d{4}/u)
    await poll(() => tab.locator("#command-expires").textContent()).toMatch(/\(через \d+ минут[аы]?\)$/u)
    expect(await tab.locator("#command-expires").textContent()).not.toContain("UTC")
    expect(await tab.locator("#decided-by").count()).toBe(0)
    // The decision is seen first: on a phone's first screen, above the parameters and the JSON.
    const approve = tab.getByRole("button", { name: "Подтвердить", exact: true })
    const box = (await approve.boundingBox())!
    expect(box.y + box.height).toBeLessThanOrEqual(900)
    expect(box.y).toBeLessThan((await tab.locator("#parameters").boundingBox())!.y)
    expect(box.y).toBeLessThan((await tab.locator("#raw-arguments").boundingBox())!.y)
    await screenshot(tab, "web-approval/approval-agent-ru-390")

    await approve.click()
    await poll(() => tab.locator("#command-state").getAttribute("data-state")).toBe("approved")
    expect(await tab.locator("#decided-by").textContent()).toBe(`вы (${email})`)
    expect(await tab.locator("#key-made").count()).toBe(1)

    const committed = await world.service.call("POST", `/api/v1/integration-commands/${prepared.body.command.uuid}/commit`, { bearer: secret })
    expect(committed.status, JSON.stringify(committed.body)).toBe(200)
    expect(committed.body.command.state).toBe("committed")
    expect(committed.body.command.result.status).toBe(200)

    // Decided and run: the page says who decided and when, and offers no decision any more.
    await tab.reload()
    expect(await tab.locator("#command-state").getAttribute("data-state")).toBe("committed")
    expect(await tab.locator("#decided-by").textContent()).toBe(`вы (${email})`)
    expect(await tab.locator("#decided-at").getAttribute("datetime")).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    expect(await approve.count()).toBe(0)
    await screenshot(tab, "web-approval/approval-decided-ru-390")
    await tab.setViewportSize({ width: 1280, height: 900 })
    await tab.goto(`${world.origin}${path}?lang=en`)
    expect(await tab.locator("#operation-summary").textContent()).toBe("Send the task draft to moderation")
    expect(await tab.locator("#decided-by").textContent()).toBe(`you (${email})`)
    await screenshot(tab, "web-approval/approval-decided-en-1280")
    expect(owner.errors).toEqual([])
    await owner.context.close()
  })
})
