import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signIn as signInFor, type SignedIn } from "../../../../testing/signIn.js"
import { type RunningHost } from "../testing.js"
import { startTestService, type TestService } from "../testService.js"

const origin = "http://localhost:8080"
let service: TestService
let host: RunningHost
let db: Pg.Client
let n = 0

beforeAll(async () => {
  service = await startTestService("comments", { publicOrigin: origin, trustProxy: true })
  ;({ host, db } = service)
})
afterAll(async () => {
  await service?.close()
})

interface Comment {
  readonly uuid: string
  readonly publicationUuid: string
  readonly authorName: string
  readonly body: string
  readonly createdAt: string
  readonly canDelete: boolean
  readonly isPublicationAuthor: boolean
  readonly deleted: boolean
  readonly replyCount: number
  readonly authorId?: string
  readonly authorProfileUuid?: string
  readonly authorType?: string
  readonly avatarUrl?: string
  readonly parentCommentUuid?: string
}
interface Page {
  readonly items: ReadonlyArray<Comment>
  readonly nextCursor?: string
}

const signIn = () => signInFor({ url: host.url, origin, db })

const call = (method: string, path: string, body?: unknown, cookie?: string) =>
  fetch(`${host.url}${path}`, {
    method,
    headers: { "content-type": "application/json", origin, ...(cookie === undefined ? {} : { cookie }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

/** A publicly visible task of `owner`, inserted directly (publication commands belong to another area). */
const publish = async (owner: SignedIn): Promise<string> => {
  const { rows } = await db.query<{ uuid: string }>(
    `INSERT INTO publications (id, kind, owner_profile_uuid, draft, approved, status)
     VALUES ($1, 'task', $2, '{}'::jsonb, $3::jsonb, 'approved') RETURNING uuid`,
    [`comments-${++n}-${Date.now()}`, owner.profileUuid, JSON.stringify({ title: "Сделать лендинг" })]
  )
  return rows[0]!.uuid
}

const commentsPath = (publication: string) => `/api/v1/publications/${publication}/comments`

const list = async (publication: string, cookie?: string, query = ""): Promise<Page> => {
  const response = await call("GET", `${commentsPath(publication)}${query}`, undefined, cookie)
  expect(response.status).toBe(200)
  return (await response.json()) as Page
}

const post = async (who: SignedIn, publication: string, body: string, parent?: string) => {
  const path = parent === undefined ? commentsPath(publication) : `${commentsPath(publication)}/${parent}/replies`
  const response = await call("POST", path, { requestUuid: crypto.randomUUID(), body }, who.cookie)
  expect(response.status, await response.clone().text()).toBe(200)
  return ((await response.json()) as { comment: Comment }).comment
}

const remove = (who: SignedIn | undefined, publication: string, comment: string) =>
  call("DELETE", `${commentsPath(publication)}/${comment}`, undefined, who?.cookie)

const errorCode = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code

const find = (page: Page, uuid: string) => page.items.find((item) => item.uuid === uuid)

const requiredFields = [
  "uuid", "publicationUuid", "authorName", "body", "createdAt", "canDelete", "isPublicationAuthor", "deleted", "replyCount"
]

describe("comments on publications", () => {
  it("answers exactly the spec's PublicationComment fields and no others", async () => {
    const owner = await signIn()
    const author = await signIn()
    const publication = await publish(owner)
    const root = await post(author, publication, "Сколько займёт работа?")
    const answer = await post(owner, publication, "Неделю", root.uuid)

    const authorFields = ["authorId", "authorProfileUuid", "authorType"]
    expect(Object.keys(root).sort()).toEqual([...requiredFields, ...authorFields].sort())
    expect(Object.keys(answer).sort()).toEqual([...requiredFields, ...authorFields, "parentCommentUuid"].sort())
    const [profile] = (await db.query<{ id: string; name: string }>("SELECT id, name FROM profiles WHERE uuid = $1", [author.profileUuid])).rows
    expect(root).toMatchObject({
      publicationUuid: publication,
      authorName: profile!.name,
      authorId: profile!.id,
      authorProfileUuid: author.profileUuid,
      authorType: "Person",
      body: "Сколько займёт работа?",
      deleted: false,
      replyCount: 0
    })
    expect(new Date(root.createdAt).toISOString()).toBe(root.createdAt)
    expect(answer.parentCommentUuid).toBe(root.uuid)

    // A company is an Organization; an avatar, when set, is shown.
    await db.query("UPDATE profiles SET type = 'Компания', avatar_url = 'https://example.com/a.png' WHERE uuid = $1", [author.profileUuid])
    const page = await list(publication)
    expect(page.items.map((item) => item.uuid)).toEqual([root.uuid, answer.uuid])
    expect(Object.keys(page.items[0]!).sort()).toEqual([...requiredFields, ...authorFields, "avatarUrl"].sort())
    expect(page.items[0]).toMatchObject({ authorType: "Organization", avatarUrl: "https://example.com/a.png", replyCount: 1 })
    expect(page.items[1]).toMatchObject({ parentCommentUuid: root.uuid, replyCount: 0, authorType: "Person" })
    expect(page.nextCursor).toBeUndefined()
    for (const type of ["Физлицо", "Самозанятый", "ИП"]) {
      await db.query("UPDATE profiles SET type = $2 WHERE uuid = $1", [author.profileUuid, type])
      expect(find(await list(publication), root.uuid)?.authorType, type).toBe("Person")
    }
  })

  it("accepts a body of 5000 characters after trimming and refuses 5001, blank, NUL and unknown fields", async () => {
    const owner = await signIn()
    const publication = await publish(owner)
    const create = (payload: unknown) => call("POST", commentsPath(publication), payload, owner.cookie)

    const max = "ж".repeat(5000)
    const ok = await create({ requestUuid: crypto.randomUUID(), body: `  ${max}\n ` })
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as { comment: Comment }).comment.body).toBe(max)
    // Characters are code points: 5000 emoji (10000 UTF-16 units) are 5000 characters.
    const emoji = await create({ requestUuid: crypto.randomUUID(), body: "😀".repeat(5000) })
    expect(emoji.status).toBe(200)
    expect((await create({ requestUuid: crypto.randomUUID(), body: "😀".repeat(5001) })).status).toBe(400)

    for (const bad of [
      { requestUuid: crypto.randomUUID(), body: "ж".repeat(5001) },
      { requestUuid: crypto.randomUUID(), body: "" },
      { requestUuid: crypto.randomUUID(), body: " \n\t " },
      { requestUuid: crypto.randomUUID(), body: "a\u0000b" },
      { requestUuid: crypto.randomUUID() },
      { body: "no request uuid" },
      { requestUuid: "not-a-uuid", body: "x" },
      { requestUuid: crypto.randomUUID(), body: "x", extra: true }
    ]) {
      const response = await create(bad)
      expect(response.status, JSON.stringify(bad).slice(0, 80)).toBe(400)
      expect(await errorCode(response)).toBe("invalid_request")
    }
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM publication_comments WHERE publication_uuid = $1", [publication])
    expect(rows[0]!.n).toBe(2)
    expect((await list(publication)).items.map((item) => item.body.length)).toEqual([5000, 10000])
  })

  it("tells each caller whether it may delete: author and owner yes, others and anonymous no", async () => {
    const owner = await signIn()
    const author = await signIn()
    const other = await signIn()
    const publication = await publish(owner)
    const root = await post(author, publication, "Вопрос")
    expect(root.canDelete).toBe(true)

    expect(find(await list(publication, author.cookie), root.uuid)?.canDelete).toBe(true)
    expect(find(await list(publication, owner.cookie), root.uuid)?.canDelete).toBe(true)
    expect(find(await list(publication, other.cookie), root.uuid)?.canDelete).toBe(false)
    expect(find(await list(publication), root.uuid)?.canDelete).toBe(false)
    expect((await call("GET", commentsPath(publication))).headers.get("cache-control")).toBe("no-store")
    // A bad or forged cookie on a public read is anonymity, not 401.
    expect(find(await list(publication, "__Host-birzha_session=forged"), root.uuid)?.canDelete).toBe(false)
    await call("POST", "/api/v1/auth/logout", undefined, author.cookie)
    expect(find(await list(publication, author.cookie), root.uuid)?.canDelete).toBe(false)
  })

  it("marks the comments of the publication's current owner profile", async () => {
    const owner = await signIn()
    const other = await signIn()
    const publication = await publish(owner)
    const byOwner = await post(owner, publication, "От автора")
    const byOther = await post(other, publication, "От читателя")
    expect(byOwner.isPublicationAuthor).toBe(true)
    expect(byOther.isPublicationAuthor).toBe(false)

    // Ownership moves: the flag follows the current owner, and so does the right to delete.
    await db.query("UPDATE publications SET owner_profile_uuid = $2 WHERE uuid = $1", [publication, other.profileUuid])
    const page = await list(publication, owner.cookie)
    expect(find(page, byOwner.uuid)).toMatchObject({ isPublicationAuthor: false, canDelete: true })
    expect(find(page, byOther.uuid)).toMatchObject({ isPublicationAuthor: true, canDelete: false })
    expect((await remove(owner, publication, byOther.uuid)).status).toBe(403)
    expect((await remove(other, publication, byOwner.uuid)).status).toBe(204)
  })

  it("counts visible answers, keeps a deleted root with live answers as a placeholder, and drops it with the last one", async () => {
    const owner = await signIn()
    const author = await signIn()
    const publication = await publish(owner)
    const root = await post(author, publication, "Корень")
    const first = await post(owner, publication, "Ответ 1", root.uuid)
    const second = await post(author, publication, "Ответ 2", root.uuid)
    const lonely = await post(author, publication, "Без ответов")

    expect(find(await list(publication), root.uuid)?.replyCount).toBe(2)
    expect((await remove(author, publication, second.uuid)).status).toBe(204)
    let page = await list(publication)
    expect(page.items.map((item) => item.uuid)).toEqual([root.uuid, first.uuid, lonely.uuid])
    expect(find(page, root.uuid)?.replyCount).toBe(1)

    expect((await remove(author, publication, root.uuid)).status).toBe(204)
    expect((await remove(author, publication, lonely.uuid)).status).toBe(204)
    page = await list(publication, author.cookie)
    expect(page.items.map((item) => item.uuid)).toEqual([root.uuid, first.uuid])
    const placeholder = page.items[0]!
    expect(Object.keys(placeholder).sort()).toEqual([...requiredFields].sort())
    expect(placeholder).toMatchObject({
      deleted: true, body: "", authorName: "", canDelete: false, isPublicationAuthor: false, replyCount: 1
    })
    expect(page.items[1]).toMatchObject({ deleted: false, body: "Ответ 1", parentCommentUuid: root.uuid })

    // A deleted root takes no new answers.
    const reply = await call("POST", `${commentsPath(publication)}/${root.uuid}/replies`,
      { requestUuid: crypto.randomUUID(), body: "Поздно" }, owner.cookie)
    expect(reply.status).toBe(404)

    expect((await remove(owner, publication, first.uuid)).status).toBe(204)
    expect((await list(publication)).items).toEqual([])
    const stored = await db.query<{ deleted_at: Date | null }>(
      "SELECT deleted_at FROM publication_comments WHERE publication_uuid = $1", [publication])
    expect(stored.rows).toHaveLength(4) // soft delete: the rows stay
    expect(stored.rows.every((row) => row.deleted_at !== null)).toBe(true)
  })

  it("hides the comments of a deleted author like deleted comments", async () => {
    const owner = await signIn()
    const author = await signIn()
    const publication = await publish(owner)
    const root = await post(author, publication, "Скоро удалюсь")
    const answer = await post(owner, publication, "Ответ", root.uuid)
    const own = await post(author, publication, "Ещё один")
    await db.query("UPDATE accounts SET deleted_at = now() WHERE uuid = $1", [author.accountUuid])
    const page = await list(publication)
    expect(page.items.map((item) => item.uuid)).toEqual([root.uuid, answer.uuid])
    expect(page.items[0]).toMatchObject({ deleted: true, body: "", authorName: "" })
    expect(find(page, own.uuid)).toBeUndefined()
  })

  it("lets only the author or the owner delete; others get 403, signed-out callers 401", async () => {
    const owner = await signIn()
    const author = await signIn()
    const other = await signIn()
    const publication = await publish(owner)
    const byAuthor = await post(author, publication, "Удалю сам")
    const forOwner = await post(author, publication, "Удалит владелец")

    expect((await remove(undefined, publication, byAuthor.uuid)).status).toBe(401)
    const refused = await remove(other, publication, byAuthor.uuid)
    expect(refused.status).toBe(403)
    expect(await errorCode(refused)).toBe("forbidden")
    expect(find(await list(publication), byAuthor.uuid)?.deleted).toBe(false)

    expect((await remove(author, publication, byAuthor.uuid)).status).toBe(204)
    expect((await remove(owner, publication, forOwner.uuid)).status).toBe(204)
    const stored = () => db.query("SELECT deleted_at, deleted_by_profile_uuid, revision FROM publication_comments WHERE uuid = $1", [byAuthor.uuid])
    const afterDelete = (await stored()).rows
    expect(afterDelete).toMatchObject([{ deleted_by_profile_uuid: author.profileUuid, revision: 2 }])
    expect((await remove(author, publication, byAuthor.uuid)).status).toBe(204) // again: same answer...
    expect((await remove(owner, publication, byAuthor.uuid)).status).toBe(204)
    expect((await stored()).rows).toEqual(afterDelete) // ...and no change
    expect((await remove(other, publication, byAuthor.uuid)).status).toBe(404) // no longer shows
    expect((await remove(owner, publication, crypto.randomUUID())).status).toBe(404)
    // A comment is addressed through its own publication only.
    const elsewhere = await publish(owner)
    const live = await post(author, publication, "Живой")
    expect((await remove(owner, elsewhere, live.uuid)).status).toBe(404)
    expect((await list(publication)).items.map((item) => item.uuid)).toEqual([live.uuid])
  })

  it("answers 404 for the comments of an absent, hidden, unapproved or deleted publication", async () => {
    const owner = await signIn()
    const reader = await signIn()
    const states: ReadonlyArray<readonly [string, string]> = [
      ["hidden", "UPDATE publications SET hidden = true WHERE uuid = $1"],
      ["unapproved", "UPDATE publications SET approved = NULL, status = 'pending' WHERE uuid = $1"],
      ["deleted", "UPDATE publications SET deleted_at = now() WHERE uuid = $1"],
      ["owner deleted", "UPDATE profiles SET deleted_at = now() WHERE uuid = (SELECT owner_profile_uuid FROM publications WHERE uuid = $1)"]
    ]
    for (const [label, statement] of states) {
      const current = label === "owner deleted" ? await signIn() : owner
      const publication = await publish(current)
      const root = await post(reader, publication, "Был виден")
      await db.query(statement, [publication])
      const attempts = [
        await call("GET", commentsPath(publication), undefined, reader.cookie),
        await call("POST", commentsPath(publication), { requestUuid: crypto.randomUUID(), body: "x" }, reader.cookie),
        await call("POST", `${commentsPath(publication)}/${root.uuid}/replies`, { requestUuid: crypto.randomUUID(), body: "x" }, reader.cookie),
        await remove(reader, publication, root.uuid)
      ]
      for (const response of attempts) {
        expect(response.status, label).toBe(404)
        expect(await errorCode(response)).toBe("not_found")
      }
    }
    const absent = crypto.randomUUID()
    expect((await call("GET", commentsPath(absent))).status).toBe(404)
    expect((await call("POST", commentsPath(absent), { requestUuid: crypto.randomUUID(), body: "x" }, reader.cookie)).status).toBe(404)
    expect((await call("GET", "/api/v1/publications/not-a-uuid/comments")).status).toBe(400)
  })

  it("refuses a reply to an answer, to an absent comment and to a comment of another publication", async () => {
    const owner = await signIn()
    const publication = await publish(owner)
    const root = await post(owner, publication, "Корень")
    const answer = await post(owner, publication, "Ответ", root.uuid)
    const reply = (to: string, on = publication) =>
      call("POST", `${commentsPath(on)}/${to}/replies`, { requestUuid: crypto.randomUUID(), body: "Ещё глубже" }, owner.cookie)

    const nested = await reply(answer.uuid)
    expect(nested.status).toBe(400)
    expect(await errorCode(nested)).toBe("invalid_request")
    expect((await reply(crypto.randomUUID())).status).toBe(404)
    expect((await reply(root.uuid, await publish(owner))).status).toBe(404)
    expect(find(await list(publication), root.uuid)?.replyCount).toBe(1)
  })

  it("needs a session to write", async () => {
    const owner = await signIn()
    const publication = await publish(owner)
    const root = await post(owner, publication, "Корень")
    for (const path of [commentsPath(publication), `${commentsPath(publication)}/${root.uuid}/replies`]) {
      const response = await call("POST", path, { requestUuid: crypto.randomUUID(), body: "x" }, "__Host-birzha_session=forged")
      expect(response.status).toBe(401)
      expect(await errorCode(response)).toBe("unauthenticated")
    }
  })

  it("creates once per requestUuid: a retry returns the same comment, another body is a conflict", async () => {
    const owner = await signIn()
    const author = await signIn()
    const publication = await publish(owner)
    const requestUuid = crypto.randomUUID()
    const send = (body: unknown, path = commentsPath(publication)) => call("POST", path, body, author.cookie)

    const first = await send({ requestUuid, body: "Один раз" })
    expect(first.status).toBe(200)
    const created = ((await first.json()) as { comment: Comment }).comment
    const [retry, trimmedRetry] = await Promise.all([send({ requestUuid, body: "Один раз" }), send({ requestUuid, body: " Один раз " })])
    expect(((await retry.json()) as { comment: Comment }).comment).toEqual(created)
    expect(((await trimmedRetry.json()) as { comment: Comment }).comment).toEqual(created)

    const conflict = await send({ requestUuid, body: "Другой текст" })
    expect(conflict.status).toBe(409)
    expect(await errorCode(conflict)).toBe("request_conflict")
    // The same key for a reply is another command too.
    const asReply = await send({ requestUuid, body: "Один раз" }, `${commentsPath(publication)}/${created.uuid}/replies`)
    expect(asReply.status).toBe(409)

    const replyKey = crypto.randomUUID()
    const replies = await Promise.all([1, 2, 3].map(() =>
      send({ requestUuid: replyKey, body: "Ответ" }, `${commentsPath(publication)}/${created.uuid}/replies`)))
    const answers = await Promise.all(replies.map(async (r) => ((await r.json()) as { comment: Comment }).comment.uuid))
    expect(new Set(answers).size).toBe(1)
    expect((await list(publication)).items.map((item) => item.uuid)).toEqual([created.uuid, answers[0]])
  })

  it("pages roots oldest first with their answers, limit 1 to 100", async () => {
    const owner = await signIn()
    const publication = await publish(owner)
    const roots: Array<Comment> = []
    for (let i = 0; i < 5; i++) roots.push(await post(owner, publication, `Корень ${i}`))
    const answer = await post(owner, publication, "Ответ", roots[1]!.uuid)
    // A deleted root without answers takes no place on a page.
    expect((await remove(owner, publication, roots[2]!.uuid)).status).toBe(204)

    const pageOne = await list(publication, undefined, "?limit=2")
    expect(pageOne.items.map((item) => item.uuid)).toEqual([roots[0]!.uuid, roots[1]!.uuid, answer.uuid])
    expect(pageOne.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/)
    const pageTwo = await list(publication, undefined, `?limit=2&cursor=${pageOne.nextCursor}`)
    expect(pageTwo.items.map((item) => item.uuid)).toEqual([roots[3]!.uuid, roots[4]!.uuid])
    expect(pageTwo.nextCursor).toBeUndefined()
    expect((await list(publication, undefined, "?limit=1")).items.map((item) => item.uuid)).toEqual([roots[0]!.uuid])
    expect((await list(publication, undefined, "?limit=100")).items).toHaveLength(5)
    expect((await list(publication)).items).toHaveLength(5)

    for (const query of ["?limit=0", "?limit=101", "?limit=1.5", "?limit=x", "?cursor=!!", "?cursor=bm90LWEtY3Vyc29y"]) {
      const response = await call("GET", `${commentsPath(publication)}${query}`)
      expect(response.status, query).toBe(400)
      expect(await errorCode(response)).toBe("invalid_request")
    }
  })

  it("declares the four operations as extensions with the comments:write scope on writes", async () => {
    const document = (await (await call("GET", "/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, {
        operationId: string
        "x-scopes": Array<string>
        "x-extension"?: boolean
        parameters?: Array<{ name: string; in: string }>
      }>>
    }
    const comments = document.paths["/api/v1/publications/{uuid}/comments"]!
    const one = document.paths["/api/v1/publications/{uuid}/comments/{commentUuid}"]!
    const replies = document.paths["/api/v1/publications/{uuid}/comments/{commentUuid}/replies"]!
    expect(comments["get"]).toMatchObject({ operationId: "comments.list", "x-scopes": [], "x-extension": true })
    expect(comments["get"]!.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual(["path uuid", "query cursor", "query limit"])
    expect(comments["post"]).toMatchObject({ operationId: "comments.create", "x-scopes": ["comments:write"], "x-extension": true })
    expect(replies["post"]).toMatchObject({ operationId: "comments.reply", "x-scopes": ["comments:write"], "x-extension": true })
    expect(one["delete"]).toMatchObject({ operationId: "comments.delete", "x-scopes": ["comments:write"], "x-extension": true })
  })
})
