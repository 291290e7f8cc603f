import { catalog, type CatalogEntry, envelope, InvalidRequest, type KeyActor, KeyMcpDisabled, PayloadTooLarge, ServiceUnavailable, Unauthenticated } from "@birzha/domain"
import { actorForKey, approvalOf, authorize, EncodedJson, inputOfArguments, Operations, ServerSecret } from "@birzha/domain/internal"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, JSONSchema, Option, Redacted, Runtime, Schema } from "effect"
import { structuralCeilings } from "../BodyLimits.js"
import { answerAndDrain, readBody } from "../CompiledApi.js"
import { clientAddress, HostSettings } from "../HostSettings.js"

/** The MCP endpoint (Streamable HTTP, stateless: one server and transport per request). */
export const mcpRoutes = [{ method: "POST", path: "/mcp" }] as const

const refuse = (cls: { readonly status: number; readonly code: string }, message: string) =>
  HttpServerResponse.unsafeJson(envelope(cls, message), { status: cls.status, headers: { "cache-control": "no-store" } })

const prepareId = "integrationCommands.prepare"
const prepareEntry = catalog.find((entry) => entry.id === prepareId)

const serverFixed: ReadonlyArray<string> = ["requestUuid", "profileUuid"]

type JsonObject = { readonly [key: string]: unknown }
const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * One input object from the operation's own schemas (path, query, body merged, as the approval
 * flow's flat `arguments`). Object parts contribute their properties; any other shape (a union
 * body) is kept whole under `allOf`.
 */
export const inputSchemaOf = (entry: CatalogEntry): Tool["inputSchema"] => {
  const properties: Record<string, object> = {}
  const required: Array<string> = []
  const allOf: Array<unknown> = []
  let defs: Record<string, unknown> = {}
  const parts = [entry.schemas.path, entry.schemas.urlParams, entry.schemas.payload]
  for (const part of parts) {
    if (Option.isNone(part)) continue
    const made: unknown = JSONSchema.make(Schema.make(part.value))
    if (!isObject(made)) continue
    const { $defs, $schema: _schema, ...top } = made
    if (isObject($defs)) defs = { ...defs, ...$defs }
    // A named schema (a class, an identifier) comes as a reference to its definition: use the definition.
    const ref = typeof top["$ref"] === "string" ? top["$ref"].replace("#/$defs/", "") : undefined
    const target = ref === undefined ? undefined : defs[ref]
    const json: JsonObject = isObject(target) ? target : top
    if (json["type"] === "object" && isObject(json["properties"]) && json["anyOf"] === undefined) {
      for (const [name, schema] of Object.entries(json["properties"])) if (isObject(schema)) properties[name] = schema
      if (Array.isArray(json["required"])) required.push(...json["required"].filter((name): name is string => typeof name === "string"))
    } else {
      allOf.push(json)
    }
  }
  // The server fixes these for a prepared command (prepare refuses them), so approval tools do not take them.
  if (entry.approval) {
    for (const name of serverFixed) delete properties[name]
  }
  const needed = entry.approval ? required.filter((name) => !serverFixed.includes(name)) : required
  return {
    type: "object",
    properties,
    ...(needed.length > 0 ? { required: needed } : {}),
    ...(allOf.length > 0 ? { allOf } : {}),
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {})
  }
}

const destructive = /\.(delete|remove|revoke|hide|archive|withdraw|cancel|close|terminate|decline|reply_remove)/i
const destructiveOf = (entry: CatalogEntry) => entry.method === "DELETE" || destructive.test(entry.id)

const sentence = (text: string) => /[.!?]$/.test(text) ? text : `${text}.`

/**
 * A tool's description from its declaration: what it does (the declared summary), what it changes
 * (nothing for a read; otherwise its group, and whether it removes or hides something), whether it
 * needs the owner's approval, and the scopes it needs; the HTTP route last, for reference.
 */
export const descriptionOf = (entry: CatalogEntry): string => {
  const area = entry.groupDescription === "" ? entry.group : `${entry.group}: ${entry.groupDescription}`
  const changes = entry.method === "GET"
    ? "Read-only: changes nothing."
    : `Changes data (${area})${destructiveOf(entry) ? "; removes, hides or ends something" : ""}.`
  const approval = entry.approval
    ? "Needs the owner's approval: calling this tool does not run it but prepares a command and returns it with its approvalUrl; " +
      "the owner opens that page and approves, then call integrationCommands.commit with the command's uuid to run it."
    : "No approval needed: runs at once."
  const widenedNote = ", which needs the owner's approval: the call then returns a prepared command with its approvalUrl, " +
    "to run with integrationCommands.commit once approved"
  const widened = Object.entries(entry.widenedBy).map(([field, id]) => {
    const other = catalog.find((candidate) => candidate.id === id)
    return ` With ${field}: true it also does ${id}${other?.approval ? widenedNote : ""}.`
  }).join("")
  const scopes = entry.scopes.length === 0 ? "" : ` Needs the scope ${entry.scopes.join(" or ")}.`
  return `${sentence(entry.summary)} ${changes} ${approval}${widened}${scopes} (HTTP: ${entry.method} ${entry.path})`
}

export const toolOf = (entry: CatalogEntry): Tool => ({
  name: entry.id,
  title: entry.summary,
  description: descriptionOf(entry),
  inputSchema: inputSchemaOf(entry),
  annotations: {
    title: entry.summary,
    readOnlyHint: entry.method === "GET",
    destructiveHint: destructiveOf(entry),
    idempotentHint: entry.method === "GET" || entry.method === "PUT" || entry.method === "DELETE"
  }
})

/**
 * What the server tells an agent at initialize (MCP `instructions`): what the tools are, how to
 * narrow them with toolsets, and how the approval flow works.
 */
export const instructionsFor = (toolsets: Option.Option<ReadonlySet<string>>) => [
  "Birzha is a marketplace of publications (tasks, services, portfolios, articles, vacancies, resumes, trainings) with profiles, " +
    "deals, messages, reviews and an event feed. Every tool is one operation of the Birzha API, run as the key's profile with the " +
    "key's scopes: the same checks, answers and errors as the HTTP API (an error comes back as a tool error carrying " +
    "{\"error\":{\"code\",\"message\"}}).",
  `Toolsets: the tools are grouped by operation group (${[...groups].join(", ")}). Connect to /mcp?toolsets=a,b to list only ` +
    `those groups; the approval flow's tools (${approvalGroup}) are always listed. ` +
    Option.match(toolsets, { onNone: () => "This connection lists every group the key may use.", onSome: (set) => `This connection lists: ${[...set].join(", ")}.` }),
  "Approval: a tool whose description says it needs the owner's approval does not run when called. It returns a prepared command " +
    "(state pending) with an approvalUrl. Show that URL to the owner; they open it signed in and approve or decline. Then call " +
    "integrationCommands.commit with the command's uuid: it runs the operation exactly as prepared and returns its result. Commit " +
    "before the owner approved, or after the command expired, is refused; prepare again then. A declined command never runs.",
  "Writes take a requestUuid where declared: reuse it to retry safely (the first result is returned again); use a new one for a new change."
].join("\n\n")

/** The operations the key may run as tools (approval aside: those go through prepare), in the selected toolsets. */
export const toolsFor = (key: KeyActor, toolsets: Option.Option<ReadonlySet<string>>) =>
  catalog
    .filter((entry) => Either.isRight(Effect.runSync(Effect.either(authorize(entry, key, true)))))
    // The approval flow's own tools stay whatever the toolsets: an approval tool needs commit to finish.
    .filter((entry) => entry.group === approvalGroup || Option.match(toolsets, { onNone: () => true, onSome: (set) => set.has(entry.group) }))

const groups = new Set(catalog.map((entry) => entry.group))
const approvalGroup = prepareEntry?.group ?? "integrationCommands"

const resultOf = (status: number, body: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  ...(status >= 400 ? { isError: true } : {})
})

const bearerOf = (header: string | undefined) => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")
  return match?.[1]
}

const handle = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { maxBodyBytes, publicOrigin } = yield* HostSettings
  const token = bearerOf(request.headers["authorization"])
  const found = token === undefined ? Option.none() : yield* actorForKey(Redacted.make(token), "mcp")
  if (Option.isNone(found)) {
    return refuse(Unauthenticated, "Send a valid key with MCP access as Authorization: Bearer <key>")
  }
  const key = found.value
  // Refused before any JSON-RPC; every tool call checks it again through authorizeKey (channel "mcp").
  if (!key.mcpEnabled) {
    return refuse(KeyMcpDisabled, "MCP access is turned off for this key; turn it on at /settings/integrations")
  }
  const selected = new URL(request.url, publicOrigin).searchParams.get("toolsets")
  let toolsets: Option.Option<ReadonlySet<string>> = Option.none()
  if (selected !== null && selected.trim() !== "") {
    const names = selected.split(",").map((name) => name.trim()).filter((name) => name !== "")
    const unknown = names.filter((name) => !groups.has(name))
    if (unknown.length > 0) {
      return refuse(InvalidRequest, `toolsets: no toolset ${unknown.join(", ")}; known: ${[...groups].join(", ")}`)
    }
    toolsets = Option.some(new Set(names))
  }
  // A tool call carries any operation's input: the host's limit and the structural ceilings bound
  // it (BodyLimits.ts), counted while it arrives and before JSON.parse, as an operation's own body is.
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  const outgoing = NodeHttpServerRequest.toServerResponse(request)
  const refuseBody = (cls: { readonly status: number; readonly code: string }, message: string) => {
    answerAndDrain(incoming, outgoing, cls, message, 2 * maxBodyBytes)
    return HttpServerResponse.empty()
  }
  const tooLarge = `The request body exceeds ${maxBodyBytes} bytes`
  if (Number(request.headers["content-length"] ?? "0") > maxBodyBytes) return refuseBody(PayloadTooLarge, tooLarge)
  const read = yield* Effect.promise(() => readBody(incoming, { ...structuralCeilings, maxBytes: maxBodyBytes, maxStringBytes: maxBodyBytes }))
  switch (read._tag) {
    case "Aborted":
      return HttpServerResponse.empty()
    case "TooLarge":
      return refuseBody(PayloadTooLarge, tooLarge)
    case "Refused":
      return refuseBody(InvalidRequest, `The request body is refused before parsing: ${read.problem}`)
  }
  const body = Either.try(() => JSON.parse(read.bytes.toString("utf8")) as unknown)
  if (Either.isLeft(body)) return refuse(InvalidRequest, "The body must be a JSON-RPC message")

  const entries = toolsFor(key, toolsets)
  const byName = new Map(entries.map((entry) => [entry.id, entry]))
  const operations = yield* Operations
  const runtime = yield* Effect.runtime<never>()
  const address = yield* clientAddress
  // Every tool runs through the registry as the key over MCP: the same checks as over HTTP, channel "mcp".
  const dispatch = (entry: CatalogEntry, args: Record<string, unknown>) =>
    Runtime.runPromise(runtime)(operations.invoke(entry.id, key, inputOfArguments(entry, args), { clientAddress: address }))

  const server = new Server({ name: "birzha", version: "1" }, { capabilities: { tools: { listChanged: false } }, instructions: instructionsFor(toolsets) })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: entries.map(toolOf) }))
  server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const entry = byName.get(call.params.name)
    if (entry === undefined) {
      return resultOf(404, envelope({ code: "unknown_tool" }, `No tool ${call.params.name} for this key and toolsets`))
    }
    const args: Record<string, unknown> = { ...call.params.arguments }
    // Approval tools never run directly: they prepare the command, exactly as a bearer client would
    // (so does a call whose flag widens it into one, tasks.save with submit: true).
    if (approvalOf(entry, args, operations.entries).needed && prepareEntry !== undefined) {
      // The server fixes these for a prepared command (a widened save's schema still lists requestUuid).
      const fixedLeftOut = Object.fromEntries(Object.entries(args).filter(([name]) => !serverFixed.includes(name)))
      const prepared = await dispatch(prepareEntry, { operationId: entry.id, arguments: fixedLeftOut })
      return resultOf(prepared.status, prepared.body)
    }
    const answer = await dispatch(entry, args)
    return resultOf(answer.status, answer.body instanceof EncodedJson ? JSON.parse(answer.body.json) : answer.body)
  })
  // Stateless: no sessionIdGenerator (omitted rather than `undefined`, same meaning), JSON answers.
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
  yield* Effect.promise(async () => {
    const closed = new Promise<void>((resolve) => {
      if (outgoing.writableEnded) resolve()
      else outgoing.once("close", () => resolve())
    })
    await server.connect(transport)
    await transport.handleRequest(incoming, outgoing, body.right)
    await closed
    await server.close()
  })
  // The transport wrote the answer; the platform leaves an ended response alone.
  return HttpServerResponse.empty()
}).pipe(
  Effect.catchTag("SqlError", () => Effect.succeed(refuse(ServiceUnavailable, "The service is temporarily unavailable")))
)

/** `POST /mcp`, on the database, server key and host settings the host runs with. */
export const McpRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<SqlClient.SqlClient | ServerSecret | HostSettings | Operations>()
    yield* router.post("/mcp", Effect.provide(handle, services))
  })
)
