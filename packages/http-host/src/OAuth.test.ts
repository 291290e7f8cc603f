import { createHash, randomBytes } from "node:crypto"
import { defaultAgentScopes } from "@birzha/domain/internal"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { Client, StreamableHTTPClientTransport } from "./testMcp.js"
import { sdkProvider } from "./testOAuth.js"
import { startTestService, type TestService } from "./testService.js"

let service: TestService
let owner: SignedIn

beforeAll(async () => {
  service = await startTestService("oauth", { env: { BIRZHA_SECRET: "oauth tests: a server secret of 32+ characters long" } })
  owner = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
})
afterAll(async () => {
  await service?.close()
})

const redirectUri = "http://127.0.0.1:9/callback"
const resourceOf = () => `${service.origin}/mcp`

const form = async (path: string, fields: Record<string, string>) => {
  const response = await fetch(`${service.host.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString()
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

const register = async (uris: ReadonlyArray<string> = [redirectUri]) => {
  const response = await fetch(`${service.host.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Test agent", redirect_uris: uris, token_endpoint_auth_method: "none" })
  })
  expect(response.status).toBe(201)
  return ((await response.json()) as { client_id: string }).client_id
}

const pkce = () => {
  const verifier = randomBytes(48).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

/** GET /oauth/authorize without following: the Location (or the page's status). */
const authorizeAt = async (params: Record<string, string>) => {
  const response = await fetch(`${service.host.url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: "manual" })
  return { status: response.status, location: response.headers.get("location") ?? undefined, text: await response.text() }
}

const authorizeParams = (clientId: string, challenge: string, extra: Record<string, string> = {}) => ({
  response_type: "code",
  client_id: clientId,
  redirect_uri: redirectUri,
  code_challenge: challenge,
  code_challenge_method: "S256",
  state: "st-1",
  resource: resourceOf(),
  scope: "profiles:read tasks:read",
  ...extra
})

/** Authorize and consent as `owner` (the page's own API call), returning the code. */
const codeFor = async (clientId: string, challenge: string, decision: "allow" | "deny" = "allow") => {
  const started = await authorizeAt(authorizeParams(clientId, challenge))
  expect(started.status, started.text).toBe(302)
  const consent = new URL(started.location!)
  expect(consent.pathname).toMatch(/^\/oauth\/consent\/[0-9a-f-]{36}$/)
  const uuid = consent.pathname.split("/").at(-1)!
  const decided = await service.call("POST", `/api/v1/oauth/requests/${uuid}/decide`, { cookie: owner.cookie }, { decision })
  expect(decided.status, JSON.stringify(decided.body)).toBe(200)
  const back = new URL(decided.body.redirectUrl)
  expect(back.searchParams.get("state")).toBe("st-1")
  expect(back.searchParams.get("iss")).toBe(service.origin)
  return { back, uuid, code: back.searchParams.get("code") ?? "" }
}

const exchange = (clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) =>
  form("/oauth/token", {
    grant_type: "authorization_code",
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    resource: resourceOf(),
    ...extra
  })

const connected = async () => {
  const clientId = await register()
  const { challenge, verifier } = pkce()
  const { code } = await codeFor(clientId, challenge)
  const tokens = await exchange(clientId, code, verifier)
  expect(tokens.status, JSON.stringify(tokens.body)).toBe(200)
  return { clientId, tokens: tokens.body as { access_token: string; refresh_token: string; expires_in: number; scope: string } }
}

/** What /mcp answers a tools/list with this bearer token. */
const mcpStatus = async (token: string) => {
  const response = await fetch(`${service.host.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
  })
  await response.text()
  return response.status
}

describe("MCP authorization: discovery", () => {
  it("answers 401 with WWW-Authenticate naming the protected resource metadata, which names this server", async () => {
    const response = await fetch(`${service.host.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
    })
    expect(response.status).toBe(401)
    const challenge = response.headers.get("www-authenticate") ?? ""
    expect(challenge).toBe(`Bearer resource_metadata="${service.origin}/.well-known/oauth-protected-resource/mcp", scope="${defaultAgentScopes.join(" ")}"`)
    const resource = await (await fetch(`${service.host.url}/.well-known/oauth-protected-resource/mcp`)).json() as Record<string, any>
    expect(resource).toMatchObject({ resource: resourceOf(), authorization_servers: [service.origin], bearer_methods_supported: ["header"] })
    const server = await (await fetch(`${service.host.url}/.well-known/oauth-authorization-server`)).json() as Record<string, any>
    expect(server).toMatchObject({
      issuer: service.origin,
      authorization_endpoint: `${service.origin}/oauth/authorize`,
      token_endpoint: `${service.origin}/oauth/token`,
      registration_endpoint: `${service.origin}/oauth/register`,
      revocation_endpoint: `${service.origin}/oauth/revoke`,
      code_challenge_methods_supported: ["S256"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: ["none"],
      client_id_metadata_document_supported: true
    })
  })
})

describe("MCP authorization: the code flow", () => {
  it("issues short-lived access and rotating refresh tokens, stored only as keyed hashes, that act with the granted scopes", async () => {
    const { tokens } = await connected()
    expect(tokens.access_token).toMatch(/^birzha_at_/)
    expect(tokens.refresh_token).toMatch(/^birzha_rt_/)
    expect(tokens.expires_in).toBe(900)
    expect(tokens.scope).toBe("profiles:read tasks:read")
    const stored = await service.db.query("SELECT token_hash FROM oauth_tokens")
    const hashes = stored.rows.map((row) => row.token_hash as string)
    expect(hashes).not.toContain(tokens.access_token)
    expect(hashes).not.toContain(tokens.refresh_token)
    const codes = await service.db.query("SELECT code_hash FROM oauth_codes")
    for (const row of codes.rows) expect(row.code_hash).not.toMatch(/^birzha_ac_/)
    expect(await mcpStatus(tokens.access_token)).toBe(200)
    // The token's scopes, like a key's: a tool of another scope is not there.
    const client = new Client({ name: "oauth-test", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${service.host.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } }
    }))
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toContain("tasks_list")
    expect(names).not.toContain("tasks_save")
    await client.close()
  })

  it("rotates the refresh token; presenting a used one disconnects the whole family", async () => {
    const { clientId, tokens } = await connected()
    const first = await form("/oauth/token", { grant_type: "refresh_token", client_id: clientId, refresh_token: tokens.refresh_token, resource: resourceOf() })
    expect(first.status).toBe(200)
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token)
    expect(await mcpStatus(first.body.access_token)).toBe(200)
    const reused = await form("/oauth/token", { grant_type: "refresh_token", client_id: clientId, refresh_token: tokens.refresh_token })
    expect(reused).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
    // Every token of the connection stops, the newest included.
    expect(await mcpStatus(first.body.access_token)).toBe(401)
    expect(await mcpStatus(tokens.access_token)).toBe(401)
    const newest = await form("/oauth/token", { grant_type: "refresh_token", client_id: clientId, refresh_token: first.body.refresh_token })
    expect(newest).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
  })

  it("revokes: an access token alone, a refresh token with its connection; revoked tokens are refused", async () => {
    const a = await connected()
    expect((await form("/oauth/revoke", { token: a.tokens.access_token, client_id: a.clientId })).status).toBe(200)
    expect(await mcpStatus(a.tokens.access_token)).toBe(401)
    const refreshed = await form("/oauth/token", { grant_type: "refresh_token", client_id: a.clientId, refresh_token: a.tokens.refresh_token })
    expect(refreshed.status).toBe(200)
    expect(await mcpStatus(refreshed.body.access_token)).toBe(200)
    expect((await form("/oauth/revoke", { token: refreshed.body.refresh_token })).status).toBe(200)
    expect(await mcpStatus(refreshed.body.access_token)).toBe(401)
    expect((await form("/oauth/revoke", { token: "birzha_rt_unknown" })).status).toBe(200)
  })

  it("lists the connection among the person's agents; disconnecting it makes the next call 401", async () => {
    const { tokens } = await connected()
    const listed = await service.call("GET", "/api/v1/agents", { cookie: owner.cookie })
    expect(listed.status).toBe(200)
    const agent = listed.body.items[0]
    expect(agent).toMatchObject({ client: { name: "Test agent", kind: "registered" }, scopes: ["profiles:read", "tasks:read"] })
    expect(agent.revokedAt).toBeUndefined()
    // Not a key: the keys list does not show it.
    const keys = await service.call("GET", "/api/v1/keys", { cookie: owner.cookie })
    expect(keys.body.items.map((key: { uuid: string }) => key.uuid)).not.toContain(agent.uuid)
    const revoked = await service.call("POST", `/api/v1/agents/${agent.uuid}/revoke`, { cookie: owner.cookie })
    expect(revoked.status).toBe(200)
    expect(revoked.body.agent.revokedAt).toBeDefined()
    expect(await mcpStatus(tokens.access_token)).toBe(401)
  })
})

describe("MCP authorization: refusals", () => {
  it("refuses a wrong PKCE verifier, and the code is spent by the attempt", async () => {
    const clientId = await register()
    const { challenge, verifier } = pkce()
    const { code } = await codeFor(clientId, challenge)
    const wrong = await exchange(clientId, code, pkce().verifier)
    expect(wrong).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
    expect(await exchange(clientId, code, verifier)).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
  })

  it("refuses the plain method and a request without a challenge, back at the client's redirect address", async () => {
    const clientId = await register()
    const { verifier } = pkce()
    const plain = await authorizeAt(authorizeParams(clientId, verifier, { code_challenge_method: "plain" }))
    expect(plain.status).toBe(302)
    const back = new URL(plain.location!)
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri)
    expect(back.searchParams.get("error")).toBe("invalid_request")
    expect(back.searchParams.get("state")).toBe("st-1")
    const params: Record<string, string> = authorizeParams(clientId, "x")
    delete params["code_challenge"]
    expect(new URL((await authorizeAt(params)).location!).searchParams.get("error")).toBe("invalid_request")
  })

  it("refuses a reused code and disconnects what its first use made", async () => {
    const clientId = await register()
    const { challenge, verifier } = pkce()
    const { code } = await codeFor(clientId, challenge)
    const first = await exchange(clientId, code, verifier)
    expect(first.status).toBe(200)
    expect(await exchange(clientId, code, verifier)).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
    expect(await mcpStatus(first.body.access_token)).toBe(401)
  })

  it("refuses a redirect URI the client did not register: shown at authorize, never redirected; refused at the token endpoint", async () => {
    const clientId = await register()
    const { challenge, verifier } = pkce()
    const elsewhere = await authorizeAt(authorizeParams(clientId, challenge, { redirect_uri: "https://attacker.example/cb" }))
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.location).toBeUndefined()
    expect(elsewhere.text).toContain("redirect_uri")
    const { code } = await codeFor(clientId, challenge)
    expect(await exchange(clientId, code, verifier, { redirect_uri: "http://127.0.0.1:9/other" })).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
    // Registration refuses an address that is neither https nor loopback http.
    const refused = await fetch(`${service.host.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://attacker.example/cb"] })
    })
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_redirect_uri")
  })

  it("refuses another resource at authorize and at the token endpoint, and a token bound to another resource at /mcp", async () => {
    const clientId = await register()
    const { challenge, verifier } = pkce()
    const other = await authorizeAt(authorizeParams(clientId, challenge, { resource: "https://other.example/mcp" }))
    expect(new URL(other.location!).searchParams.get("error")).toBe("invalid_target")
    const { code } = await codeFor(clientId, challenge)
    expect(await exchange(clientId, code, verifier, { resource: "https://other.example/mcp" })).toMatchObject({ status: 400, body: { error: "invalid_target" } })
    const { tokens } = await connected()
    await service.db.query("UPDATE oauth_tokens SET resource = 'https://other.example/mcp' WHERE kind = 'access' AND resource = $1 AND used_at IS NULL AND revoked_at IS NULL", [resourceOf()])
    expect(await mcpStatus(tokens.access_token)).toBe(401)
  })

  it("refuses an expired code and an expired access token", async () => {
    const clientId = await register()
    const { challenge, verifier } = pkce()
    const { code } = await codeFor(clientId, challenge)
    await service.db.query("UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL")
    expect(await exchange(clientId, code, verifier)).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
    const { tokens } = await connected()
    expect(await mcpStatus(tokens.access_token)).toBe(200)
    await service.db.query("UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'access'")
    expect(await mcpStatus(tokens.access_token)).toBe(401)
  })

  it("sends access_denied back when the person denies, and the request cannot be decided again", async () => {
    const clientId = await register()
    const { challenge } = pkce()
    const { back, uuid } = await codeFor(clientId, challenge, "deny")
    expect(back.searchParams.get("error")).toBe("access_denied")
    expect(back.searchParams.get("code")).toBeNull()
    const again = await service.call("POST", `/api/v1/oauth/requests/${uuid}/decide`, { cookie: owner.cookie }, { decision: "allow" })
    expect(again.status).toBe(409)
  })

  it("refuses an unknown client, a scope no agent may hold, and an unknown grant type", async () => {
    const { challenge } = pkce()
    expect((await authorizeAt(authorizeParams("birzha_client_nobody", challenge))).status).toBe(400)
    const clientId = await register()
    const scoped = await authorizeAt(authorizeParams(clientId, challenge, { scope: "keys:write" }))
    expect(new URL(scoped.location!).searchParams.get("error")).toBe("invalid_scope")
    expect(await form("/oauth/token", { grant_type: "password" })).toMatchObject({ status: 400, body: { error: "unsupported_grant_type" } })
  })
})

describe("MCP authorization with the official SDK client", () => {
  it("discovers from the 401, registers, is authorized, lists and calls tools", async () => {
    const consentThroughApi = async (url: URL) => {
      const started = await fetch(url.toString().replace(service.origin, service.host.url), { redirect: "manual" })
      const uuid = new URL(started.headers.get("location")!).pathname.split("/").at(-1)!
      const decided = await service.call("POST", `/api/v1/oauth/requests/${uuid}/decide`, { cookie: owner.cookie }, { decision: "allow" })
      return new URL(decided.body.redirectUrl).searchParams.get("code")!
    }
    const sdk = sdkProvider(redirectUri, consentThroughApi)
    const serverUrl = new URL(`${service.origin}/mcp`)
    const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: sdk.provider })
    await expect(new Client({ name: "sdk", version: "1" }).connect(first)).rejects.toThrow(/Unauthorized/)
    await first.finishAuth(await sdk.code())
    expect(sdk.tokens()?.access_token).toMatch(/^birzha_at_/)
    const client = new Client({ name: "sdk", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: sdk.provider }))
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toContain("get_my_capabilities")
    const own = await client.callTool({ name: "get_my_capabilities", arguments: {} })
    expect(own.isError).toBeFalsy()
    await client.close()
  })
})
