import { addressProblem, type ClientResolver, grantableScopes, ipBytes, mcpResourceOf, oauthAuthorize, oauthRevoke, oauthToken, PublicOrigin, registerClient, ServerSecret, WebhookSettings } from "@birzha/domain/internal"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { lookup } from "node:dns/promises"
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"

/**
 * The OAuth 2.1 endpoints of the MCP authorization specification (docs/decisions.md "MCP
 * authorization"): the metadata documents (RFC 9728, RFC 8414), authorize, token, register
 * (RFC 7591) and revoke (RFC 7009). The rules are the domain's
 * (packages/domain/src/oauth/AuthorizationServer.ts); this file speaks the protocol's forms and JSON.
 */
export const oauthRoutes = [
  { method: "GET", path: "/.well-known/oauth-protected-resource" },
  { method: "GET", path: "/.well-known/oauth-protected-resource/mcp" },
  { method: "GET", path: "/.well-known/oauth-authorization-server" },
  { method: "GET", path: "/oauth/authorize" },
  { method: "POST", path: "/oauth/token" },
  { method: "POST", path: "/oauth/register" },
  { method: "POST", path: "/oauth/revoke" }
] as const

/** The protected resource's metadata address, as the MCP endpoint's 401 names it. */
export const resourceMetadataUrlOf = (origin: string) => `${origin}/.well-known/oauth-protected-resource/mcp`

/** Agents may run in a browser page of another origin; nothing here uses cookies. */
const open = { "access-control-allow-origin": "*", "cache-control": "no-store" } as const

const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status, headers: open })

const protocolError = (error: string, description: string, status = 400) => json({ error, error_description: description }, status)

const maxBodyBytes = 16 * 1024

/** A small form or JSON body, as text; none when too large. */
const bodyText = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (Number(request.headers["content-length"] ?? "0") > maxBodyBytes) return undefined
  const text = yield* Effect.orElseSucceed(request.text, () => "")
  return text.length > maxBodyBytes ? undefined : text
})

const formOf = (text: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(text)) if (!(name in out)) out[name] = value
  return out
}

const metadataOfResource = (origin: string) => ({
  resource: mcpResourceOf(origin),
  authorization_servers: [origin],
  scopes_supported: grantableScopes,
  bearer_methods_supported: ["header"],
  resource_name: "Birzha MCP"
})

const metadataOfServer = (origin: string) => ({
  issuer: origin,
  authorization_endpoint: `${origin}/oauth/authorize`,
  token_endpoint: `${origin}/oauth/token`,
  registration_endpoint: `${origin}/oauth/register`,
  revocation_endpoint: `${origin}/oauth/revoke`,
  scopes_supported: grantableScopes,
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  token_endpoint_auth_methods_supported: ["none"],
  revocation_endpoint_auth_methods_supported: ["none"],
  code_challenge_methods_supported: ["S256"],
  authorization_response_iss_parameter_supported: true,
  client_id_metadata_document_supported: true
})

const documentMaxBytes = 64 * 1024
const documentTimeoutMs = 5000

/**
 * Fetches a client ID metadata document through the webhooks' address policy: the host name is
 * resolved here and every address must be public (loopback only with
 * `BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK`, which also allows http there), the connection is pinned to
 * the checked address, no redirect is followed, 64 KB and 5 seconds at most.
 */
export const metadataFetcher = (allowLoopback: boolean): ClientResolver => ({
  allowHttpLoopback: allowLoopback,
  fetchDocument: async (url) => {
    if (url.protocol !== "https:" && !(allowLoopback && url.protocol === "http:")) throw new Error("the address must be https")
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    const addresses = ipBytes(host) !== undefined ? [{ address: host, family: host.includes(":") ? 6 : 4 }] : await lookup(host, { all: true, verbatim: true })
    if (addresses.length === 0) throw new Error(`${host} has no address`)
    for (const { address } of addresses) {
      const problem = addressProblem(address, { allowLoopback })
      if (problem !== undefined) throw new Error(`${host} resolves to ${problem}`)
    }
    const pinned = addresses[0]!
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    const text = await new Promise<string>((resolve, reject) => {
      const req = send(url, {
        method: "GET",
        headers: { accept: "application/json" },
        timeout: documentTimeoutMs,
        lookup: (_host, _options, callback) => callback(null, pinned.address, pinned.family)
      }, (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          reject(new Error(`it answered ${res.statusCode}`))
          return
        }
        const chunks: Array<Buffer> = []
        let size = 0
        res.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > documentMaxBytes) req.destroy(new Error("the document exceeds 64 KB"))
          else chunks.push(chunk)
        })
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
        res.on("error", reject)
      })
      req.on("timeout", () => req.destroy(new Error("no answer within 5 seconds")))
      req.on("error", reject)
      req.end()
    })
    return JSON.parse(text) as unknown
  }
})

const page = (message: string) =>
  HttpServerResponse.text(`This sign-in request cannot go on: ${message}.\n`, { status: 400, headers: { "cache-control": "no-store" } })

export const OAuthRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<SqlClient.SqlClient | ServerSecret | PublicOrigin | WebhookSettings>()
    const origin = yield* PublicOrigin
    const resolver = metadataFetcher((yield* WebhookSettings).allowHttpLoopback)
    const run = (
      effect: Effect.Effect<HttpServerResponse.HttpServerResponse, SqlError, SqlClient.SqlClient | ServerSecret | PublicOrigin | HttpServerRequest.HttpServerRequest>
    ) =>
      Effect.provide(effect, services).pipe(
        Effect.catchTag("SqlError", (error) =>
          Effect.as(Effect.logError("OAuth endpoint", error), protocolError("temporarily_unavailable", "The service is temporarily unavailable", 503)))
      )
    const resourceMetadata = Effect.succeed(json(metadataOfResource(origin)))
    yield* router.get("/.well-known/oauth-protected-resource", resourceMetadata)
    yield* router.get("/.well-known/oauth-protected-resource/mcp", resourceMetadata)
    yield* router.get("/.well-known/oauth-authorization-server", Effect.succeed(json(metadataOfServer(origin))))
    yield* router.get("/oauth/authorize", run(Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = Object.fromEntries(new URL(request.url, origin).searchParams)
      const outcome = yield* oauthAuthorize(params, resolver)
      return outcome._tag === "Problem"
        ? page(outcome.message)
        : HttpServerResponse.empty({ status: 302, headers: { location: outcome.location, "cache-control": "no-store" } })
    })))
    yield* router.post("/oauth/token", run(Effect.gen(function*() {
      const text = yield* bodyText
      if (text === undefined) return protocolError("invalid_request", "The body is too large")
      return yield* oauthToken(formOf(text)).pipe(
        Effect.map((answer) => json(answer)),
        Effect.catchTag("OAuthRefusal", (refusal) => Effect.succeed(protocolError(refusal.error, refusal.message)))
      )
    })))
    yield* router.post("/oauth/register", run(Effect.gen(function*() {
      const text = yield* bodyText
      if (text === undefined) return protocolError("invalid_client_metadata", "The body is too large")
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return protocolError("invalid_client_metadata", "The body must be JSON")
      }
      return yield* registerClient(body).pipe(
        Effect.map((answer) => json(answer, 201)),
        Effect.catchTag("OAuthRefusal", (refusal) => Effect.succeed(protocolError(refusal.error, refusal.message)))
      )
    })))
    yield* router.post("/oauth/revoke", run(Effect.gen(function*() {
      const text = yield* bodyText
      if (text === undefined) return protocolError("invalid_request", "The body is too large")
      yield* oauthRevoke(formOf(text))
      return json({})
    })))
  })
)
