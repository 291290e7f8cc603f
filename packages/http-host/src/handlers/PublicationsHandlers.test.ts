import Pg from "pg"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn, type SignedIn } from "../../../../testing/signIn.js"
import { type RunningHost } from "../testing.js"
import { startTestService, type TestService } from "../testService.js"

const origin = "http://localhost:8080"
let service: TestService
let host: RunningHost
let db: Pg.Client
let owner: SignedIn
let moderator: SignedIn
let stranger: SignedIn

beforeAll(async () => {
  service = await startTestService("publications", { publicOrigin: origin, trustProxy: true })
  ;({ host, db } = service)
  owner = await signIn({ url: host.url, origin, db })
  moderator = await signIn({ url: host.url, origin, db })
  stranger = await signIn({ url: host.url, origin, db })
  await db.query("INSERT INTO moderators (email, source) VALUES ($1, 'cli')", [moderator.email])
})
afterAll(async () => {
  await service?.close()
})

const call = async (method: string, path: string, body?: unknown, who?: SignedIn) => {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: { "content-type": "application/json", origin, ...(who === undefined ? {} : { cookie: who.cookie }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) as Record<string, any> }
}

const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64")
const taskFile = (overrides: Record<string, unknown> = {}) => ({
  id: "f1",
  name: "logo.png",
  url: `data:image/png;base64,${png.toString("base64")}`,
  size: png.length,
  mimeType: "image/png",
  ...overrides
})
const task = (overrides: Record<string, unknown> = {}) => ({
  title: "Сделать сайт",
  category: "Сайты",
  description: "Нужен лендинг для кофейни с меню и картой",
  budget: "до 30 000 ₽",
  deadline: "две недели",
  files: [],
  ...overrides
})

const saveTask = (data: unknown, extra: Record<string, unknown> = {}, who: SignedIn = owner) =>
  call("POST", "/api/v1/commands/tasks.save", { requestUuid: randomUUID(), data, ...extra }, who)

const command = (op: string, publication: { readonly uuid?: unknown; readonly revision?: unknown }, who: SignedIn = owner, kind = "tasks") =>
  call("POST", `/api/v1/commands/${kind}.${op}`, { requestUuid: randomUUID(), publicationUuid: publication.uuid, expectedRevision: publication.revision }, who)

const decide = (publication: { readonly uuid?: unknown; readonly revision?: unknown }, decision: string, reason?: string) =>
  call("POST", "/api/v1/moderation/decisions", {
    requestUuid: randomUUID(),
    publicationUuid: publication.uuid,
    expectedRevision: publication.revision,
    decision,
    ...(reason === undefined ? {} : { reason })
  }, moderator)

const publicationCount = async () => Number((await db.query("SELECT count(*) FROM publications")).rows[0].count)

const eventsOf = async (uuid: string) =>
  (await db.query<{ type: string }>("SELECT type FROM outbox_events WHERE aggregate_uuid = $1 ORDER BY occurred_at, transaction_id", [uuid])).rows.map((r) => r.type)

/** Replaces the person's acting profile data (profiles.update at its current revision). */
const updateProfile = async (who: SignedIn, data: Record<string, unknown>) => {
  const own = await call("GET", "/api/v1/commands/profiles.get_own", undefined, who)
  const updated = await call("POST", "/api/v1/commands/profiles.update", { requestUuid: randomUUID(), expectedRevision: own.body!.profile.revision, data }, who)
  expect(updated.status, JSON.stringify(updated.body)).toBe(200)
}

/** A task taken through save, submit and approval: public. */
const approvedTask = async (data: Record<string, unknown> = {}) => {
  const saved = await saveTask(task(data))
  expect(saved.status).toBe(200)
  const submitted = await command("submit", saved.body!)
  expect(submitted.status).toBe(200)
  const approved = await decide(submitted.body!, "approve")
  expect(approved.status).toBe(200)
  return { uuid: saved.body!.uuid as string, revision: approved.body!.revision as number }
}

describe("task data bounds", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]> = [
    ["title of 3 characters", { title: "abc" }, true],
    ["title of 2 characters", { title: "ab" }, false],
    ["title of 160 characters", { title: "я".repeat(160) }, true],
    ["title of 161 characters", { title: "я".repeat(161) }, false],
    // Characters are code points (as JSON Schema's maxLength and Postgres count them): an emoji is one.
    ["title of 160 emoji", { title: "🎨".repeat(160) }, true],
    ["title of 161 emoji", { title: "🎨".repeat(161) }, false],
    ["title of 2 emoji and nothing else", { title: "🎨🎨" }, false],
    ["description of 20000 characters", { description: "д".repeat(20000) }, true],
    ["description of 20001 characters", { description: "д".repeat(20001) }, false],
    ["budget of 80 characters", { budget: "б".repeat(80) }, true],
    ["budget of 81 characters", { budget: "б".repeat(81) }, false],
    ["deadline of 120 characters", { deadline: "с".repeat(120) }, true],
    ["deadline of 121 characters", { deadline: "с".repeat(121) }, false],
    ["a category outside the list", { category: "Музыка" }, false],
    ["five files", { files: [1, 2, 3, 4, 5].map((n) => taskFile({ id: `f${n}` })) }, true],
    ["six files", { files: [1, 2, 3, 4, 5, 6].map((n) => taskFile({ id: `f${n}` })) }, false],
    ["file id of 1 character", { files: [taskFile({ id: "a" })] }, true],
    ["file id of 100 characters", { files: [taskFile({ id: "a".repeat(100) })] }, true],
    ["empty file id", { files: [taskFile({ id: "" })] }, false],
    ["file id of 101 characters", { files: [taskFile({ id: "a".repeat(101) })] }, false],
    ["file name of 240 characters", { files: [taskFile({ name: "n".repeat(240) })] }, true],
    ["empty file name", { files: [taskFile({ name: "" })] }, false],
    ["file name of 241 characters", { files: [taskFile({ name: "n".repeat(241) })] }, false],
    ["a file of 1 byte", { files: [taskFile({ url: "data:text/plain;base64,YQ==", size: 1, mimeType: "text/plain" })] }, true],
    ["a file of 0 bytes", { files: [taskFile({ url: "data:text/plain;base64,", size: 0, mimeType: "text/plain" })] }, false],
    [
      "a file of 1048576 bytes",
      { files: [taskFile({ url: `data:application/zip;base64,${Buffer.alloc(1048576, 7).toString("base64")}`, size: 1048576, mimeType: "application/zip" })] },
      true
    ],
    [
      "a file of 1048577 bytes",
      { files: [taskFile({ url: `data:application/zip;base64,${Buffer.alloc(1048577, 7).toString("base64")}`, size: 1048577, mimeType: "application/zip" })] },
      false
    ],
    ["a size that differs from the decoded bytes", { files: [taskFile({ size: png.length + 1 })] }, false],
    ["a data URL of another type than declared", { files: [taskFile({ mimeType: "image/jpeg" })] }, false],
    ["an external URL", { files: [taskFile({ url: "https://example.com/logo.png" })] }, false],
    ["a Blob URL", { files: [taskFile({ url: "blob:https://example.com/5a6f" })] }, false],
    ["base64 that is not strict", { files: [taskFile({ url: "data:image/png;base64,iVBOR w0K" })] }, false],
    ["an unsupported attachment format", { files: [taskFile({ url: "data:image/svg+xml;base64,PHN2Zz4=", mimeType: "image/svg+xml", size: 5 })] }, false],
    ["an extra file property", { files: [taskFile({ extra: 1 })] }, false],
    ["an extra task property", { extra: true }, false]
  ]
  for (const [name, overrides, ok] of cases) {
    it(`${ok ? "accepts" : "refuses with invalid_task"} ${name}${ok ? "" : ", saving nothing"}`, async () => {
      const before = await publicationCount()
      const saved = await saveTask(task(overrides))
      if (ok) {
        expect(saved.status).toBe(200)
        expect(await publicationCount()).toBe(before + 1)
      } else {
        expect(saved.status).toBe(400)
        expect(saved.body!.error.code).toBe("invalid_task")
        expect(await publicationCount()).toBe(before)
      }
    })
  }

  it("refuses a malformed task body with invalid_task", async () => {
    const before = await publicationCount()
    const response = await fetch(`${host.url}/api/v1/commands/tasks.save`, {
      method: "POST",
      headers: { "content-type": "application/json", origin, cookie: owner.cookie },
      body: "{\"requestUuid\": "
    })
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_task")
    expect(await publicationCount()).toBe(before)
  })

  it("refuses a task missing a field with invalid_task", async () => {
    const { budget: _budget, ...rest } = task()
    const saved = await saveTask(rest)
    expect(saved.status).toBe(400)
    expect(saved.body!.error.code).toBe("invalid_task")
  })

  it("needs a description of at least 20 characters to submit, not to save", async () => {
    const saved = await saveTask(task({ description: "х".repeat(19) }))
    expect(saved.status).toBe(200)
    const refused = await command("submit", saved.body!)
    expect(refused.status).toBe(400)
    expect(refused.body!.error.code).toBe("invalid_task")
    const withSubmit = await saveTask(task({ description: "х".repeat(19) }), { submit: true })
    expect(withSubmit.status).toBe(400)
    expect(withSubmit.body!.error.code).toBe("invalid_task")
    const twenty = await saveTask(task({ description: "х".repeat(20) }), { submit: true })
    expect(twenty.status).toBe(200)
    expect(twenty.body!.status).toBe("pending")
  })
})

describe("owner views and public reads", () => {
  it("answers the owner with exactly the fields of OwnTask and the moderator's reason", async () => {
    const saved = await saveTask(task())
    expect(Object.keys(saved.body!).sort()).toEqual(["createdAt", "draft", "id", "reason", "revision", "status", "updatedAt", "uuid"])
    expect(saved.body!.reason).toBe("")
    expect(saved.body!.revision).toBe(1)
    expect(saved.body!.status).toBe("draft")
    expect(saved.body!.draft).toEqual(task())
    const got = await call("GET", `/api/v1/commands/tasks.get?publicationUuid=${saved.body!.uuid}`, undefined, owner)
    expect(got.body).toEqual(saved.body)
  })

  it("reads a public publication with exactly the Publication fields: draft equals approved, no history or reason", async () => {
    const { uuid } = await approvedTask({ title: "Публичная задача" })
    const read = await call("GET", `/api/v1/publications/${uuid}`)
    expect(read.status).toBe(200)
    expect(Object.keys(read.body!).sort()).toEqual(
      ["approved", "closed", "createdAt", "draft", "hidden", "history", "id", "kind", "ownerId", "ownerUuid", "reason", "status", "updatedAt", "uuid"]
    )
    expect(read.body!.approved.title).toBe("Публичная задача")
    expect(read.body!.draft).toEqual(read.body!.approved)
    expect(read.body!).toMatchObject({ status: "approved", hidden: false, history: [], reason: "", kind: "task", ownerUuid: owner.profileUuid })
  })

  it("lists catalog entries with exactly the CatalogPublication fields and schemaVersion 1", async () => {
    const { uuid } = await approvedTask({ title: "Для каталога" })
    const catalog = await call("GET", "/api/v1/catalog")
    expect(catalog.status).toBe(200)
    expect(catalog.body!.schemaVersion).toBe(1)
    const entry = (catalog.body!.publications as Array<Record<string, unknown>>).find((p) => p.uuid === uuid)!
    expect(Object.keys(entry).sort()).toEqual(
      ["approved", "closed", "createdAt", "hidden", "history", "id", "kind", "ownerId", "ownerUuid", "reason", "status", "updatedAt", "uuid"]
    )
    expect(JSON.stringify(catalog.body)).not.toContain(owner.email)
  })

  it("answers concurrent catalog readers the same document, and the next reader sees a change at once", async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => fetch(`${host.url}/api/v1/catalog`)))
    for (const answer of answers) {
      expect(answer.status).toBe(200)
      expect(answer.headers.get("content-type")).toContain("application/json")
    }
    const bodies = await Promise.all(answers.map((answer) => answer.text()))
    expect(new Set(bodies).size).toBe(1)
    // Nothing is kept between answers: a publication approved now is in the very next one.
    const { uuid } = await approvedTask({ title: "Сразу в каталоге" })
    const next = await call("GET", "/api/v1/catalog")
    expect((next.body!.publications as Array<{ uuid: string }>).some((p) => p.uuid === uuid)).toBe(true)
  })

  it("reads absent, draft-only, hidden and deleted publications as the same 404", async () => {
    const draftOnly = await saveTask(task())
    const hidden = await approvedTask()
    const hiddenNow = await command("hide", hidden)
    expect(hiddenNow.status).toBe(200)
    const deleted = await approvedTask()
    expect((await command("delete", deleted)).status).toBe(200)
    const answers = await Promise.all(
      [randomUUID(), draftOnly.body!.uuid, hidden.uuid, deleted.uuid].map((uuid) => call("GET", `/api/v1/publications/${uuid}`))
    )
    for (const answer of answers) {
      expect(answer.status).toBe(404)
      expect(answer.body).toEqual(answers[0]!.body)
    }
  })

  it("does not let another profile read or change my drafts", async () => {
    const saved = await saveTask(task())
    const read = await call("GET", `/api/v1/commands/tasks.get?publicationUuid=${saved.body!.uuid}`, undefined, stranger)
    expect(read.status).toBe(404)
    const edit = await saveTask(task({ title: "Чужая" }), { publicationUuid: saved.body!.uuid, expectedRevision: 1 }, stranger)
    expect(edit.status).toBe(404)
    expect((await command("delete", saved.body!, stranger)).status).toBe(404)
  })

  it("lists my tasks page by page with a cursor, limit 1 to 100", async () => {
    const fresh = await signIn({ url: host.url, origin, db })
    for (let i = 0; i < 3; i++) await saveTask(task({ title: `Задача ${i}` }), {}, fresh)
    const first = await call("GET", "/api/v1/commands/tasks.list?limit=2", undefined, fresh)
    expect(first.body!.items.map((t: { draft: { title: string } }) => t.draft.title)).toEqual(["Задача 2", "Задача 1"])
    const second = await call("GET", `/api/v1/commands/tasks.list?limit=2&cursor=${first.body!.nextCursor}`, undefined, fresh)
    expect(second.body!.items.map((t: { draft: { title: string } }) => t.draft.title)).toEqual(["Задача 0"])
    expect(second.body!.nextCursor).toBeUndefined()
    expect((await call("GET", "/api/v1/commands/tasks.list?limit=0", undefined, fresh)).status).toBe(400)
    expect((await call("GET", "/api/v1/commands/tasks.list?limit=100", undefined, fresh)).status).toBe(200)
    expect((await call("GET", "/api/v1/commands/tasks.list?limit=101", undefined, fresh)).status).toBe(400)
    expect((await call("GET", "/api/v1/commands/tasks.list?cursor=bogus", undefined, fresh)).body!.error.code).toBe("invalid_request")
  })

  it("answers 401 without a session", async () => {
    expect((await call("GET", "/api/v1/commands/tasks.list")).status).toBe(401)
    expect((await saveTask(task(), {}, { ...owner, cookie: "x=y" })).status).toBe(401)
  })
})

describe("status and moderation", () => {
  it("moves draft → pending → approved, keeps the approved data public while a new draft waits, and returns with a reason", async () => {
    const saved = await saveTask(task({ title: "Первая версия" }))
    const pending = await command("submit", saved.body!)
    expect(pending.body!.status).toBe("pending")
    expect((await command("submit", pending.body!)).body!.error.code).toBe("invalid_state")
    expect((await call("GET", `/api/v1/publications/${saved.body!.uuid}`)).status).toBe(404)

    const queue = await call("GET", "/api/v1/moderation/queue?limit=100", undefined, moderator)
    expect(queue.status).toBe(200)
    expect(queue.body!.items.some((item: { uuid: string }) => item.uuid === saved.body!.uuid)).toBe(true)
    expect((await call("GET", "/api/v1/moderation/queue", undefined, stranger)).status).toBe(403)
    expect((await decide(pending.body!, "approve")).status).toBe(200)

    const approvedView = await call("GET", `/api/v1/commands/tasks.get?publicationUuid=${saved.body!.uuid}`, undefined, owner)
    expect(approvedView.body!.status).toBe("approved")
    expect((await command("submit", approvedView.body!)).body!.error.code).toBe("invalid_state")

    const edited = await saveTask(task({ title: "Вторая версия" }), { publicationUuid: saved.body!.uuid, expectedRevision: approvedView.body!.revision })
    expect(edited.body!.status).toBe("draft")
    expect((await call("GET", `/api/v1/publications/${saved.body!.uuid}`)).body!.approved.title).toBe("Первая версия")

    const resubmitted = await command("submit", edited.body!)
    expect((await decide(resubmitted.body!, "return")).status).toBe(400)
    const returned = await decide(resubmitted.body!, "return", "Уточните бюджет")
    expect(returned.body!.status).toBe("returned")
    expect((await call("GET", `/api/v1/publications/${saved.body!.uuid}`)).body!.approved.title).toBe("Первая версия")

    // The owner reads why, in the task and in the list, and keeps reading it while editing.
    const again = await call("GET", `/api/v1/commands/tasks.get?publicationUuid=${saved.body!.uuid}`, undefined, owner)
    expect([again.body!.status, again.body!.reason]).toEqual(["returned", "Уточните бюджет"])
    const listed = await call("GET", "/api/v1/commands/tasks.list?limit=100", undefined, owner)
    expect(listed.body!.items.find((item: { uuid: string }) => item.uuid === saved.body!.uuid).reason).toBe("Уточните бюджет")
    const fixed = await saveTask(task({ title: "Вторая версия", budget: "до 9 000 ₽" }), {
      publicationUuid: saved.body!.uuid,
      expectedRevision: again.body!.revision
    })
    expect([fixed.body!.status, fixed.body!.reason]).toEqual(["draft", "Уточните бюджет"])
    const third = await command("submit", fixed.body!)
    expect([third.body!.status, third.body!.reason]).toEqual(["pending", ""])
    await decide(third.body!, "approve")
    expect((await call("GET", `/api/v1/publications/${saved.body!.uuid}`)).body!.approved.title).toBe("Вторая версия")

    expect(await eventsOf(saved.body!.uuid)).toEqual([
      "publication.draft_saved",
      "publication.submitted",
      "publication.moderated",
      "publication.draft_saved",
      "publication.submitted",
      "publication.moderated",
      "publication.draft_saved",
      "publication.submitted",
      "publication.moderated"
    ])
  })

  it("rejects for good: a rejected publication can be neither edited nor submitted", async () => {
    const saved = await saveTask(task())
    const pending = await command("submit", saved.body!)
    const rejected = await decide(pending.body!, "reject", "Запрещённая тема")
    expect(rejected.body!.status).toBe("rejected")
    const view = await call("GET", `/api/v1/commands/tasks.get?publicationUuid=${saved.body!.uuid}`, undefined, owner)
    expect([view.body!.status, view.body!.reason]).toEqual(["rejected", "Запрещённая тема"])
    expect((await command("submit", view.body!)).body!.error.code).toBe("invalid_state")
    const edit = await saveTask(task(), { publicationUuid: saved.body!.uuid, expectedRevision: view.body!.revision })
    expect(edit.status).toBe(409)
    expect(edit.body!.error.code).toBe("invalid_state")
  })

  it("hides, restores, closes and deletes, each with its event", async () => {
    const published = await approvedTask()
    const hidden = await command("hide", published)
    expect((await call("GET", `/api/v1/publications/${published.uuid}`)).status).toBe(404)
    const restored = await command("restore", hidden.body!)
    expect((await call("GET", `/api/v1/publications/${published.uuid}`)).status).toBe(200)
    const closed = await command("close", restored.body!)
    expect((await call("GET", `/api/v1/publications/${published.uuid}`)).body!.closed).toBe(true)
    const deleted = await command("delete", closed.body!)
    expect(deleted.status).toBe(200)
    expect((await call("GET", `/api/v1/commands/tasks.get?publicationUuid=${published.uuid}`, undefined, owner)).status).toBe(404)
    expect((await eventsOf(published.uuid)).slice(-4)).toEqual(["publication.hidden", "publication.restored", "task.closed", "publication.deleted"])
  })

  it("refuses a stale revision with 409 and changes nothing", async () => {
    const saved = await saveTask(task({ title: "Исходная" }))
    const edited = await saveTask(task({ title: "Правка" }), { publicationUuid: saved.body!.uuid, expectedRevision: 1 })
    expect(edited.body!.revision).toBe(2)
    const stale = await saveTask(task({ title: "Устаревшая" }), { publicationUuid: saved.body!.uuid, expectedRevision: 1 })
    expect(stale.status).toBe(409)
    expect(stale.body!.error.code).toBe("revision_conflict")
    const view = await call("GET", `/api/v1/commands/tasks.get?publicationUuid=${saved.body!.uuid}`, undefined, owner)
    expect(view.body!).toMatchObject({ revision: 2, draft: { title: "Правка" } })
    expect((await command("hide", { uuid: saved.body!.uuid, revision: 1 })).status).toBe(409)
  })

  it("saves once per requestUuid: a retry returns the first result, another body with the same key is 409", async () => {
    const requestUuid = randomUUID()
    const before = await publicationCount()
    const body = { requestUuid, data: task({ title: "Однажды" }) }
    const results = await Promise.all(Array.from({ length: 10 }, () => call("POST", "/api/v1/commands/tasks.save", body, owner)))
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([200]))
    expect(new Set(results.map((r) => r.body!.uuid)).size).toBe(1)
    expect(await publicationCount()).toBe(before + 1)
    const other = await call("POST", "/api/v1/commands/tasks.save", { requestUuid, data: task({ title: "Другое" }) }, owner)
    expect(other.status).toBe(409)
    expect(other.body!.error.code).toBe("request_conflict")
  })

  it("saves through POST /api/v1/publications with the kind at top level, the same as the kind's save", async () => {
    const created = await call("POST", "/api/v1/publications", { kind: "task", requestUuid: randomUUID(), data: task({ title: "Через маршрут" }) }, owner)
    expect(created.status).toBe(200)
    expect(Object.keys(created.body!).sort()).toEqual(["createdAt", "draft", "id", "reason", "revision", "status", "updatedAt", "uuid"])
    const article = await call("POST", "/api/v1/publications", {
      kind: "article",
      requestUuid: randomUUID(),
      data: { title: "Статья", description: "О главном", content: { version: 1, blocks: [{ id: "b1", type: "richtext", text: "Привет" }] } }
    }, owner)
    expect(article.status).toBe(200)
    expect(article.body!.kind).toBe("article")
    // The same save as tasks.save: a task's bad data answers invalid_task, other kinds invalid_request.
    const wrong = await call("POST", "/api/v1/publications", { kind: "task", requestUuid: randomUUID(), data: { title: "x" } }, owner)
    expect(wrong.status).toBe(400)
    expect(wrong.body!.error.code).toBe("invalid_task")
    const wrongArticle = await call("POST", "/api/v1/publications", { kind: "article", requestUuid: randomUUID(), data: { title: "x" } }, owner)
    expect(wrongArticle.status).toBe(400)
    expect(wrongArticle.body!.error.code).toBe("invalid_request")
    // Every task save failure is invalid_task (spec), revision mistakes included.
    const taskData = { title: "Сделать сайт", category: "Сайты", description: "Нужен лендинг для кофейни с меню", budget: "", deadline: "", files: [] }
    const newWithRevision = await call("POST", "/api/v1/commands/tasks.save", { requestUuid: randomUUID(), expectedRevision: 3, data: taskData }, owner)
    expect([newWithRevision.status, newWithRevision.body!.error.code]).toEqual([400, "invalid_task"])
    const editWithoutRevision = await call("POST", "/api/v1/commands/tasks.save", { requestUuid: randomUUID(), publicationUuid: randomUUID(), data: taskData }, owner)
    expect([editWithoutRevision.status, editWithoutRevision.body!.error.code]).toEqual([400, "invalid_task"])
    // Other kinds keep invalid_request for a malformed request (invalid_publication is for unusable files).
    const articleWithoutRevision = await call("POST", "/api/v1/commands/articles.save", { requestUuid: randomUUID(), publicationUuid: randomUUID(), data: { title: "Статья" } }, owner)
    expect([articleWithoutRevision.status, articleWithoutRevision.body!.error.code]).toEqual([400, "invalid_request"])
  })
})

describe("media kinds", () => {
  const kinds = [
    ["services", "service", { service: { price: 15000, priceUnit: "fixed", deliveryDays: 7 } }],
    ["portfolio", "portfolio", { portfolio: { client: "Кофейня", year: 2025 } }],
    ["articles", "article", {}],
    ["jobs", "vacancy", { vacancy: { salaryFrom: 100000, salaryTo: 150000, employment: "full_time", workplace: "remote" } }],
    ["resumes", "resume", { resume: { position: "Дизайнер", experienceYears: 5 } }],
    ["learning", "training", { training: { format: "online", level: "beginner", durationHours: 12 } }]
  ] as const
  for (const [command, kind, details] of kinds) {
    it(`saves, submits and publishes ${command} through its own operations`, async () => {
      const data = { title: `Публикация ${kind}`, category: "Дизайн", description: "Описание", ...details }
      const saved = await call("POST", `/api/v1/commands/${command}.save`, { requestUuid: randomUUID(), data }, owner)
      expect(saved.status).toBe(200)
      expect(saved.body!).toMatchObject({ kind, status: "draft", approved: null, hidden: false })
      const submitted = await call("POST", `/api/v1/commands/${command}.submit`, {
        requestUuid: randomUUID(),
        publicationUuid: saved.body!.uuid,
        expectedRevision: saved.body!.revision
      }, owner)
      expect(submitted.body!.status).toBe("pending")
      await decide(submitted.body!, "approve")
      const read = await call("GET", `/api/v1/publications/${saved.body!.uuid}`)
      expect(read.body!.kind).toBe(kind)
      expect(read.body!.approved.title).toBe(`Публикация ${kind}`)
      const extra = await call("POST", `/api/v1/commands/${command}.save`, { requestUuid: randomUUID(), data, other: 1 }, owner)
      expect(extra.status).toBe(400)
    })
  }

  /** prepare → PUT → complete through the host: a ready file of `who`. */
  const readyFile = async (who: SignedIn, purpose: string) => {
    const prepared = await call("POST", "/api/v1/files/uploads", {
      requestUuid: randomUUID(), name: "pixel.png", mimeType: "image/png", size: png.length, purpose
    }, who)
    expect(prepared.status).toBe(200)
    const url = prepared.body!.upload.url as string
    const put = await fetch(`${host.url}${url.slice(origin.length)}`, { method: "PUT", body: new Uint8Array(png) })
    expect(put.status).toBeLessThan(300)
    const completed = await call("POST", `/api/v1/files/uploads/${prepared.body!.uuid}/complete`, undefined, who)
    expect(completed.status).toBe(200)
    return prepared.body!.uuid as string
  }

  it("accepts assets that are ready files of the profile and purpose, and refuses them in another profile's draft", async () => {
    const asset = await readyFile(owner, "publication_asset")
    const attachment = await readyFile(owner, "publication_file")
    const data = {
      title: "С картинкой",
      content: { version: 1, preview: { kind: "image", assetIds: [asset] }, assets: [{ id: asset, kind: "image", alt: "фото" }], blocks: [{ id: "b", type: "image", mediaIds: [asset] }] },
      files: [attachment]
    }
    const saved = await call("POST", "/api/v1/commands/articles.save", { requestUuid: randomUUID(), data }, owner)
    expect(saved.status).toBe(200)
    const wrongPurpose = await call("POST", "/api/v1/commands/articles.save", {
      requestUuid: randomUUID(),
      data: { ...data, files: [asset] }
    }, owner)
    expect(wrongPurpose.body!.error.code).toBe("invalid_publication")
    const foreign = await call("POST", "/api/v1/commands/articles.save", { requestUuid: randomUUID(), data }, stranger)
    expect(foreign.status).toBe(400)
    expect(foreign.body!.error.code).toBe("invalid_publication")
  })

  it("the catalog empties portfolio.assets only when content carries the canonical arrays; a portfolio with only its own images keeps them", async () => {
    const asset = await readyFile(owner, "publication_asset")
    const image = { id: asset, kind: "image", alt: "фото" }
    const publish = async (content: Record<string, unknown>) => {
      const saved = await call("POST", "/api/v1/commands/portfolio.save", {
        requestUuid: randomUUID(),
        data: { title: "Кейс кофейни", content, portfolio: { client: "Кофейня", assets: [image], blocks: [] } }
      }, owner)
      expect(saved.status, JSON.stringify(saved.body)).toBe(200)
      // What was sent is what is kept: no canonical arrays appear that the client left out.
      expect(Object.keys(saved.body!.draft.content).sort()).toEqual(Object.keys(content).sort())
      const submitted = await command("submit", saved.body!, owner, "portfolio")
      expect(submitted.status).toBe(200)
      expect((await decide(submitted.body!, "approve")).status).toBe(200)
      return saved.body!.uuid as string
    }
    const legacyOnly = await publish({ version: 1 })
    const canonical = await publish({ version: 1, assets: [image], blocks: [{ id: "b", type: "image", mediaIds: [asset] }] })
    const catalog = await call("GET", "/api/v1/catalog")
    const entry = (uuid: string) => (catalog.body!.publications as Array<{ uuid: string; approved: { portfolio: { assets: Array<unknown>; client: string } } }>).find((p) => p.uuid === uuid)!
    expect(entry(legacyOnly).approved.portfolio.assets).toEqual([image])
    expect(entry(canonical).approved.portfolio).toMatchObject({ assets: [], client: "Кофейня" })
    // Individual reads are never projected.
    expect((await call("GET", `/api/v1/publications/${canonical}`)).body!.approved.portfolio.assets).toEqual([image])
  })

  it("refuses assets that are not ready files of the profile, saving nothing", async () => {
    const before = await publicationCount()
    const asset = randomUUID()
    const saved = await call("POST", "/api/v1/commands/articles.save", {
      requestUuid: randomUUID(),
      data: { title: "С картинкой", content: { version: 1, assets: [{ id: asset, kind: "image", alt: "фото" }], blocks: [{ id: "b", type: "image", mediaIds: [asset] }] } }
    }, owner)
    expect(saved.status).toBe(400)
    expect(saved.body!.error.code).toBe("invalid_publication")
    expect(await publicationCount()).toBe(before)
  })

  it("refuses a content block that refers to an asset not listed in content.assets", async () => {
    const saved = await call("POST", "/api/v1/commands/articles.save", {
      requestUuid: randomUUID(),
      data: { title: "Без ассета", content: { version: 1, blocks: [{ id: "b", type: "image", mediaIds: [randomUUID()] }] } }
    }, owner)
    expect(saved.status).toBe(400)
  })
})

describe("search", () => {
  it("finds with every term, case-insensitively, ё and е as one letter; q up to 4096 characters", async () => {
    const { uuid } = await approvedTask({ title: "Нарядить ЕЛКА в офисе", description: "Праздничное оформление офиса к Новому году" })
    const found = async (q: string) =>
      ((await call("GET", `/api/v1/publications?q=${encodeURIComponent(q)}&limit=100`)).body!.items as Array<{ uuid: string }>).some((p) => p.uuid === uuid)
    expect(await found("ёлка")).toBe(true)
    expect(await found("елка офис")).toBe(true)
    expect(await found("ЁЛКА праздничное")).toBe(true)
    expect(await found("ёлка бассейн")).toBe(false)
    expect(await found("100%")).toBe(false)
    expect((await call("GET", `/api/v1/publications?q=${encodeURIComponent("ё".repeat(4096))}`)).status).toBe(200)
    expect((await call("GET", `/api/v1/publications?q=${encodeURIComponent("ё".repeat(4097))}`)).status).toBe(400)
  })

  it("finds public profiles by name with the same normalisation", async () => {
    const person = await signIn({ url: host.url, origin, db })
    await updateProfile(person, { name: "Фёдор Ёлкин", type: "Самозанятый", isPublic: true, showContacts: false })
    const found = await call("GET", `/api/v1/profiles?q=${encodeURIComponent("федор елкин")}`)
    expect(found.body!.items.map((p: { uuid: string }) => p.uuid)).toContain(person.profileUuid)
  })
})

describe("the author of a public publication", () => {
  const profile = (uuid: string) => call("GET", `/api/v1/profiles/${uuid}`)
  const found = async (q: string, uuid: string) =>
    ((await call("GET", `/api/v1/profiles?q=${encodeURIComponent(q)}&limit=100`)).body!.items as Array<{ uuid: string }>).some((p) => p.uuid === uuid)

  it("is publicly visible while one of its publications is, through the public allowlist; private otherwise", async () => {
    const author = await signIn({ url: host.url, origin, db })
    // Contacts the owner chose to show, on a profile it keeps private: never shown to the public.
    await updateProfile(author, { name: "Сергей Автономов", type: "ИП", isPublic: false, showContacts: true, contacts: "+7 900 000-00-00", about: "Пишу ботов" })
    expect((await profile(author.profileUuid)).status).toBe(404)
    expect(await found("автономов", author.profileUuid)).toBe(false)

    const saved = await saveTask(task({ title: "Бот для записи клиентов" }), {}, author)
    const submitted = await command("submit", saved.body!, author)
    expect((await profile(author.profileUuid)).status).toBe(404)
    const approved = await decide(submitted.body!, "approve")
    expect(approved.status).toBe(200)

    const shown = await profile(author.profileUuid)
    expect(shown.status).toBe(200)
    expect(shown.body).toMatchObject({ uuid: author.profileUuid, name: "Сергей Автономов", type: "ИП", showContacts: false, contacts: "" })
    expect(shown.body).not.toHaveProperty("isPublic")
    expect(JSON.stringify(shown.body)).not.toContain(author.email)
    expect(await found("автономов", author.profileUuid)).toBe(true)
    const catalog = await call("GET", "/api/v1/catalog")
    expect(catalog.body!.profiles.map((p: { uuid: string }) => p.uuid)).toContain(author.profileUuid)

    // A profile a moderator hid (hide_profile) is not made visible by its publications.
    await db.query("UPDATE profiles SET hidden_by_moderation_at = now() WHERE uuid = $1", [author.profileUuid])
    expect((await profile(author.profileUuid)).status).toBe(404)
    expect(await found("автономов", author.profileUuid)).toBe(false)
    await db.query("UPDATE profiles SET hidden_by_moderation_at = NULL WHERE uuid = $1", [author.profileUuid])

    // Hidden, the publication no longer makes its author public.
    const hidden = await command("hide", { uuid: saved.body!.uuid, revision: approved.body!.revision }, author)
    expect(hidden.status, JSON.stringify(hidden.body)).toBe(200)
    expect((await profile(author.profileUuid)).status).toBe(404)
    expect(await found("автономов", author.profileUuid)).toBe(false)
  })

  it("names a signed-in author's first profile neutrally, and shows a name equal to the address's local part as «Автор»", async () => {
    const author = await signIn({ url: host.url, origin, db })
    const localPart = author.email.split("@")[0]!
    const own = (await call("GET", "/api/v1/commands/profiles.get_own", undefined, author)).body!.profile
    expect(own.name).toBe("Профиль")
    expect(JSON.stringify(own)).not.toContain(localPart)
    const saved = await saveTask(task(), {}, author)
    const submitted = await command("submit", saved.body!, author)
    expect((await decide(submitted.body!, "approve")).status).toBe(200)
    expect((await profile(author.profileUuid)).body!.name).toBe("Профиль")
    // A profile whose name is the local part (made so before names were neutral) is still never shown by it.
    await db.query("UPDATE profiles SET name = $2 WHERE uuid = $1", [author.profileUuid, localPart])
    const shown = await profile(author.profileUuid)
    expect(shown.status).toBe(200)
    expect(shown.body!.name).toBe("Автор")
    expect(JSON.stringify(shown.body)).not.toContain(localPart)
  })
})
