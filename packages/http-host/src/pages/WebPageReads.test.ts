import { catalog } from "@birzha/domain"
import { advanceRuns } from "@birzha/domain/internal"
import { LogLevel, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { signIn, type SignedIn } from "../../../../testing/signIn.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"
import { startTestService, type TestService } from "../testService.js"

// A page whose read fails answers 503, and the host's log says why in one warning line: the
// operation, how it failed, the page's path; never the visitor's cookie or the page's query. A
// part of a signed-in page the service fails to read fails the page too: only a refusal shows the
// part as absent (packages/web/src/server/api.ts, unlessRefused).

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

/** One operation over HTTP at its declared route, as `who`: path parameters from the arguments, the rest as the body. */
const act = async (who: SignedIn, id: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> => {
  const entry = catalog.find((candidate) => candidate.id === id)
  if (entry === undefined) throw new Error(`no operation ${id} in the catalog`)
  const rest: Record<string, unknown> = { ...args }
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = String(rest[name])
    delete rest[name]
    return encodeURIComponent(value)
  })
  const answer = await service.call(entry.method, path, who, { requestUuid: randomUUID(), ...rest })
  expect(answer.status, `${id}: ${JSON.stringify(answer.body)}`).toBe(200)
  return answer.body
}

describe("a signed-in page's part the service cannot read", () => {
  it("fails the learner's course page (503, logged) instead of showing an empty review form of their own, and shows it again once the read works", async () => {
    const people = { url: service.host.url, origin: service.origin, db: service.db }
    const [author, learner] = await Promise.all([signIn(people), signIn(people)])
    const draft = await act(author, "learning.courses.create", { title: "Курс для чтения", kind: "single" })
    const edited = await act(author, "learning.courses.update", {
      course: draft.uuid,
      expectedRevision: draft.revision,
      nodes: [{ nodeKey: "m1", kind: "module", title: "Модуль" }, { nodeKey: "s1", parentKey: "m1", kind: "step", stepType: "text", title: "Шаг", body: "Текст" }]
    })
    await act(author, "learning.courses.publish", { course: draft.uuid, expectedRevision: edited.revision, changelog: "" })
    const run = await act(author, "learning.runs.create", {
      course: draft.uuid, versionNumber: 1, title: "Поток", pacing: "cohort", startsAt: new Date(Date.now() - 60_000).toISOString(),
      admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 }
    })
    await act(author, "learning.runs.update", { run: run.uuid, expectedRevision: run.revision, publish: true })
    const worker = ManagedRuntime.make(testPgLayer(service.database.url, 1))
    try {
      await worker.runPromise(advanceRuns(new Date()))
    } finally {
      await worker.dispose()
    }
    const enrollment = await act(learner, "learning.enrollments.enroll", { run: run.uuid })
    await act(learner, "learning.enrollments.start", { enrollment: enrollment.uuid, expectedRevision: enrollment.revision })
    const player = `/learning/${enrollment.uuid}?lang=en`
    const before = await fetch(`${service.host.url}${player}`, { headers: { cookie: learner.cookie } })
    expect(before.status).toBe(200)
    expect(await before.text()).toContain("Шаг")

    lines.length = 0
    // The course reviews' table gone: the learner's own review cannot be read (503 from the service); the rest of the page can.
    await service.db.query("ALTER TABLE learning_course_reviews RENAME TO learning_course_reviews_away")
    try {
      const page = await fetch(`${service.host.url}${player}`, { headers: { cookie: learner.cookie } })
      expect(page.status).toBe(503)
      expect(await page.text()).not.toContain("Шаг")
    } finally {
      await service.db.query("ALTER TABLE learning_course_reviews_away RENAME TO learning_course_reviews")
    }
    const logged = lines.filter((line) => line.includes("page read failed"))
    expect(logged).toHaveLength(1)
    expect(logged[0]).toContain(` operation=learning.course_reviews.own page=/learning/${enrollment.uuid} `)

    const after = await fetch(`${service.host.url}${player}`, { headers: { cookie: learner.cookie } })
    expect(after.status).toBe(200)
  })
})
