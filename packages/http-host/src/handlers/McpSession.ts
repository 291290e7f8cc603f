import { catalog, type CatalogEntry, envelope, InvalidRequest } from "@birzha/domain"
import { approvalOf, EncodedJson, type Operations } from "@birzha/domain/internal"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type { IncomingMessage, ServerResponse } from "node:http"
import {
  buildTools,
  discoveryAnswer,
  discoveryTool,
  discoveryToolName,
  entryOfTool,
  listed,
  runnable,
  type Selection,
  serverFixed,
  toolNameOf,
  toolOf,
  toolsets
} from "./McpTools.js"

/**
 * One MCP exchange over the SDK's Streamable HTTP transport (stateless: one server and transport
 * per request), once handlers/McpRoute.ts has authenticated the caller and read the body. A module
 * of its own so that the SDK is loaded on the first MCP request (McpRoute.ts imports it then).
 */

const prepareEntry = catalog.find((entry) => entry.id === "integrationCommands.prepare")

/** A tool's answer: the JSON as text, and as `structuredContent` when the tool declares an `outputSchema`. */
const resultOf = (status: number, body: unknown, structured: boolean): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  ...(status >= 400 ? { isError: true } : structured && typeof body === "object" && body !== null && !Array.isArray(body)
    ? { structuredContent: body as Record<string, unknown> }
    : {})
})

export interface Exchange {
  readonly instructions: string
  readonly selection: Selection
  /** The operations the key may run as tools on this connection. */
  readonly entries: ReadonlyArray<CatalogEntry>
  readonly runnableNames: ReadonlySet<string>
  readonly operations: Operations["Type"]
  /** Runs an operation through the registry as the key over MCP. */
  readonly dispatch: (entry: CatalogEntry, args: Record<string, unknown>) => Promise<{ readonly status: number; readonly body: unknown }>
  readonly incoming: IncomingMessage
  readonly outgoing: ServerResponse
  readonly body: unknown
}

/** Answers the JSON-RPC message on `outgoing`; resolves once the answer is written and the server closed. */
export const answer = async (exchange: Exchange): Promise<void> => {
  const { body, dispatch, entries, incoming, operations, outgoing, runnableNames, selection } = exchange
  await buildTools()
  const server = new Server({ name: "birzha", version: "1" }, { capabilities: { tools: { listChanged: false } }, instructions: exchange.instructions })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [discoveryTool, ...entries.filter((entry) => listed(entry, selection)).map(toolOf)]
  }))
  server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const name = call.params.name
    if (name === discoveryToolName) {
      const toolset = call.params.arguments?.["toolset"]
      if (toolset !== undefined && (typeof toolset !== "string" || !toolsets.includes(toolset))) {
        return resultOf(400, envelope(InvalidRequest, `toolset: no toolset ${String(toolset)}; known: ${toolsets.join(", ")}`), false)
      }
      return resultOf(200, discoveryAnswer(entries, selection, toolset), true)
    }
    const entry = entryOfTool(name)
    if (entry === undefined || !runnableNames.has(entry.id)) {
      const renamed = entryOfTool(toolNameOf(name))
      const hint = entry === undefined && renamed !== undefined ? ` (tool names use underscores: ${toolNameOf(name)})` : ""
      const why = entry !== undefined && !runnable(entry, selection)
        ? "this connection is read-only and the tool changes data"
        : `no such tool for this key${hint}; ${discoveryToolName} lists the tools`
      return resultOf(404, envelope({ code: "unknown_tool" }, `No tool ${name}: ${why}`), false)
    }
    const structured = toolOf(entry).outputSchema !== undefined
    const args: Record<string, unknown> = { ...call.params.arguments }
    // Approval tools never run directly: they prepare the command, exactly as a bearer client would
    // (so does a call whose flag widens it into one, tasks.save with submit: true).
    if (approvalOf(entry, args, operations.entries).needed && prepareEntry !== undefined) {
      // The server fixes these for a prepared command (a widened save's schema still lists requestUuid).
      const fixedLeftOut = Object.fromEntries(Object.entries(args).filter(([field]) => !serverFixed.includes(field)))
      const prepared = await dispatch(prepareEntry, { operationId: entry.id, arguments: fixedLeftOut })
      return resultOf(prepared.status, prepared.body, structured)
    }
    const answered = await dispatch(entry, args)
    return resultOf(answered.status, answered.body instanceof EncodedJson ? JSON.parse(answered.body.json) : answered.body, structured)
  })
  // Stateless: no sessionIdGenerator (omitted rather than `undefined`, same meaning), JSON answers.
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
  const closed = new Promise<void>((resolve) => {
    if (outgoing.writableEnded) resolve()
    else outgoing.once("close", () => resolve())
  })
  await server.connect(transport)
  await transport.handleRequest(incoming, outgoing, body)
  await closed
  await server.close()
}
