import { describe, expect, it } from "vitest"
import { catalog, openApiDocument } from "../api/BirzhaApi.js"

const entry = (id: string) => catalog.find((e) => e.id === id)!

describe("the webhook operations in the catalog", () => {
  it("have the spec's ids, methods and paths, need a caller, and carry their scopes and approval flags", () => {
    const expected: ReadonlyArray<readonly [string, string, string, string, boolean]> = [
      ["webhooks.list", "GET", "/api/v1/webhook-endpoints", "webhooks:read", false],
      ["webhooks.create", "POST", "/api/v1/webhook-endpoints", "webhooks:write", true],
      ["webhooks.update", "PATCH", "/api/v1/webhook-endpoints/{uuid}", "webhooks:write", true],
      ["webhooks.delete", "DELETE", "/api/v1/webhook-endpoints/{uuid}", "webhooks:write", true],
      ["webhooks.approve", "POST", "/api/v1/webhook-endpoints/{uuid}/approve", "webhooks:write", false],
      ["webhooks.test", "POST", "/api/v1/webhook-endpoints/{uuid}/test", "webhooks:write", false],
      ["webhooks.rotate", "POST", "/api/v1/webhook-endpoints/{uuid}/rotate", "webhooks:write", true],
      ["webhooks.deliveries", "GET", "/api/v1/webhook-endpoints/{uuid}/deliveries", "webhooks:read", false],
      ["webhooks.replay", "POST", "/api/v1/webhook-endpoints/deliveries/{uuid}/replay", "webhooks:write", true],
      ["webhooks.recover", "POST", "/api/v1/webhook-endpoints/{uuid}/recover", "webhooks:write", true]
    ]
    for (const [id, method, path, scope, approval] of expected) {
      expect(entry(id), id).toMatchObject({ method, path, scopes: [scope], approval, access: "authenticated" })
    }
    expect(entry("webhooks.recover")).toMatchObject({ extension: true, specId: null })
    expect(entry("webhooks.create")).toMatchObject({ extension: false, specId: "webhooks.create" })
    // Approving the URL is the human step itself: a browser session on the service's own origin.
    expect(entry("webhooks.approve")).toMatchObject({ sessionOnly: true, sameOrigin: true })
    const document = openApiDocument()
    expect(document.paths["/api/v1/webhook-endpoints/{uuid}/rotate"]?.post).toMatchObject({ "x-scopes": ["webhooks:write"], "x-approval": true })
  })
})
