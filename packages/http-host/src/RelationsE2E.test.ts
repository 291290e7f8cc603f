import { sequencePending } from "@birzha/worker-host/internal"
import type { SqlClient } from "@effect/sql"
import { ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import type Pg from "pg"
import type { Browser, BrowserContext } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium } from "../../../testing/browser.js"
import { eventually } from "../../../testing/progress.js"
import { signIn } from "../../../testing/signIn.js"
import { toolNameOf } from "./handlers/McpTools.js"
import { type RunningHost } from "./testing.js"
import { Client, StreamableHTTPClientTransport } from "./testMcp.js"
import { type Caller, startTestService, type TestService } from "./testService.js"
import { testPgLayer } from "../../domain/test/pgLayer.js"


const moderatorEmail = "moderator.relations@example.com"
let service: TestService
let host: RunningHost
let db: Pg.Client
let origin: string
let browser: Browser
let worker: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
let moderator: Who

beforeAll(async () => {
  service = await startTestService("relations_e2e", {
    env: { BIRZHA_SECRET: "relations e2e tests: a server secret of 32+ characters", BIRZHA_MODERATORS: moderatorEmail },
    trustProxy: true
  })
  ;({ host, db, origin } = service)
  browser = await launchChromium()
  worker = ManagedRuntime.make(testPgLayer(service.database.url, 2))
  moderator = await signIn({ url: host.url, origin, db, email: moderatorEmail })
})
afterAll(async () => {
  await worker?.dispose()
  await browser?.close()
  await service?.close()
})

interface Who {
  readonly cookie: string
}

const call = (method: string, path: string, who: Caller, body?: unknown) => service.call<Record<string, any>>(method, path, who, body)
const command = async (who: Who, id: string, body: Record<string, unknown>) => {
  const answer = await call("POST", `/api/v1/commands/${id}`, who, { requestUuid: randomUUID(), ...body })
  expect(answer.status, `${id}: ${JSON.stringify(answer.body)}`).toBe(200)
  return answer.body
}

let ip = 0
/** Signs in through the real sign-in page, so the browser holds the session (the owner approves there). */
const signInBrowser = async (): Promise<Who & { readonly context: BrowserContext }> => {
  const email = `contractor-${randomUUID()}@example.com`
  const context = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": `198.51.100.${++ip}` } })
  const tab = await context.newPage()
  await tab.goto(`${origin}/sign-in?lang=en`)
  await tab.getByLabel("Email", { exact: true }).fill(email)
  await tab.getByRole("button", { name: "Send me a code" }).click()
  await tab.getByLabel("Code from the email (6 digits)").waitFor()
  const { rows } = await db.query<{ text_body: string }>("SELECT text_body FROM development_mailbox WHERE to_address = $1", [email])
  await tab.getByLabel("Code from the email (6 digits)").fill(rows[0]!.text_body.match(/\b(\d{6})\b/)![1]!)
  await tab.getByRole("button", { name: "Sign in", exact: true }).click()
  await tab.waitForURL(`${origin}/account`)
  await tab.close()
  const session = (await context.cookies()).find((c) => c.name === "__Host-birzha_session")!
  return { context, cookie: `${session.name}=${session.value}` }
}

/** A task the customer saves and submits, approved by the moderator: publicly visible. */
const publicTask = async (customer: Who, title: string) => {
  const task = await command(customer, "tasks.save", {
    submit: true,
    data: { title, category: "Сайты", description: "Нужен лендинг для кофейни с меню, картой и формой заказа", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
  })
  const decided = await call("POST", "/api/v1/moderation/decisions", moderator, {
    requestUuid: randomUUID(), publicationUuid: task.uuid, expectedRevision: task.revision, decision: "approve"
  })
  expect(decided.status, JSON.stringify(decided.body)).toBe(200)
  return task.uuid as string
}

describe("a deal end to end over HTTP", () => {
  it("two real users: task → response → accepted → deal → results → complete; the two parties see it, nobody else", async () => {
    const customer = await signIn({ url: host.url, origin, db })
    const contractor = await signIn({ url: host.url, origin, db })
    const stranger = await signIn({ url: host.url, origin, db })
    const task = await publicTask(customer, "Лендинг для кофейни")

    const response = await command(contractor, "responses.create", { publicationUuid: task, body: "Сделаю за 10 дней, есть похожие работы", budget: "25 000 ₽" })
    expect([response.status, response.role, response.allowedActions]).toEqual(["pending", "contractor", ["responses.withdraw"]])
    const received = await call("GET", `/api/v1/commands/responses.list?publicationUuid=${task}`, customer)
    expect(received.body.items.map((item: { uuid: string }) => item.uuid)).toEqual([response.uuid])

    const accepted = await command(customer, "responses.status", {
      relationUuid: response.uuid, expectedRevision: response.revision, status: "accepted", body: "Договорились, начинайте"
    })
    expect([accepted.status, typeof accepted.dealUuid]).toEqual(["accepted", "string"])
    const deal = (await call("GET", `/api/v1/commands/deals.get?relationUuid=${accepted.dealUuid}`, contractor)).body
    expect([deal.status, deal.role, deal.allowedActions]).toEqual(["active", "contractor", ["deals.results", "deals.terminate"]])

    const handed = await command(contractor, "deals.results", { relationUuid: deal.uuid, expectedRevision: deal.revision, body: "Готово: ссылка на макет и исходники" })
    expect([handed.status, handed.results.version, typeof handed.autoCompleteAt]).toEqual(["results_submitted", 1, "string"])
    const completed = await command(customer, "deals.complete", { relationUuid: deal.uuid, expectedRevision: handed.revision, body: "Спасибо, всё принято" })
    expect([completed.status, completed.allowedActions, completed.history.map((h: { status: string }) => h.status)])
      .toEqual(["completed", [], ["active", "results_submitted", "completed"]])

    // The thread: the acceptance and the completion were posted there.
    const messages = await call("GET", `/api/v1/commands/threads.messages?threadUuid=${completed.threadUuid}`, contractor)
    expect(messages.body.items.map((message: { body: string }) => message.body)).toEqual(["Договорились, начинайте", "Спасибо, всё принято"])

    // A stale revision, a stranger and an unknown field over the wire.
    expect((await call("POST", "/api/v1/commands/deals.terminate", customer, { requestUuid: randomUUID(), relationUuid: deal.uuid, expectedRevision: 1 })).body.error.code)
      .toBe("invalid_state")
    const foreign = await call("GET", `/api/v1/commands/deals.get?relationUuid=${deal.uuid}`, stranger)
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "not_found"])
    const unknown = await call("POST", "/api/v1/commands/deals.complete", customer, { requestUuid: randomUUID(), relationUuid: deal.uuid, expectedRevision: 3, extra: 1 })
    expect([unknown.status, unknown.body.error.code]).toEqual([400, "invalid_request"])

    // Events reach both parties once sequenced; the stranger sees none of them.
    const dealEvents = async (who: Who) => {
      const listed = await call("GET", `/api/v1/events?aggregateUuid=${deal.uuid}`, who)
      return (listed.body.items ?? []).map((event: { type: string; data: { status: string } }) => `${event.type}:${event.data.status}`)
    }
    // What the worker's sequencer does, on demand (the test host runs without in-process workers).
    const expected = ["deal.started:active", "deal.status_changed:results_submitted", "deal.status_changed:completed"]
    expect(await eventually(async () => {
      await worker.runPromise(sequencePending(1000))
      return dealEvents(customer)
    }, (events) => events.length >= 3, "the deal's three events", { everyMs: 20 })).toEqual(expected)
    expect(await dealEvents(contractor)).toEqual(expected)
    expect(await dealEvents(stranger)).toEqual([])
  })
})

describe("a deal end to end through MCP with a bearer key", () => {
  it("prepare → the owner approves in headless Chromium → commit, for the response and the handover", async () => {
    const customer = await signIn({ url: host.url, origin, db })
    const contractor = await signInBrowser()
    const task = await publicTask(customer, "Перевод инструкции")
    const made = await call("POST", "/api/v1/keys", contractor, {
      requestUuid: randomUUID(), name: "agent", scopes: ["responses:read", "responses:write", "deals:read", "deals:write"], httpEnabled: false, mcpEnabled: true
    })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
    const client = new Client({ name: "relations-e2e", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp?toolsets=responses,deals`), {
      requestInit: { headers: { authorization: `Bearer ${made.body.secret}` } }
    }))
    const tools = (await client.listTools()).tools.map((tool) => tool.name)
    expect(tools).toEqual(expect.arrayContaining(["responses_create", "deals_results", "deals_get", "integration_commands_commit"]))
    expect(tools).not.toContain("offers_create")
    const textOf = (result: Awaited<ReturnType<typeof client.callTool>>) =>
      JSON.parse((result.content as ReadonlyArray<{ text?: string }>)[0]?.text ?? "null") as Record<string, any>

    /** An approval tool: prepared, approved by the owner on the approval page in Chromium, committed. */
    const approved = async (name: string, args: Record<string, unknown>) => {
      const prepared = textOf(await client.callTool({ name: toolNameOf(name), arguments: args })).command
      expect(prepared).toMatchObject({ operationId: name, state: "pending" })
      const tab = await contractor.context.newPage()
      await tab.goto(`${prepared.approvalUrl}?lang=en`)
      expect(await tab.locator("#operation-id").textContent()).toBe(name)
      // The page decides through the API (integrationCommands.decide) and shows the new state in place.
      await tab.getByRole("button", { name: "Approve", exact: true }).click()
      await tab.locator('#command-state[data-state="approved"]').waitFor()
      await tab.close()
      const committed = await client.callTool({ name: "integration_commands_commit", arguments: { uuid: prepared.uuid } })
      expect(committed.isError ?? false, JSON.stringify(committed)).toBe(false)
      const command = textOf(committed).command
      expect([command.state, command.result.status]).toEqual(["committed", 200])
      return command.result.body as Record<string, any>
    }

    const response = await approved("responses.create", { publicationUuid: task, body: "Переведу за три дня" })
    expect(response.status).toBe("pending")
    const accepted = await command(customer, "responses.status", { relationUuid: response.uuid, expectedRevision: 1, status: "accepted" })
    const deal = textOf(await client.callTool({ name: "deals_get", arguments: { relationUuid: accepted.dealUuid } }))
    expect([deal.status, deal.allowedActions]).toEqual(["active", ["deals.results", "deals.terminate"]])
    const handed = await approved("deals.results", { relationUuid: deal.uuid, expectedRevision: deal.revision, body: "Перевод во вложении" })
    expect(handed.status).toBe("results_submitted")
    const completed = await command(customer, "deals.complete", { relationUuid: deal.uuid, expectedRevision: handed.revision })
    expect(completed.status).toBe("completed")
    await client.close()
  })
})
