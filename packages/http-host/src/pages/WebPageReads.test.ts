import { LogLevel } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { signIn } from "../../../../testing/signIn.js"
import { startTestService, type TestService } from "../testService.js"

// A page whose read fails answers 503, and the host's log says why in one warning line: the
// operation, how it failed, the page's path; never the visitor's cookie or the page's query.

let service: TestService
const lines: Array<string> = []
beforeAll(async () => {
  // Effect's default logger writes through the console.
  vi.spyOn(console, "log").mockImplementation((...args: ReadonlyArray<unknown>) => {
    lines.push(args.map(String).join(" "))
  })
  service = await startTestService("web_page_reads", { trustProxy: true, logLevel: LogLevel.Warning })
})
afterAll(async () => {
  await service?.close()
  vi.restoreAllMocks()
})

describe("a page's failed read", () => {
  it("answers 503 and logs one warning line naming the operation, the failure and the page, without the cookie", async () => {
    const { cookie } = await signIn({ url: service.host.url, origin: service.origin, db: service.db })
    // The catalog's table gone: its read fails in the service, which answers 503 (the header's reads do not use it).
    await service.db.query("ALTER TABLE publications RENAME TO publications_away")
    try {
      const page = await fetch(`${service.host.url}/catalog?q=private+words&lang=en`, { headers: { cookie } })
      expect(page.status).toBe(503)
    } finally {
      await service.db.query("ALTER TABLE publications_away RENAME TO publications")
    }
    const logged = lines.filter((line) => line.includes("page read failed"))
    expect(logged).toHaveLength(1)
    const line = logged[0]!
    expect(line).toMatch(/ level=WARN .*message="page read failed"/)
    expect(line).toContain(' cause="The service is temporarily unavailable" failure="ServiceUnavailable 503" operation=listPublications page=/catalog ')
    // With the answer's request id (RequestId.ts), as the host's other lines of that request.
    expect(line).toMatch(/ requestId=[0-9a-f-]{36}$/)
    const token = cookie.slice(cookie.indexOf("=") + 1)
    expect(lines.join("\n")).not.toContain(token)
    expect(line).not.toContain("private")
  })
})
