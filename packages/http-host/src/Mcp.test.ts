import { catalog, grantableScopes } from "@birzha/domain"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { type RunningHost } from "./testing.js"
import { Client, StreamableHTTPClientTransport } from "./testMcp.js"
import { defaultOperations, discoveryToolName, entryOfTool, toolNameOf } from "./handlers/McpTools.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { startTestService, type TestService } from "./testService.js"


let service: TestService
let host: RunningHost
let db: Pg.Client
let origin: string

beforeAll(async () => {
  service = await startTestService("mcp", { env: { BIRZHA_SECRET: "mcp tests: a server secret of 32+ characters long" }, trustProxy: true })
  ;({ host, db, origin } = service)
})
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
  it("lists a small default set by default: at most 40 tools and 60 KB, every name a valid function name, no health probe", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    const { tools } = await client.listTools()
    // What the agent's context holds: the tools/list result as sent.
    const bytes = Buffer.byteLength(JSON.stringify({ tools }))
    expect(tools.length).toBeLessThanOrEqual(40)
    expect(bytes).toBeLessThanOrEqual(60 * 1024)
    const names = tools.map((tool) => tool.name)
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    expect(names.filter((name) => name.includes("."))).toEqual([])
    expect(names.sort()).toEqual([discoveryToolName, ...defaultOperations.map(toolNameOf)].sort())
    for (const id of ["health.live", "health.ready"]) expect(names).not.toContain(toolNameOf(id))
    const list = tools.find((tool) => tool.name === "tasks_list")!
    expect(list.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    const submit = tools.find((tool) => tool.name === "tasks_submit")!
    expect(submit.annotations?.readOnlyHint).toBe(false)
    // The operation's own input schema; an approval tool leaves out what the server fixes for a prepared command.
    expect(Object.keys(submit.inputSchema.properties ?? {}).sort()).toEqual(["expectedRevision", "publicationUuid"])
    expect(submit.inputSchema.required).toEqual(["publicationUuid", "expectedRevision"])
    const save = tools.find((tool) => tool.name === "tasks_save")!
    expect(save.inputSchema.required).toContain("requestUuid")
    await client.close()
  })

  it("?toolsets=all lists one tool per operation the key may run (every non-session-only, non-health operation for a key with all scopes)", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret, "?toolsets=all")
    const { tools } = await client.listTools()
    const names = tools.map((tool) => tool.name).sort()
    const expected = catalog
      .filter((entry) => entry.group !== "health" && !entry.sessionOnly && (entry.scopes.length === 0 || entry.scopes.some((scope) => key.scopes.includes(scope))))
      .map((entry) => toolNameOf(entry.id))
    expect(names).toEqual([discoveryToolName, ...expected].sort())
    expect(tools.find((tool) => tool.name === "comments_delete")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(tools.find((tool) => tool.name === "tasks_delete")?.annotations).toMatchObject({ destructiveHint: true })
    await client.close()
  })

  it("describes each tool from its declaration: what it does, what it changes, whether it needs approval; no sign-in steps among the tools", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret, "?toolsets=all")
    const { tools } = await client.listTools()
    const tool = (name: string) => tools.find((t) => t.name === name)!
    const list = tool("list_publications")
    const summary = catalog.find((entry) => entry.id === "listPublications")!.summary
    expect(summary).toMatch(/^Find publications/)
    expect(list.description).toBe(`${summary}. Read-only. (HTTP: GET /api/v1/publications)`)
    const submit = tool("tasks_submit")
    expect(submit.description).toContain(catalog.find((entry) => entry.id === "tasks.submit")!.summary)
    expect(submit.description).toMatch(/Changes data/)
    expect(submit.description).toMatch(/Needs the owner's approval: .*approvalUrl.*integration_commands_commit/)
    expect(submit.description).toMatch(/Needs the scope tasks:submit/)
    expect(tool("tasks_delete").description).toMatch(/removes, hides or ends something/)
    expect(tool("tasks_save").description).not.toMatch(/Needs the owner's approval: returns/)
    for (const t of tools) expect(t.description, t.name).not.toMatch(new RegExp(`^${t.name}:`))
    // Browser sign-in steps are session-only in their declarations, so no agent is offered them.
    const names = tools.map((t) => t.name)
    for (const id of ["auth.email.start", "auth.email.verify", "auth.email.link", "auth.logout", "keys.create"]) {
      expect(catalog.find((entry) => entry.id === id)?.sessionOnly, id).toBe(true)
      expect(names, id).not.toContain(toolNameOf(id))
    }
    expect(names).toContain("auth_session")
    await client.close()
  })

  it("sends instructions at initialize: the default set, the discovery tool, the toolsets, the approval flow, retries with requestUuid", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const all = await connect(key.secret)
    const instructions = all.getInstructions() ?? ""
    expect(instructions).toMatch(/toolsets=/)
    expect(instructions).toContain("publications")
    expect(instructions).toContain(discoveryToolName)
    expect(instructions).toMatch(/approvalUrl/)
    expect(instructions).toMatch(/integration_commands_commit/)
    expect(instructions).toMatch(/requestUuid/)
    expect(instructions).toContain("This connection lists the default set.")
    await all.close()
    const narrow = await connect(key.secret, "?toolsets=events")
    expect(narrow.getInstructions()).toContain("This connection lists: events.")
    await narrow.close()
  })

  it("a key sees only the tools its scopes allow, and ?toolsets= narrows them to the chosen groups (default adds the default set)", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, ["profiles:read"])
    const narrow = await connect(key.secret, "?toolsets=all")
    const names = (await narrow.listTools()).tools.map((tool) => tool.name).filter((name) => name !== discoveryToolName)
    expect(names).not.toContain("tasks_submit")
    for (const name of names) {
      const entry = entryOfTool(name)!
      expect(entry.scopes.length === 0 || entry.scopes.includes("profiles:read"), name).toBe(true)
    }
    await narrow.close()

    const all = await makeKey(owner, grantableScopes)
    const groupsOf = (tools: ReadonlyArray<{ name: string }>) =>
      [...new Set(tools.filter((tool) => tool.name !== discoveryToolName).map((tool) => entryOfTool(tool.name)!.group))].sort()
    const selected = await connect(all.secret, "?toolsets=publications,events")
    // The approval flow's tools (prepare, commit) stay listed whatever the toolsets.
    expect(groupsOf((await selected.listTools()).tools)).toEqual(["events", "integrationCommands", "publications"])
    await selected.close()
    const withDefault = await connect(all.secret, "?toolsets=default,learning_corrections")
    const names2 = (await withDefault.listTools()).tools.map((tool) => tool.name)
    expect(names2).toEqual(expect.arrayContaining(["tasks_save", "learning_appeals_create"]))
    await withDefault.close()

    const unknown = await fetch(`${host.url}/mcp?toolsets=publications,nope`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${all.secret}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    expect(unknown.status).toBe(400)
  })

  it("the discovery tool lists every toolset with its tools, answers one toolset whole, and a tool it names runs without reconnecting", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    await client.listTools()
    const listedSets = await client.callTool({ name: discoveryToolName, arguments: {} })
    expect(listedSets.isError ?? false, JSON.stringify(listedSets)).toBe(false)
    const answer = listedSets.structuredContent as { toolsets: Array<{ name: string; tools: Array<string>; listed: boolean }>; howToEnable: string }
    const favorites = answer.toolsets.find((set) => set.name === "favorites")!
    expect(favorites).toMatchObject({ listed: false })
    expect(favorites.tools).toContain("favorites_list")
    expect(answer.toolsets.find((set) => set.name === "health")).toBeUndefined()
    expect(answer.howToEnable).toMatch(/toolsets=default,/)
    const whole = await client.callTool({ name: discoveryToolName, arguments: { toolset: "favorites" } })
    const tools = (whole.structuredContent as { tools: Array<{ name: string; inputSchema: object }> }).tools
    expect(tools.map((tool) => tool.name).sort()).toEqual([...favorites.tools].sort())
    // Not listed, yet callable by the name discovery gave.
    const run = await client.callTool({ name: "favorites_list", arguments: {} })
    expect(run.isError ?? false, JSON.stringify(run)).toBe(false)
    const bad = await client.callTool({ name: discoveryToolName, arguments: { toolset: "nope" } })
    expect(bad.isError).toBe(true)
    await client.close()
  })

  it("a read-only connection (?readonly=1) lists and runs only tools that change nothing", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret, "?readonly=1&toolsets=all")
    const { tools } = await client.listTools()
    expect(tools.length).toBeGreaterThan(10)
    for (const tool of tools) expect(tool.annotations?.readOnlyHint, tool.name).toBe(true)
    expect(client.getInstructions()).toMatch(/read-only/)
    const refused = await client.callTool({ name: "tasks_save", arguments: { requestUuid: randomUUID(), data: {} } })
    expect(refused.isError).toBe(true)
    expect(textOf(refused).error).toMatchObject({ code: "unknown_tool" })
    expect(textOf(refused).error.message).toMatch(/read-only/)
    const read = await client.callTool({ name: "tasks_list", arguments: {} })
    expect(read.isError ?? false).toBe(false)
    await client.close()
    const wrong = await fetch(`${host.url}/mcp?readonly=maybe`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${key.secret}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    expect(wrong.status).toBe(400)
  })

  it("a structured result validates against the tool's outputSchema (and a result missing a required member would not)", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    const { tools } = await client.listTools()
    const validator = new AjvJsonSchemaValidator()
    for (const [name, args] of [["get_my_capabilities", {}], ["tasks_list", { limit: 2 }], ["list_publications", {}]] as const) {
      const tool = tools.find((t) => t.name === name)!
      expect(tool.outputSchema, name).toBeDefined()
      const result = await client.callTool({ name, arguments: args })
      expect(result.isError ?? false, JSON.stringify(result)).toBe(false)
      expect(result.structuredContent, name).toEqual(textOf(result))
      const validate = validator.getValidator(tool.outputSchema as never)
      expect(validate(result.structuredContent), name).toMatchObject({ valid: true })
      const required = (tool.outputSchema as { required?: ReadonlyArray<string> }).required ?? []
      expect(required.length, name).toBeGreaterThan(0)
      const { [required[0]!]: _left, ...missing } = result.structuredContent as Record<string, unknown>
      expect(validate(missing).valid, `${name} without ${required[0]}`).toBe(false)
    }
    await client.close()
  })

  it("a bad field gets one clear message, not one per side of an optional schema", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    // publicationUuid is optional on tasks.get: its schema is "uuid or absent".
    const bad = await client.callTool({ name: "tasks_get", arguments: { publicationUuid: "not-a-uuid" } })
    expect(bad.isError).toBe(true)
    const error = textOf(bad).error
    expect(error).toMatchObject({ code: "invalid_request", field: "publicationUuid" })
    expect(error.message).not.toMatch(/Expected undefined/)
    expect(error.message.match(/publicationUuid:/g)).toHaveLength(1)
    // A field whose schema has a description says what it expected in the type's words, not the meaning's.
    const long = await client.callTool({ name: "tasks_list", arguments: { cursor: "x".repeat(600) } })
    expect(textOf(long).error).toMatchObject({ code: "invalid_request", field: "cursor" })
    expect(textOf(long).error.message).toMatch(/^cursor: Expected a string at most 512 character\(s\) long/)
    await client.close()
  })

  it("a read tool answers what the HTTP call answers", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, grantableScopes)
    const client = await connect(key.secret)
    const result = await client.callTool({ name: "tasks_list", arguments: {} })
    expect(result.isError ?? false, JSON.stringify(result)).toBe(false)
    const direct = await fetch(`${host.url}${catalog.find((entry) => entry.id === "tasks.list")!.path}?limit=1`, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(direct.status).toBe(200)
    const viaMcp = await client.callTool({ name: "tasks_list", arguments: { limit: 1 } })
    expect(textOf(viaMcp)).toEqual(await direct.json())
    expect(Array.isArray(textOf(result)["items"])).toBe(true)
    const scopes = await client.callTool({ name: "get_catalog", arguments: {} })
    expect(scopes.isError ?? false, JSON.stringify(scopes)).toBe(false)
    // The old dotted names are no tools; the answer names the new one.
    const dotted = await client.callTool({ name: "tasks.list", arguments: {} })
    expect(dotted.isError).toBe(true)
    expect(textOf(dotted).error).toMatchObject({ code: "unknown_tool" })
    expect(textOf(dotted).error.message).toContain("tasks_list")
    // Bad input is the operation's own 400, as a tool error.
    const bad = await client.callTool({ name: "tasks_submit", arguments: { publicationUuid: "not-a-uuid", expectedRevision: -1 } })
    expect(bad.isError).toBe(true)
    // The operation's own input error, as over HTTP: a task's bad data is invalid_task.
    const badTask = await client.callTool({ name: "tasks_save", arguments: { requestUuid: randomUUID(), data: { title: "x" } } })
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
    const prepared = await client.callTool({ name: "tasks_submit", arguments: { publicationUuid: saved.body.uuid, expectedRevision: saved.body.revision } })
    expect(prepared.isError ?? false, JSON.stringify(prepared)).toBe(false)
    const command = textOf(prepared).command
    expect(command).toMatchObject({ operationId: "tasks.submit", state: "pending", approvalUrl: `${origin}/approvals/${command.uuid}` })

    // Not yet approved: commit refuses, and nothing ran.
    const early = await client.callTool({ name: "integration_commands_commit", arguments: { uuid: command.uuid, confirmed: true } })
    expect(early.isError).toBe(true)
    // approval_pending names the page in full, on the host's public origin, for the agent to pass on.
    expect(textOf(early).error).toMatchObject({ code: "approval_pending", uuid: command.uuid, state: "pending" })
    expect(textOf(early).error.message).toContain(`${origin}/approvals/${command.uuid}`)

    // The owner decides in a browser session (what the approval page calls).
    const approved = await fetch(`${host.url}/api/v1/integration-commands/${command.uuid}/decide`, {
      method: "POST",
      headers: { "content-type": "application/json", origin, cookie: owner.cookie },
      body: JSON.stringify({ decision: "approve" })
    })
    expect(approved.status).toBe(200)
    const committed = await client.callTool({ name: "integration_commands_commit", arguments: { uuid: command.uuid } })
    expect(committed.isError ?? false, JSON.stringify(committed)).toBe(false)
    expect(textOf(committed).command.state).toBe("committed")
    const task = await fetch(`${host.url}/api/v1/commands/tasks.get?publicationUuid=${saved.body.uuid}`, { headers: { cookie: owner.cookie } })
    expect(((await task.json()) as { status: string }).status).toBe("pending")
    // The same key over HTTP is refused: its HTTP access is off.
    const direct = await fetch(`${host.url}/api/v1/me/capabilities`, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(direct.status).toBe(403)
    const capabilities = await client.callTool({ name: "get_my_capabilities", arguments: {} })
    expect(textOf(capabilities)).toMatchObject({ authentication: "mcp", key: { httpEnabled: false, mcpEnabled: true } })
    await client.close()
  })

  it("a save whose submit: true needs approval is prepared, not run, with the server's own requestUuid", async () => {
    const owner = await signIn({ url: host.url, origin, db })
    const key = await makeKey(owner, ["tasks:write", "tasks:submit"])
    const client = await connect(key.secret)
    const save = (await client.listTools()).tools.find((tool) => tool.name === "tasks_save")!
    expect(save.description).toContain("With submit: true it also does tasks_submit, which needs the owner's approval")
    const sent = randomUUID()
    const data = { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню и картой", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    const before = Number((await db.query("SELECT count(*) FROM publications")).rows[0].count)
    const prepared = await client.callTool({ name: "tasks_save", arguments: { requestUuid: sent, data, submit: true } })
    expect(prepared.isError ?? false, JSON.stringify(prepared)).toBe(false)
    const command = textOf(prepared).command
    expect(command).toMatchObject({ operationId: "tasks.save", state: "pending", arguments: { data, submit: true } })
    expect(command.arguments.requestUuid).not.toBe(sent)
    expect(Number((await db.query("SELECT count(*) FROM publications")).rows[0].count)).toBe(before)
    // Without the flag it is an ordinary save, run at once.
    const saved = await client.callTool({ name: "tasks_save", arguments: { requestUuid: randomUUID(), data } })
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
