import { describe, expect, it } from "vitest"
import { eventCatalogOf } from "../events/EventCatalog.js"
import { catalog, openApiDocument } from "./BirzhaApi.js"

// The published contract, byte for byte: a change of layout or of how declarations are written
// must not move it. A deliberate change of the contract updates the files (`vitest -u`), and the
// diff of `__snapshots__/` shows it in review.
describe("the published contract", () => {
  it("the OpenAPI document is exactly the recorded one", async () => {
    await expect(`${JSON.stringify(openApiDocument(), null, 2)}\n`).toMatchFileSnapshot("__snapshots__/openapi.json")
  })

  it("the event catalog is exactly the recorded one", async () => {
    await expect(`${JSON.stringify(eventCatalogOf(catalog), null, 2)}\n`).toMatchFileSnapshot("__snapshots__/event-catalog.json")
  })
})
