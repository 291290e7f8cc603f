import { catalog, grantableScopes } from "@birzha/domain"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { type RunningHost } from "./testing.js"
import { Client, StreamableHTTPClientTransport } from "./testMcp.js"
import { startTestService, type TestService } from "./testService.js"


let service: TestService
let host: RunningHost
let db: Pg.Client
let origin: string

beforeAll(async () => {
  service = await startTestService("mcp", { env: { BIRZHA_SECRET: "mcp tests: a server secret of 32+ characters long" }, trustProxy: true })
  ;({ host, db, origin } = service)
}, 60_000)
afterAll(async () => {
  await service?.close()
})

const call = async (method: string, path: string, cookie: string, body: unknown) => {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: { "content-type": "application/json", origin, cookie },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, body: (text === "" ? undefined : JSON.parse(text)) as Record<string, any> }
}

const makeKey = async (owner: SignedIn, scopes: ReadonlyArray<string>, mcpEnabled = true, httpEnabled = true) => {
  const made = await call("POST", "/api/v1/keys", owner.cookie, { requestUuid: randomUUID(), name: "agent", scopes, httpEnabled, mcpEnabled })
  expect(made.status, JSON.stringify(made.body)).toBe(200)
  return { secret: made.body.secret as string, scopes: made.body.key.scopes as ReadonlyArray<string> }
}

const connect = async (secret: string, query = "") => {
  const client = new Client({ name: "mcp-test", version: "1" })
  const transport = new StreamableHTTPClientTransport(new URL(`${host.url}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${secret}` } }
  })
  await client.connect(transport)
  return client
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) => {
  const content = result.content as ReadonlyArray<{ type: string; text?: string }>
  return JSON.parse(content[0]?.text ?? "null") as Record<string, any>
}

describe("the MCP endpoint", () => {
  it("lists one tool per operation the key may run (every non-session-only operation for a key with all scopes), with hints and input schemas", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    const { tools } = await client.listTools()
    const names = tools.map((tool) => tool.name).sort()
    const expected = catalog
      .filter((entry) => !entry.sessionOnly && (entry.scopes.length === 0 || entry.scopes.some((scope) => key.scopes.includes(scope))))
      .map((entry) => entry.id)
      .sort()
    expect(names).toEqual(expected)
    expect(names).toContain("tasks.list")
    expect(names).toContain("integrationCommands.commit")
    expect(names.some((name) => catalog.find((entry) => entry.id === name)?.sessionOnly)).toBe(false)
    const list = tools.find((tool) => tool.name === "tasks.list")!
    expect(list.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect(tools.find((tool) => tool.name === "comments.delete")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(tools.find((tool) => tool.name === "tasks.delete")?.annotations).toMatchObject({ destructiveHint: true })
    const submit = tools.find((tool) => tool.name === "tasks.submit")!
    expect(submit.annotations?.readOnlyHint).toBe(false)
    // The operation's own input schema; an approval tool leaves out what the server fixes for a prepared command.
    expect(Object.keys(submit.inputSchema.properties ?? {}).sort()).toEqual(["expectedRevision", "publicationUuid"])
    expect(submit.inputSchema.required).toEqual(["publicationUuid", "expectedRevision"])
    const save = tools.find((tool) => tool.name === "tasks.save")!
    expect(save.inputSchema.required).toContain("requestUuid")
    await client.close()
  })

  it("describes each tool from its declaration: what it does, what it changes, whether it needs approval; no sign-in steps among the tools", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    const { tools } = await client.listTools()
    const tool = (name: string) => tools.find((t) => t.name === name)!
    const list = tool("listPublications")
    const summary = catalog.find((entry) => entry.id === "listPublications")!.summary
    expect(summary).toMatch(/^Find publications/)
    expect(list.title).toBe(summary)
    expect(list.description).toBe(`${summary}. Read-only: changes nothing. No approval needed: runs at once. (HTTP: GET /api/v1/publications)`)
    const submit = tool("tasks.submit")
    expect(submit.description).toContain(catalog.find((entry) => entry.id === "tasks.submit")!.summary)
    expect(submit.description).toMatch(/Changes data \(/)
    expect(submit.description).toMatch(/Needs the owner's approval: .*approvalUrl.*integrationCommands\.commit/)
    expect(submit.description).toMatch(/Needs the scope tasks:submit/)
    expect(tool("tasks.delete").description).toMatch(/removes, hides or ends something/)
    expect(tool("tasks.save").description).toMatch(/No approval needed/)
    for (const t of tools) expect(t.description, t.name).not.toMatch(new RegExp(`^${t.name.replace(/\./g, "\\.")}:`))
    // Browser sign-in steps are session-only in their declarations, so no agent is offered them.
    const names = tools.map((t) => t.name)
    for (const id of ["auth.email.start", "auth.email.verify", "auth.email.link", "auth.logout", "keys.create"]) {
      expect(catalog.find((entry) => entry.id === id)?.sessionOnly, id).toBe(true)
      expect(names, id).not.toContain(id)
    }
    expect(names).toContain("auth.session")
    await client.close()
  })

  it("sends instructions at initialize: the toolsets, the approval flow, retries with requestUuid", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const all = await connect(key.secret)
    const instructions = all.getInstructions() ?? ""
    expect(instructions).toMatch(/toolsets=/)
    expect(instructions).toContain("publications")
    expect(instructions).toMatch(/approvalUrl/)
    expect(instructions).toMatch(/integrationCommands\.commit/)
    expect(instructions).toMatch(/requestUuid/)
    expect(instructions).toContain("This connection lists every group the key may use.")
    await all.close()
    const narrow = await connect(key.secret, "?toolsets=events")
    expect(narrow.getInstructions()).toContain("This connection lists: events.")
    await narrow.close()
  })

  it("a key sees only the tools its scopes allow, and ?toolsets= narrows them to the chosen groups", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, ["profiles:read"])
    const narrow = await connect(key.secret)
    const names = (await narrow.listTools()).tools.map((tool) => tool.name)
    expect(names).not.toContain("tasks.submit")
    for (const name of names) {
      const entry = catalog.find((e) => e.id === name)!
      expect(entry.scopes.length === 0 || entry.scopes.includes("profiles:read"), name).toBe(true)
    }
    await narrow.close()

    const all = await makeKey(owner, grantableScopes)
    const selected = await connect(all.secret, "?toolsets=publications,events")
    const groups = new Set((await selected.listTools()).tools.map((tool) => catalog.find((e) => e.id === tool.name)!.group))
    // The approval flow's tools (prepare, commit) stay listed whatever the toolsets.
    expect([...groups].sort()).toEqual(["events", "integrationCommands", "publications"])
    await selected.close()

    const unknown = await fetch(`${host.url}/mcp?toolsets=publications,nope`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${all.secret}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    expect(unknown.status).toBe(400)
  })

  it("a read tool answers what the HTTP call answers", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    const result = await client.callTool({ name: "tasks.list", arguments: {} })
    expect(result.isError ?? false, JSON.stringify(result)).toBe(false)
    const direct = await fetch(`${host.url}${catalog.find((entry) => entry.id === "tasks.list")!.path}?limit=1`, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(direct.status).toBe(200)
    const viaMcp = await client.callTool({ name: "tasks.list", arguments: { limit: 1 } })
    expect(textOf(viaMcp)).toEqual(await direct.json())
    expect(Array.isArray(textOf(result)["items"])).toBe(true)
    const scopes = await client.callTool({ name: "getCatalog", arguments: {} })
    expect(scopes.isError ?? false, JSON.stringify(scopes)).toBe(false)
    // Bad input is the operation's own 400, as a tool error.
    const bad = await client.callTool({ name: "tasks.submit", arguments: { publicationUuid: "not-a-uuid", expectedRevision: -1 } })
    expect(bad.isError).toBe(true)
    // The operation's own input error, as over HTTP: a task's bad data is invalid_task.
    const badTask = await client.callTool({ name: "tasks.save", arguments: { requestUuid: randomUUID(), data: { title: "x" } } })
    expect(badTask.isError).toBe(true)
    expect(textOf(badTask).error.code).toBe("invalid_task")
    await client.close()
  })

  it("an approval tool returns the prepared command; integrationCommands.commit completes it after the owner approved (with HTTP access off)", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    // MCP on, HTTP off: prepare, commit and the operation itself all run on the MCP channel.
    const key = await makeKey(owner, ["tasks:submit"], true, false)
    const saved = await call("POST", "/api/v1/commands/tasks.save", owner.cookie, {
      requestUuid: randomUUID(),
      data: { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const client = await connect(key.secret)
    const prepared = await client.callTool({ name: "tasks.submit", arguments: { publicationUuid: saved.body.uuid, expectedRevision: saved.body.revision } })
    expect(prepared.isError ?? false, JSON.stringify(prepared)).toBe(false)
    const command = textOf(prepared).command
    expect(command).toMatchObject({ operationId: "tasks.submit", state: "pending", approvalUrl: `${origin}/approvals/${command.uuid}` })

    // Not yet approved: commit refuses, and nothing ran.
    const early = await client.callTool({ name: "integrationCommands.commit", arguments: { uuid: command.uuid, confirmed: true } })
    expect(early.isError).toBe(true)

    // The owner decides in a browser session (what the approval page calls).
    const approved = await fetch(`${host.url}/api/v1/integration-commands/${command.uuid}/decide`, {
      method: "POST",
      headers: { "content-type": "application/json", origin, cookie: owner.cookie },
      body: JSON.stringify({ decision: "approve" })
    })
    expect(approved.status).toBe(200)
    const committed = await client.callTool({ name: "integrationCommands.commit", arguments: { uuid: command.uuid } })
    expect(committed.isError ?? false, JSON.stringify(committed)).toBe(false)
    expect(textOf(committed).command.state).toBe("committed")
    const task = await fetch(`${host.url}/api/v1/commands/tasks.get?publicationUuid=${saved.body.uuid}`, { headers: { cookie: owner.cookie } })
    expect(((await task.json()) as { status: string }).status).toBe("pending")
    // The same key over HTTP is refused: its HTTP access is off.
    const direct = await fetch(`${host.url}/api/v1/me/capabilities`, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(direct.status).toBe(403)
    const capabilities = await client.callTool({ name: "getMyCapabilities", arguments: {} })
    expect(textOf(capabilities)).toMatchObject({ authentication: "mcp", key: { httpEnabled: false, mcpEnabled: true } })
    await client.close()
  })

  it("a save whose submit: true needs approval is prepared, not run, with the server's own requestUuid", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, ["tasks:write", "tasks:submit"])
    const client = await connect(key.secret)
    const save = (await client.listTools()).tools.find((tool) => tool.name === "tasks.save")!
    expect(save.description).toContain("With submit: true it also does tasks.submit, which needs the owner's approval")
    const sent = randomUUID()
    const data = { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    const before = Number((await db.query("SELECT count(*) FROM publications")).rows[0].count)
    const prepared = await client.callTool({ name: "tasks.save", arguments: { requestUuid: sent, data, submit: true } })
    expect(prepared.isError ?? false, JSON.stringify(prepared)).toBe(false)
    const command = textOf(prepared).command
    expect(command).toMatchObject({ operationId: "tasks.save", state: "pending", arguments: { data, submit: true } })
    expect(command.arguments.requestUuid).not.toBe(sent)
    expect(Number((await db.query("SELECT count(*) FROM publications")).rows[0].count)).toBe(before)
    // Without the flag it is an ordinary save, run at once.
    const saved = await client.callTool({ name: "tasks.save", arguments: { requestUuid: randomUUID(), data } })
    expect(textOf(saved)).toMatchObject({ status: "draft" })
    await client.close()
  })

  it("refuses a key with MCP access off (403) and a request without a key (401)", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const off = await makeKey(owner, grantableScopes, false)
    await expect(connect(off.secret)).rejects.toThrow(/403|key_mcp_disabled/)
    const raw = await fetch(`${host.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${off.secret}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    expect(raw.status).toBe(403)
    expect((await raw.json()).error.code).toBe("key_mcp_disabled")
    const anonymous = await fetch(`${host.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(anonymous.status).toBe(401)
  })
})
