import { type CatalogEntry, envelope, InvalidRequest, type KeyActor, KeyMcpDisabled, PayloadTooLarge, ServiceUnavailable, Unauthenticated } from "@birzha/domain"
import { actorForAccessToken, actorForKey, defaultAgentScopes, authorize, inputOfArguments, Operations, PublicOrigin, ServerSecret } from "@birzha/domain/internal"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Redacted, Runtime } from "effect"
import { structuralCeilings } from "../BodyLimits.js"
import { answerAndDrain, readBody } from "../CompiledApi.js"
import { clientAddress, HostSettings } from "../HostSettings.js"
import { resourceMetadataUrlOf } from "./OAuthRoutes.js"
import { discoveryToolName, runnable, type Selection, selectionOf, toolEntries, toolNameOf, toolsets } from "./McpTools.js"

/** The MCP endpoint (Streamable HTTP, stateless: one server and transport per request). */
export const mcpRoutes = [{ method: "POST", path: "/mcp" }] as const

const refuse = (cls: { readonly status: number; readonly code: string }, message: string) =>
  HttpServerResponse.unsafeJson(envelope(cls, message), { status: cls.status, headers: { "cache-control": "no-store" } })

/**
 * What the server tells an agent at initialize (MCP `instructions`): what the tools are, how to
 * find and list more of them, and how the approval flow works.
 */
export const instructionsFor = (selection: Selection) => [
  "Birzha is a marketplace of publications (tasks, services, portfolios, articles, vacancies, resumes, trainings) with profiles, " +
    "deals, messages, reviews, an event feed and a learning service. Every tool is one operation of the Birzha API, run as the key's " +
    "profile with the key's scopes: the same checks, answers and errors as the HTTP API (an error comes back as a tool error carrying " +
    "{\"error\":{\"code\",\"message\"}}).",
  `Toolsets: the tools are grouped by operation group (${toolsets.join(", ")}). By default a connection lists a small set for a ` +
    `person's agent; ${discoveryToolName} lists every toolset and its tools, and answers one toolset's tools whole on demand. Any tool ` +
    `the key may run can be called by name; to have a toolset listed, connect to /mcp?toolsets=default,a,b (all: every tool). ` +
    `The approval flow's tools (${toolNameOf("integrationCommands.commit")}) are always listed. ` +
    (selection.toolsets === undefined
      ? "This connection lists the default set."
      : `This connection lists: ${[...(selection.withDefault ? ["default"] : []), ...selection.toolsets].join(", ")}.`) +
    (selection.readOnly ? " This connection is read-only: it lists and runs only tools that change nothing." : ""),
  "Approval: a tool whose description says it needs the owner's approval does not run when called. It returns a prepared command " +
    "(state pending) with an approvalUrl. Show that URL to the owner; they open it signed in and approve or decline. Then call " +
    `${toolNameOf("integrationCommands.commit")} with the command's uuid: it runs the operation exactly as prepared and returns its ` +
    "result. Commit before the owner approved, or after the command expired, is refused; prepare again then. A declined command never runs.",
  "Writes take a requestUuid where declared: reuse it to retry safely (the first result is returned again); use a new one for a new change."
].join("\n\n")

/** The operations the key may run as tools (approval aside: those go through prepare) on this connection. */
export const toolsFor = (key: KeyActor, selection: Selection) =>
  toolEntries.filter((entry) => runnable(entry, selection) && Either.isRight(Effect.runSync(Effect.either(authorize(entry, key, true)))))

const bearerOf = (header: string | undefined) => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")
  return match?.[1]
}

const handle = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { maxBodyBytes, publicOrigin } = yield* HostSettings
  const token = bearerOf(request.headers["authorization"])
  // An OAuth access token (birzha_at_…, bound to this resource) or a key with MCP access.
  const found = token === undefined
    ? Option.none()
    : token.startsWith("birzha_at_")
    ? yield* actorForAccessToken(Redacted.make(token))
    : yield* actorForKey(Redacted.make(token), "mcp")
  if (Option.isNone(found)) {
    // The MCP authorization specification: the 401 names the protected resource's metadata (RFC 9728 §5.1).
    const linkBase = yield* PublicOrigin
    const challenge = `Bearer resource_metadata="${resourceMetadataUrlOf(linkBase)}", scope="${defaultAgentScopes.join(" ")}"` +
      (token === undefined ? "" : `, error="invalid_token", error_description="The token is unknown, expired or revoked"`)
    return refuse(Unauthenticated, "Sign in through OAuth (see WWW-Authenticate), or send a key with MCP access as Authorization: Bearer <key>").pipe(
      HttpServerResponse.setHeader("www-authenticate", challenge)
    )
  }
  const key = found.value
  // Refused before any JSON-RPC; every tool call checks it again through authorizeKey (channel "mcp").
  if (!key.mcpEnabled) {
    return refuse(KeyMcpDisabled, "MCP access is turned off for this key; turn it on at /settings/integrations")
  }
  const selected = selectionOf(new URL(request.url, publicOrigin).searchParams)
  if ("problem" in selected) return refuse(InvalidRequest, selected.problem)
  const { selection } = selected
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

  const entries = toolsFor(key, selection)
  const runnableNames = new Set(entries.map((entry) => entry.id))
  const operations = yield* Operations
  const runtime = yield* Effect.runtime<never>()
  const address = yield* clientAddress
  // Every tool runs through the registry as the key over MCP: the same checks as over HTTP, channel "mcp".
  const dispatch = (entry: CatalogEntry, args: Record<string, unknown>) =>
    Runtime.runPromise(runtime)(operations.invoke(entry.id, key, inputOfArguments(entry, args), { clientAddress: address }))

  // The MCP SDK (its server, zod and ajv) is loaded on the first MCP request, not at start
  // (bench/README.md, `memory`); the import is Node's module cache from then on.
  const session = yield* Effect.promise(() => import("./McpSession.js"))
  yield* Effect.promise(() =>
    session.answer({ instructions: instructionsFor(selection), selection, entries, runnableNames, operations, dispatch, incoming, outgoing, body: body.right })
  )
  // The transport wrote the answer; the platform leaves an ended response alone.
  return HttpServerResponse.empty()
}).pipe(
  Effect.catchTag("SqlError", () => Effect.succeed(refuse(ServiceUnavailable, "The service is temporarily unavailable")))
)

/** `POST /mcp`, on the database, server key and host settings the host runs with. */
export const McpRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<SqlClient.SqlClient | ServerSecret | HostSettings | Operations | PublicOrigin>()
    yield* router.post("/mcp", Effect.provide(handle, services))
  })
)
