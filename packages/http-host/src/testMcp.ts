import { register } from "node:module"

// Test-only: the official MCP SDK client for tests. The test workers run Node with
// `--conditions source` (workspace packages resolve to their TypeScript), which sends the SDK
// client's SSE parser to sources Node cannot load; this hook hands it the package's built module
// instead. Registered before the client is imported.
register(
  "data:text/javascript," + encodeURIComponent(`export async function resolve(specifier, context, next) {
    const resolved = await next(specifier, context)
    return resolved.url.includes("/eventsource-parser/src/") && resolved.url.endsWith(".ts")
      ? { ...resolved, url: resolved.url.replace("/eventsource-parser/src/", "/eventsource-parser/dist/").slice(0, -3) + ".js" }
      : resolved
  }`)
)
export const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
export const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
export type Client = InstanceType<typeof Client>
