import { catalog, type CatalogEntry, grantableScopes } from "@birzha/domain"
import { randomUUID } from "node:crypto"
import { Option } from "effect"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../testing/signIn.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { entryOfTool, toolNameOf, toolOf } from "./handlers/McpTools.js"
import { type RunningHost } from "./testing.js"
import { startTestService, type TestService } from "./testService.js"

/**
 * The authorization matrix, generated from the catalog: every operation × every kind of caller
 * gets the answer its declaration (access, scopes, approval, sessionOnly) implies. An operation
 * added later with missing or wrong flags fails here without anyone writing a test for it.
 * "Allowed" means the call got past authentication and authorization: anything but 401 and 403
 * (bodies are empty, so most commands answer 400 and touch nothing). Each operation is also
 * called as an MCP tool: by a key with MCP access off (403 `key_mcp_disabled`), and by keys
 * with and without its scope (the tool is hidden, `unknown_tool`, unless the key may run it).
 * The session cookie without `Origin` may read but never change anything (403 `forbidden_origin`
 * for every method but GET): the cookie is sent by the browser whichever page asks.
 */

const origin = "http://localhost:8080"
let service: TestService
let host: RunningHost
let db: Pg.Client
let owner: SignedIn
/** Used for public operations: `auth.logout` with it revokes it, and the matrix goes on. */
let spare: SignedIn
let keys: { with: Key; without: Key; httpOff: Key; mcpOff: Key }
let ip = 0

interface Key {
  readonly uuid: string
  readonly secret: string
  revision: number
}

const send = async (entry: CatalogEntry, who: { readonly cookie?: string; readonly bearer?: string; readonly withoutOrigin?: true }, body: object = {}) => {
  const path = entry.path.replace(/\{[^}]+\}/g, () => randomUUID())
  ip++
  const response = await fetch(`${host.url}${path}`, {
    method: entry.method,
    headers: {
      "content-type": "application/json",
      ...(who.withoutOrigin ? {} : { origin }),
      "x-forwarded-for": `203.0.${Math.floor(ip / 250) % 250}.${(ip % 250) + 1}`,
      ...(who.cookie === undefined ? {} : { cookie: who.cookie }),
      ...(who.bearer === undefined ? {} : { authorization: `Bearer ${who.bearer}` })
    },
    ...(Option.isSome(entry.schemas.payload) ? { body: JSON.stringify(body) } : {})
  })
  const text = await response.text()
  let code: string | undefined
  try {
    code = JSON.parse(text)?.error?.code
  } catch {
    code = undefined
  }
  return { status: response.status, code }
}

/** Codes that mean "refused by authentication or authorization" (a tool the key may not see is `unknown_tool`). */
const refusals = new Set(["unauthenticated", "insufficient_scope", "approval_required", "session_required", "key_required", "key_http_disabled", "key_mcp_disabled", "unknown_tool"])

/**
 * The operation as an MCP tool call (JSON-RPC `tools/call` to /mcp, stateless, JSON answer):
 * path parameters as random UUIDs, nothing else. The HTTP status of /mcp itself when it refuses
 * the key, otherwise the tool result's own error code (or none).
 */
const outputs = new AjvJsonSchemaValidator()

const sendMcp = async (entry: CatalogEntry, secret: string) => {
  const args = Object.fromEntries([...entry.path.matchAll(/\{(\w+)\}/g)].map((match) => [match[1], randomUUID()]))
  const response = await fetch(`${host.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: toolNameOf(entry.id), arguments: args } })
  })
  const body = (await response.json()) as {
    error?: { code?: string }
    result?: { isError?: boolean; content?: ReadonlyArray<{ text?: string }>; structuredContent?: unknown }
  }
  if (response.status !== 200) return { status: response.status, code: body.error?.code }
  // A successful structured answer fits the tool's outputSchema.
  const output = entryOfTool(toolNameOf(entry.id)) === undefined ? undefined : toolOf(entry).outputSchema
  if (body.result?.isError !== true && output !== undefined && body.result?.structuredContent !== undefined) {
    const checked = outputs.getValidator(output as never)(body.result.structuredContent)
    expect(checked.valid, `${entry.id}: ${checked.errorMessage ?? ""}`).toBe(true)
  }
  const text = body.result?.content?.[0]?.text ?? "null"
  let code: string | undefined
  try {
    code = body.result?.isError === true ? JSON.parse(text)?.error?.code : undefined
  } catch {
    code = undefined
  }
  return { status: 200, code }
}

const checkMcp = (entry: CatalogEntry, who: string, got: { status: number; code: string | undefined }, expected: Expected | "unknown_tool") => {
  const label = `${entry.id} over MCP as ${who}: ${got.status} ${got.code ?? ""}`
  if (expected === "unknown_tool") {
    expect({ status: got.status, code: got.code }, label).toEqual({ status: 200, code: "unknown_tool" })
  } else if ("allowed" in expected) {
    expect(got.status, label).toBe(200)
    expect(refusals.has(got.code ?? ""), label).toBe(false)
    expect(["internal_error", "unavailable"], label).not.toContain(got.code)
  } else {
    expect({ status: got.status, code: got.code }, label).toEqual({ status: expected.status, code: expected.code })
  }
}

const setScopes = async (key: Key, scopes: ReadonlyArray<string>, httpEnabled = true, mcpEnabled = true) => {
  const response = await fetch(`${host.url}/api/v1/keys/${key.uuid}`, {
    method: "PUT",
    headers: { "content-type": "application/json", origin, cookie: owner.cookie },
    body: JSON.stringify({ requestUuid: randomUUID(), expectedRevision: key.revision, name: "matrix", scopes, httpEnabled, mcpEnabled })
  })
  expect(response.status, await response.clone().text()).toBe(200)
  key.revision = ((await response.json()) as { key: { revision: number } }).key.revision
}

const makeKey = async (): Promise<Key> => {
  const response = await fetch(`${host.url}/api/v1/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", origin, cookie: owner.cookie },
    body: JSON.stringify({ requestUuid: randomUUID(), name: "matrix", scopes: [], httpEnabled: true, mcpEnabled: true })
  })
  expect(response.status).toBe(200)
  const body = (await response.json()) as { key: { uuid: string; revision: number }; secret: string }
  return { uuid: body.key.uuid, secret: body.secret, revision: body.key.revision }
}

beforeAll(async () => {
  service = await startTestService("authz_matrix", { publicOrigin: origin, trustProxy: true })
  ;({ host, db } = service)
  owner = await signIn({ url: host.url, origin, db })
  spare = await signIn({ url: host.url, origin, db })
  // The session may moderate, so moderation answers by its declaration, not the role check.
  await db.query("INSERT INTO moderators (email, source) VALUES ($1, 'cli')", [owner.email])
  keys = { with: await makeKey(), without: await makeKey(), httpOff: await makeKey(), mcpOff: await makeKey() }
  await setScopes(keys.httpOff, grantableScopes, false, true)
  await setScopes(keys.mcpOff, grantableScopes, true, false)
})
afterAll(async () => {
  await service?.close()
})

type Expected = { readonly allowed: true } | { readonly status: 401 | 403; readonly code: string }
const allowed: Expected = { allowed: true }

/** What the declaration says each caller gets. */
const expectations = (entry: CatalogEntry) => {
  const keyRule = (holdsScope: boolean): Expected =>
    entry.sessionOnly
      ? { status: 403, code: "session_required" }
      : !holdsScope
      ? { status: 403, code: "insufficient_scope" }
      : entry.approval
      ? { status: 403, code: "approval_required" }
      : allowed
  return {
    anonymous: { status: 401, code: "unauthenticated" } as Expected,
    session: entry.keyOnly ? { status: 403, code: "key_required" } as Expected : allowed,
    // Checked before the registry's own refusals: a change made with the cookie needs the page's Origin.
    sessionWithoutOrigin: entry.method !== "GET"
      ? { status: 403, code: "forbidden_origin" } as Expected
      : entry.keyOnly
      ? { status: 403, code: "key_required" } as Expected
      : allowed,
    keyWithoutScope: keyRule(entry.scopes.length === 0),
    keyWithScope: keyRule(true),
    keyHttpDisabled: { status: 403, code: "key_http_disabled" } as Expected,
    // Over MCP a tool the key may not run is not listed, so calling it answers unknown_tool; a key
    // with MCP access off is refused by /mcp itself, for every operation.
    mcpWithoutScope: entry.sessionOnly || entry.scopes.length > 0 ? "unknown_tool" as const : allowed,
    mcpWithScope: entry.sessionOnly ? "unknown_tool" as const : allowed,
    mcpDisabled: { status: 403, code: "key_mcp_disabled" } as Expected
  }
}

const check = (entry: CatalogEntry, who: string, got: { status: number; code: string | undefined }, expected: Expected) => {
  const label = `${entry.id} as ${who}: ${got.status} ${got.code ?? ""}`
  if ("allowed" in expected) {
    expect([401, 403], label).not.toContain(got.status)
    // A failure of the service is never "allowed": it is a failure.
    expect(got.status, label).toBeLessThan(500)
  } else {
    expect({ status: got.status, code: got.code }, label).toEqual({ status: expected.status, code: expected.code })
  }
}

/** The operations the matrix ran, compared with the catalog at the end. */
const covered = new Set<string>()

describe("the authorization matrix (generated from the catalog)", () => {
  for (const entry of catalog) {
    it(`${entry.id} (${entry.access}${entry.sessionOnly ? ", session only" : ""}${entry.approval ? ", approval" : ""}${entry.scopes.length > 0 ? `, ${entry.scopes.join(" | ")}` : ""})`, async () => {
      covered.add(entry.id)
      if (entry.access === "public") {
        // Public operations ignore credentials: the same answer for every caller, never 401/403;
        // except that a public session-only one (a browser's sign-in step) refuses a key (one with
        // HTTP access off is no credential over HTTP, as for every public operation).
        const anonymous = await send(entry, {})
        expect([401, 403], `${entry.id} anonymous: ${anonymous.status}`).not.toContain(anonymous.status)
        for (const [who, credential] of [
          ["keyWithScope", { bearer: keys.with.secret }],
          ["keyHttpDisabled", { bearer: keys.httpOff.secret }],
          ["session", { cookie: spare.cookie }]
        ] as const) {
          const got = await send(entry, credential)
          if (entry.sessionOnly && who === "keyWithScope") expect({ status: got.status, code: got.code }, `${entry.id} as ${who}`).toEqual({ status: 403, code: "session_required" })
          else expect(got.status, `${entry.id} as ${who}`).toBe(anonymous.status)
        }
        // A public change is a sign-in step (same origin only); a public read ignores the missing Origin.
        const withoutOrigin = await send(entry, { cookie: spare.cookie, withoutOrigin: true })
        if (entry.method === "GET") expect(withoutOrigin.status, `${entry.id} as sessionWithoutOrigin`).toBe(anonymous.status)
        else expect({ status: withoutOrigin.status, code: withoutOrigin.code }, `${entry.id} as sessionWithoutOrigin`).toEqual({ status: 403, code: "forbidden_origin" })
        // The health probes are no tools (handlers/McpTools.ts): their names are unknown over MCP.
        const tool = entryOfTool(toolNameOf(entry.id)) !== undefined
        checkMcp(entry, "keyWithScope", await sendMcp(entry, keys.with.secret), entry.sessionOnly || !tool ? "unknown_tool" : allowed)
        checkMcp(entry, "keyMcpDisabled", await sendMcp(entry, keys.mcpOff.secret), { status: 403, code: "key_mcp_disabled" })
        return
      }
      const expected = expectations(entry)
      const withoutScopes = grantableScopes.filter((scope) => !entry.scopes.includes(scope))
      await setScopes(keys.with, entry.scopes.filter((scope) => grantableScopes.includes(scope)))
      await setScopes(keys.without, withoutScopes)
      check(entry, "anonymous", await send(entry, {}), expected.anonymous)
      check(entry, "keyHttpDisabled", await send(entry, { bearer: keys.httpOff.secret }), expected.keyHttpDisabled)
      check(entry, "keyWithoutScope", await send(entry, { bearer: keys.without.secret }), expected.keyWithoutScope)
      check(entry, "keyWithScope", await send(entry, { bearer: keys.with.secret }), expected.keyWithScope)
      check(entry, "session", await send(entry, { cookie: owner.cookie }), expected.session)
      check(entry, "sessionWithoutOrigin", await send(entry, { cookie: owner.cookie, withoutOrigin: true }), expected.sessionWithoutOrigin)
      checkMcp(entry, "keyMcpDisabled", await sendMcp(entry, keys.mcpOff.secret), expected.mcpDisabled)
      checkMcp(entry, "keyWithoutScope", await sendMcp(entry, keys.without.secret), expected.mcpWithoutScope)
      checkMcp(entry, "keyWithScope", await sendMcp(entry, keys.with.secret), expected.mcpWithScope)
      // HTTP access off does not touch MCP: the channels are enabled separately (this key holds every scope).
      checkMcp(entry, "keyHttpDisabled", await sendMcp(entry, keys.httpOff.secret), expected.mcpWithScope)
      // An input flag never widens the call: with the flag set, the key needs the widened operation's rights too.
      for (const [field, widenedId] of Object.entries(entry.widenedBy)) {
        const widened = catalog.find((other) => other.id === widenedId)
        if (widened === undefined) throw new Error(`${entry.id} widens to ${widenedId}, which is not in the catalog`)
        const body = { [field]: true, ...(entry.id === "publications.create" ? { kind: "task" } : {}) }
        const flagged = await send(entry, { bearer: keys.with.secret }, body)
        expect(flagged.status, `${entry.id} with ${field}: true as a key holding only ${entry.scopes.join(", ")}`).toBe(403)
        await setScopes(keys.with, [...entry.scopes, ...widened.scopes].filter((scope) => grantableScopes.includes(scope)))
        const approvalNeeded = await send(entry, { bearer: keys.with.secret }, body)
        expect(approvalNeeded.code, `${entry.id} with ${field}: true needs what ${widenedId} needs`).toBe(widened.approval ? "approval_required" : undefined)
      }
    })
  }

  it("ran every operation of the catalog, and only those", () => {
    expect([...covered].sort()).toEqual(catalog.map((entry) => entry.id).sort())
  })
})

describe("the catalog's authorization declarations", () => {
  /** Authenticated operations any key may call whatever its scopes: they only describe the caller. */
  const anyKey = new Set(["getMyCapabilities", "auth.session", "integrationCommands.prepare", "integrationCommands.commit"])

  it("every authenticated operation names a scope, is session-only, or is one of the few any caller may use", () => {
    const unscoped = catalog.filter((e) => e.access === "authenticated" && !e.sessionOnly && e.scopes.length === 0 && !anyKey.has(e.id))
    expect(unscoped.map((e) => e.id)).toEqual([])
  })

  it("administrative operations (moderation.*, keys.*) are session-only, and their scopes are never grantable", () => {
    for (const entry of catalog.filter((e) => /^(moderation|keys)\./.test(e.id))) {
      expect(entry.sessionOnly, entry.id).toBe(true)
      expect(entry.access, entry.id).toBe("authenticated")
      for (const scope of entry.scopes) expect(grantableScopes, entry.id).not.toContain(scope)
    }
  })

  it("every scope a key-callable operation names can be granted", () => {
    for (const entry of catalog.filter((e) => e.access === "authenticated" && !e.sessionOnly)) {
      for (const scope of entry.scopes) expect(grantableScopes, entry.id).toContain(scope)
    }
  })
})
