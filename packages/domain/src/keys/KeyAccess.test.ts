import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import type { KeyActor } from "../kernel/Authentication.js"
import { catalog } from "../api/BirzhaApi.js"
import { authorizeKey } from "./KeyAccess.js"

const entry = (id: string) => {
  const found = catalog.find((e) => e.id === id)
  if (found === undefined) throw new Error(`no ${id} in the catalog`)
  return found
}

const key = (overrides: Partial<KeyActor>): KeyActor => ({
  via: "key",
  keyUuid: "00000000-0000-4000-8000-000000000001",
  keyName: "test",
  keyKind: "personal",
  scopes: ["tasks:read", "tasks:submit"],
  httpEnabled: true,
  mcpEnabled: true,
  accountUuid: "00000000-0000-4000-8000-000000000002",
  email: "key@example.com",
  profileUuid: "00000000-0000-4000-8000-000000000003",
  profileName: "Key",
  profileType: "Физлицо",
  expiresAt: new Date(Date.now() + 3_600_000),
  ...overrides
})

const codeOf = (effect: ReturnType<typeof authorizeKey>) => {
  const result = Effect.runSync(Effect.either(effect))
  return Either.isLeft(result) ? (result.left.constructor as unknown as { code: string }).code : "allowed"
}

describe("authorizeKey", () => {
  it("checks the access switch of the channel the call came through, and only that one", () => {
    const list = entry("tasks.list")
    expect(codeOf(authorizeKey(list, key({ mcpEnabled: false }), { channel: "mcp" }))).toBe("key_mcp_disabled")
    expect(codeOf(authorizeKey(list, key({ mcpEnabled: false }), { channel: "http" }))).toBe("allowed")
    expect(codeOf(authorizeKey(list, key({ httpEnabled: false }), { channel: "http" }))).toBe("key_http_disabled")
    expect(codeOf(authorizeKey(list, key({ httpEnabled: false }), { channel: "mcp" }))).toBe("allowed")
  })

  it("then session-only, scope and approval, in that order", () => {
    expect(codeOf(authorizeKey(entry("keys.list"), key({}), { channel: "mcp" }))).toBe("session_required")
    expect(codeOf(authorizeKey(entry("tasks.save"), key({}), { channel: "mcp" }))).toBe("insufficient_scope")
    expect(codeOf(authorizeKey(entry("tasks.submit"), key({}), { channel: "mcp" }))).toBe("approval_required")
    expect(codeOf(authorizeKey(entry("tasks.submit"), key({}), { channel: "mcp", approved: true }))).toBe("allowed")
  })
})
