import { createHash, randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { startTestService, type TestService } from "./testService.js"

// Client ID metadata documents (MCP authorization): the client id is the address of the client's
// own JSON document, fetched through the webhooks' address policy. Loopback is allowed here only
// because the service runs with BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK, as the webhook tests do.

let service: TestService
let owner: SignedIn
let documents: Server
let base = ""
const served = new Map<string, unknown>()

beforeAll(async () => {
  documents = createServer((req, res) => {
    const body = served.get(req.url ?? "")
    if (body === undefined) res.writeHead(404).end()
    else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`
  service = await startTestService("oauth_cimd", {
    env: { BIRZHA_SECRET: "oauth metadata documents: a secret of 32+ characters", BIRZHA_WEBHOOK_ALLOW_HTTP_LOOPBACK: "1" }
  })
  owner = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
})
afterAll(async () => {
  await service?.close()
  await new Promise<void>((resolve) => documents.close(() => resolve()))
})

const redirectUri = "http://127.0.0.1:9/callback"

const authorize = async (clientId: string, challenge: string) => {
  const response = await fetch(`${service.host.url}/oauth/authorize?${new URLSearchParams({
    response_type: "code", client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: "S256", state: "s"
  })}`, { redirect: "manual" })
  return { status: response.status, location: response.headers.get("location") ?? undefined, text: await response.text() }
}

describe("client ID metadata documents", () => {
  it("fetches the document named by the client id; the consent shows the client so identified; the code flow completes", async () => {
    const clientId = `${base}/agent/client.json`
    served.set("/agent/client.json", { client_id: clientId, client_name: "Documented agent", redirect_uris: [redirectUri], client_uri: "https://agent.example" })
    const verifier = randomBytes(48).toString("base64url")
    const started = await authorize(clientId, createHash("sha256").update(verifier).digest("base64url"))
    expect(started.status, started.text).toBe(302)
    const uuid = new URL(started.location!).pathname.split("/").at(-1)!
    const request = await service.call("GET", `/api/v1/oauth/requests/${uuid}`, { cookie: owner.cookie })
    expect(request.body.request.client).toEqual({ clientId, name: "Documented agent", kind: "metadata_document", clientUri: "https://agent.example" })
    const decided = await service.call("POST", `/api/v1/oauth/requests/${uuid}/decide`, { cookie: owner.cookie }, { decision: "allow" })
    const code = new URL(decided.body.redirectUrl).searchParams.get("code")!
    const token = await fetch(`${service.host.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri }).toString()
    })
    expect(token.status).toBe(200)
  })

  it("refuses a document that names another client, one that does not answer, and a redirect address it does not list", async () => {
    const challenge = createHash("sha256").update("x".repeat(43)).digest("base64url")
    served.set("/liar.json", { client_id: "https://someone.else/client.json", client_name: "Liar", redirect_uris: [redirectUri] })
    const liar = await authorize(`${base}/liar.json`, challenge)
    expect(liar.status).toBe(400)
    expect(liar.text).toContain("client_id must be its own address")
    const missing = await authorize(`${base}/missing.json`, challenge)
    expect(missing.status).toBe(400)
    expect(missing.text).toContain("answered 404")
    served.set("/other.json", { client_id: `${base}/other.json`, redirect_uris: ["http://127.0.0.1:9/elsewhere"] })
    const elsewhere = await authorize(`${base}/other.json`, challenge)
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.location).toBeUndefined()
  })

  it("refuses a document on a private address, as a webhook receiver is refused", async () => {
    const challenge = createHash("sha256").update("y".repeat(43)).digest("base64url")
    const refused = await authorize("https://10.0.0.1/client.json", challenge)
    expect(refused.status).toBe(400)
    expect(refused.text).toMatch(/10\.0\.0\.1 resolves to/)
  })
})
