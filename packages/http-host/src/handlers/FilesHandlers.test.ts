import { type FileMimeType, fileMimeTypes, type FilePurpose } from "@birzha/domain"
import { unusableFiles } from "@birzha/domain/internal"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sampleFiles, zipOf } from "../../../../testing/files.js"
import type { TestDatabase } from "../../../../testing/postgres.js"
import { type SignedIn, signIn } from "../../../../testing/signIn.js"
import { type RunningHost } from "../testing.js"
import { startTestService, type TestService } from "../testService.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

const origin = "http://localhost:8080"
let service: TestService
let database: TestDatabase
let host: RunningHost
let db: Pg.Client
let alice: SignedIn
let bob: SignedIn

beforeAll(async () => {
  service = await startTestService("files", { publicOrigin: origin, trustProxy: true })
  ;({ database, host, db } = service)
  alice = await signIn({ url: host.url, origin, db })
  bob = await signIn({ url: host.url, origin, db })
})
afterAll(async () => {
  await service?.close()
})

interface FileBody {
  uuid: string
  status: string
  name: string
  mimeType: string
  size: number
  purpose: string
  revision: number
  expiresAt: string
  sha256?: string
  contentUrl?: string
  upload?: { method: string; url: string; expiresAt: string; headers: Record<string, string> }
}

const call = (method: string, path: string, body?: unknown, cookie?: string) =>
  fetch(`${host.url}${path}`, {
    method,
    // The service's own pages send their Origin with the cookie (a change without it is refused).
    headers: { "content-type": "application/json", ...(cookie === undefined ? {} : { cookie, origin }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const codeOf = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code

const prepareBody = (type: FileMimeType = "image/png", overrides: Record<string, unknown> = {}) => ({
  requestUuid: crypto.randomUUID(),
  name: "picture.png",
  mimeType: type,
  size: sampleFiles[type].length,
  purpose: "publication_asset",
  ...overrides
})

const prepare = async (who: SignedIn, body: Record<string, unknown> = prepareBody()) => {
  const response = await call("POST", "/api/v1/files/uploads", body, who.cookie)
  expect(response.status, JSON.stringify(body)).toBe(200)
  return (await response.json()) as FileBody
}

/** The upload address is on the public origin; the test host listens elsewhere. */
const onHost = (url: string) => {
  expect(url.startsWith(`${origin}/`)).toBe(true)
  return `${host.url}${url.slice(origin.length)}`
}

const put = (url: string, bytes: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(onHost(url), { method: "PUT", body: new Uint8Array(bytes), headers })

const status = (who: SignedIn, uuid: string) => call("GET", `/api/v1/files/${uuid}`, undefined, who.cookie)
const complete = (who: SignedIn, uuid: string) => call("POST", `/api/v1/files/uploads/${uuid}/complete`, undefined, who.cookie)
const read = (uuid: string, cookie?: string, headers: Record<string, string> = {}) =>
  fetch(`${host.url}/api/v1/files/${uuid}/content`, { headers: { ...headers, ...(cookie === undefined ? {} : { cookie }) } })

/** prepare → PUT → complete: a ready file of `who`. */
const readyFile = async (who: SignedIn, type: FileMimeType = "image/png", overrides: Record<string, unknown> = {}) => {
  const prepared = await prepare(who, prepareBody(type, overrides))
  expect((await put(prepared.upload!.url, sampleFiles[type])).status).toBe(200)
  const completed = await complete(who, prepared.uuid)
  expect(completed.status).toBe(200)
  return (await completed.json()) as FileBody
}

describe("files", () => {
  it("every file operation needs a session", async () => {
    const uuid = crypto.randomUUID()
    expect((await call("POST", "/api/v1/files/uploads", prepareBody())).status).toBe(401)
    expect((await call("GET", `/api/v1/files/${uuid}`)).status).toBe(401)
    expect((await call("POST", `/api/v1/files/uploads/${uuid}/complete`)).status).toBe(401)
  })

  it("prepare → PUT → complete makes the file ready and records file.ready in the outbox", async () => {
    const bytes = sampleFiles["image/png"]
    const before = Date.now()
    const prepared = await prepare(alice)
    expect(prepared).toMatchObject({ status: "pending", name: "picture.png", mimeType: "image/png", size: bytes.length, purpose: "publication_asset", revision: 1 })
    expect(prepared.upload!.method).toBe("PUT")
    expect(prepared.upload!.headers).toEqual({ "content-type": "image/png" })
    expect(prepared.upload!.url).toMatch(new RegExp(`^${origin}/api/v1/files/uploads/${prepared.uuid}\\?token=[A-Za-z0-9_-]{43}$`))
    const lifetime = new Date(prepared.upload!.expiresAt).getTime() - before
    expect(lifetime).toBeGreaterThan(59 * 60_000)
    expect(lifetime).toBeLessThan(61 * 60_000)
    expect(prepared.contentUrl).toBeUndefined()

    // Only a keyed hash of the token is stored, neither in the file row nor in the idempotency record.
    const token = new URL(prepared.upload!.url).searchParams.get("token")!
    const { rows: stored } = await db.query("SELECT f.*, k.response::text AS response FROM files f, idempotency_keys k WHERE f.uuid = $1 AND k.operation_id = 'files.prepare'", [prepared.uuid])
    expect(stored.length).toBeGreaterThan(0)
    for (const row of stored) expect(JSON.stringify(row)).not.toContain(token)

    const pending = await status(alice, prepared.uuid)
    expect(pending.headers.get("cache-control")).toBe("no-store")
    expect(await pending.json()).toMatchObject({ uuid: prepared.uuid, status: "pending" })

    const uploaded = await put(prepared.upload!.url, bytes, { "content-type": "image/png" })
    expect(uploaded.status).toBe(200)
    expect(await uploaded.json()).toEqual({ uuid: prepared.uuid, status: "uploaded" })
    const sha256 = createHash("sha256").update(bytes).digest("hex")
    expect(await (await status(alice, prepared.uuid)).json()).toMatchObject({ status: "uploaded", sha256, revision: 2 })

    const completed = await complete(alice, prepared.uuid)
    expect(completed.status).toBe(200)
    const ready = (await completed.json()) as FileBody
    expect(ready).toMatchObject({ uuid: prepared.uuid, status: "ready", revision: 3, sha256, contentUrl: `${origin}/api/v1/files/${prepared.uuid}/content` })

    const { rows: events } = await db.query(
      "SELECT type, aggregate_kind, aggregate_uuid, aggregate_revision, data, context FROM outbox_events WHERE aggregate_uuid = $1",
      [prepared.uuid]
    )
    expect(events).toEqual([{
      type: "file.ready",
      aggregate_kind: "file",
      aggregate_uuid: prepared.uuid,
      aggregate_revision: 3,
      data: { objectUuid: prepared.uuid, status: "ready" },
      context: { profileUuid: alice.profileUuid }
    }])

    // Completing again returns the ready file and records nothing new.
    const again = await complete(alice, prepared.uuid)
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual(ready)
    expect((await db.query("SELECT 1 FROM outbox_events WHERE aggregate_uuid = $1", [prepared.uuid])).rowCount).toBe(1)

    // The owner reads the bytes back.
    const content = await read(prepared.uuid, alice.cookie)
    expect(content.status).toBe(200)
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes)
    expect(content.headers.get("content-type")).toBe("image/png")
    expect(content.headers.get("x-content-type-options")).toBe("nosniff")
    expect(content.headers.get("content-disposition")).toBe(`inline; filename="picture.png"; filename*=UTF-8''picture.png`)
    expect(content.headers.get("cache-control")).toBe("private, no-cache")
    expect(content.headers.get("etag")).toBe(`"${sha256}"`)
  })

  it("completing before the bytes arrived is 409 not_uploaded", async () => {
    const prepared = await prepare(alice)
    const response = await complete(alice, prepared.uuid)
    expect(response.status).toBe(409)
    expect(await codeOf(response)).toBe("not_uploaded")
    expect(await (await status(alice, prepared.uuid)).json()).toMatchObject({ status: "pending" })
  })

  it("checks the declared size, name and format against the purpose, at both ends of each bound", async () => {
    const expectRefused = async (body: Record<string, unknown>, code: string) => {
      const response = await call("POST", "/api/v1/files/uploads", body, alice.cookie)
      expect(response.status, JSON.stringify(body).slice(0, 200)).toBe(400)
      expect(await codeOf(response)).toBe(code)
    }
    const document = "application/pdf"
    // size: 1 up to 1048576 for attachments and avatars, 5242880 for publication images.
    await expectRefused(prepareBody(document, { purpose: "publication_file", size: 0 }), "invalid_request")
    await prepare(alice, prepareBody(document, { purpose: "publication_file", size: 1 }))
    await prepare(alice, prepareBody(document, { purpose: "publication_file", size: 1_048_576 }))
    await expectRefused(prepareBody(document, { purpose: "publication_file", size: 1_048_577 }), "invalid_file")
    await prepare(alice, prepareBody("image/png", { purpose: "avatar", size: 1_048_576 }))
    await expectRefused(prepareBody("image/png", { purpose: "avatar", size: 1_048_577 }), "invalid_file")
    await prepare(alice, prepareBody("image/png", { size: 5_242_880 }))
    await expectRefused(prepareBody("image/png", { size: 5_242_881 }), "invalid_request")
    await expectRefused(prepareBody("image/png", { size: 1.5 }), "invalid_request")
    // name: 1 to 240 characters, no control characters.
    await expectRefused(prepareBody("image/png", { name: "" }), "invalid_request")
    await prepare(alice, prepareBody("image/png", { name: "я" }))
    await prepare(alice, prepareBody("image/png", { name: "я".repeat(240) }))
    await expectRefused(prepareBody("image/png", { name: "я".repeat(241) }), "invalid_request")
    await expectRefused(prepareBody("image/png", { name: "a\r\nb.png" }), "invalid_request")
    // format: the spec's list; images only for images.
    await expectRefused(prepareBody("image/png", { mimeType: "image/svg+xml" }), "invalid_request")
    await expectRefused(prepareBody(document, { purpose: "publication_asset" }), "invalid_file")
    await expectRefused(prepareBody(document, { purpose: "avatar" }), "invalid_file")
    for (const type of fileMimeTypes) await prepare(alice, prepareBody(type, { purpose: "publication_file" }))
    await expectRefused(prepareBody("image/png", { purpose: "cover" }), "invalid_request")
    await expectRefused(prepareBody("image/png", { url: "https://example.com/a.png" }), "invalid_request")
    await expectRefused({ ...prepareBody("image/png"), requestUuid: "not-a-uuid" }, "invalid_request")
  })

  it("a retry of prepare returns the same file with a new address; another body under the same requestUuid is refused", async () => {
    const body = prepareBody()
    const first = await prepare(alice, body)
    const retry = await prepare(alice, body)
    expect(retry.uuid).toBe(first.uuid)
    expect(retry.upload!.url).not.toBe(first.upload!.url)
    // The first address stopped working; the new one works.
    expect((await put(first.upload!.url, sampleFiles["image/png"])).status).toBe(404)
    expect((await put(retry.upload!.url, sampleFiles["image/png"])).status).toBe(200)
    // After the upload a retry has no address to give.
    const late = await prepare(alice, body)
    expect(late).toMatchObject({ uuid: first.uuid, status: "uploaded" })
    expect(late.upload).toBeUndefined()
    const conflict = await call("POST", "/api/v1/files/uploads", { ...body, name: "other.png" }, alice.cookie)
    expect(conflict.status).toBe(409)
    expect(await codeOf(conflict)).toBe("request_conflict")
  })

  it("takes exactly the declared number of bytes", async () => {
    const bytes = sampleFiles["image/png"]
    const prepared = await prepare(alice)
    const longer = new Uint8Array([...bytes, 0])
    const tooLong = await put(prepared.upload!.url, longer)
    expect(tooLong.status).toBe(400)
    expect(await codeOf(tooLong)).toBe("size_mismatch")
    const tooShort = await put(prepared.upload!.url, bytes.subarray(0, bytes.length - 1))
    expect(tooShort.status).toBe(400)
    expect(await codeOf(tooShort)).toBe("size_mismatch")
    const empty = await put(prepared.upload!.url, new Uint8Array(0))
    expect(await codeOf(empty)).toBe("size_mismatch")
    // A body without a length is read only up to the declared size, then refused.
    let sent = 0
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 65536
        if (sent > 64 * 1024 * 1024) controller.close()
        else controller.enqueue(new Uint8Array(65536))
      }
    })
    const streamed = await fetch(onHost(prepared.upload!.url), { method: "PUT", body: endless, duplex: "half" } as RequestInit)
    expect(streamed.status).toBe(400)
    expect(await codeOf(streamed)).toBe("size_mismatch")
    expect(sent).toBeLessThan(64 * 1024 * 1024)
    // Nothing was stored: the address still takes the right bytes.
    expect(await (await status(alice, prepared.uuid)).json()).toMatchObject({ status: "pending" })
    expect((await put(prepared.upload!.url, bytes)).status).toBe(200)
  })

  it("refuses bytes that are not of the declared format", async () => {
    const refused = async (declared: FileMimeType, bytes: Uint8Array, purpose: FilePurpose = "publication_file") => {
      const prepared = await prepare(alice, prepareBody(declared, { purpose, size: bytes.length }))
      const response = await put(prepared.upload!.url, bytes)
      expect(response.status, declared).toBe(400)
      expect(await codeOf(response)).toBe("content_mismatch")
      expect(await (await status(alice, prepared.uuid)).json()).toMatchObject({ status: "pending" })
    }
    await refused("image/png", sampleFiles["image/jpeg"], "publication_asset")
    await refused("image/jpeg", sampleFiles["image/png"], "avatar")
    await refused("image/webp", new Uint8Array(Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt ", "latin1")), "publication_asset")
    await refused("application/pdf", new Uint8Array(Buffer.from("not a pdf at all")))
    await refused("text/plain", new Uint8Array([0x68, 0x69, 0xff, 0xfe]))
    await refused("text/csv", sampleFiles["image/gif"])
    await refused("application/json", new Uint8Array(Buffer.from("{\"unterminated\": ")))
    await refused("application/vnd.openxmlformats-officedocument.wordprocessingml.document", zipOf([["readme.txt", "x"]]))
    await refused("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", sampleFiles["application/vnd.openxmlformats-officedocument.wordprocessingml.document"])
    await refused("application/zip", sampleFiles["application/pdf"])
  })

  it("accepts every format of the spec, each checked by its content", async () => {
    for (const type of fileMimeTypes) {
      const ready = await readyFile(alice, type, { purpose: "publication_file", name: `file of ${type.split("/")[1]}` })
      expect(ready.status, type).toBe("ready")
    }
    // A Word document is a zip too.
    const asZip = await prepare(alice, prepareBody("application/zip", {
      purpose: "publication_file",
      size: sampleFiles["application/vnd.openxmlformats-officedocument.wordprocessingml.document"].length
    }))
    expect((await put(asZip.upload!.url, sampleFiles["application/vnd.openxmlformats-officedocument.wordprocessingml.document"])).status).toBe(200)
  })

  it("an upload address works once, and only with its own token", async () => {
    const prepared = await prepare(alice)
    const url = prepared.upload!.url
    const wrongToken = url.replace(/token=.*/, `token=${"A".repeat(43)}`)
    const wrong = await put(wrongToken, sampleFiles["image/png"])
    expect(wrong.status).toBe(404)
    expect(await codeOf(wrong)).toBe("not_found")
    expect((await put(url.replace(/\?token=.*/, ""), sampleFiles["image/png"])).status).toBe(404)
    expect((await put(url, sampleFiles["image/png"])).status).toBe(200)
    const reused = await put(url, sampleFiles["image/png"])
    expect(reused.status).toBe(409)
    expect(await codeOf(reused)).toBe("upload_used")
    // Another file's token does not open this file.
    const other = await prepare(alice)
    const crossed = `${origin}/api/v1/files/uploads/${other.uuid}?${new URL(url).searchParams}`
    expect((await put(crossed, sampleFiles["image/png"])).status).toBe(404)
    expect((await put(`${origin}/api/v1/files/uploads/not-a-uuid?token=x`, sampleFiles["image/png"])).status).toBe(404)
  })

  it("an expired upload address is refused, and the file reads as expired", async () => {
    const prepared = await prepare(alice)
    await db.query("UPDATE files SET upload_expires_at = now() - interval '1 second' WHERE uuid = $1", [prepared.uuid])
    const late = await put(prepared.upload!.url, sampleFiles["image/png"])
    expect(late.status).toBe(410)
    expect(await codeOf(late)).toBe("upload_expired")
    expect(await (await status(alice, prepared.uuid)).json()).toMatchObject({ status: "expired" })
    const completed = await complete(alice, prepared.uuid)
    expect(completed.status).toBe(409)
    expect(await codeOf(completed)).toBe("not_uploaded")
    // Just before the deadline it still works.
    const inTime = await prepare(alice)
    await db.query("UPDATE files SET upload_expires_at = now() + interval '2 seconds' WHERE uuid = $1", [inTime.uuid])
    expect((await put(inTime.upload!.url, sampleFiles["image/png"])).status).toBe(200)
  })

  it("another profile cannot see, complete, upload to or read a file", async () => {
    const prepared = await prepare(alice)
    for (const response of [await status(bob, prepared.uuid), await complete(bob, prepared.uuid)]) {
      expect(response.status).toBe(404)
      expect(await codeOf(response)).toBe("not_found")
    }
    // Bob's own upload token does not open Alice's file.
    const bobs = await prepare(bob)
    const crossed = `${origin}/api/v1/files/uploads/${prepared.uuid}?${new URL(bobs.upload!.url).searchParams}`
    expect((await put(crossed, sampleFiles["image/png"])).status).toBe(404)
    expect((await put(prepared.upload!.url, sampleFiles["image/png"])).status).toBe(200)
    expect((await complete(bob, prepared.uuid)).status).toBe(404)
    expect((await complete(alice, prepared.uuid)).status).toBe(200)
    expect((await status(bob, prepared.uuid)).status).toBe(404)
    expect((await read(prepared.uuid, bob.cookie)).status).toBe(404)
    expect((await read(prepared.uuid)).status).toBe(404)
    expect((await read(prepared.uuid, alice.cookie)).status).toBe(200)
  })

  it("serves a file to anyone once a public publication of its owner references it, and only then", async () => {
    const asset = await readyFile(alice)
    const attachment = await readyFile(alice, "application/pdf", { purpose: "publication_file", name: "Смета «итог».pdf" })
    expect((await read(asset.uuid)).status).toBe(404)
    const approved = {
      title: "Логотип",
      files: [attachment.uuid],
      content: { version: 1, assets: [{ id: asset.uuid, kind: "image", caption: "", alt: "" }], blocks: [] }
    }
    const { rows } = await db.query(
      `INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at)
       VALUES ($1, 'portfolio', $2, 'approved', $3, $3, now()) RETURNING uuid`,
      [`pub${Date.now()}`, alice.profileUuid, JSON.stringify(approved)]
    )
    const publicationUuid = rows[0].uuid as string

    const image = await read(asset.uuid)
    expect(image.status).toBe(200)
    expect(image.headers.get("cache-control")).toBe("public, max-age=300")
    expect(image.headers.get("content-type")).toBe("image/png")
    const notModified = await read(asset.uuid, undefined, { "if-none-match": image.headers.get("etag")! })
    expect(notModified.status).toBe(304)

    const pdf = await read(attachment.uuid)
    expect(pdf.status).toBe(200)
    expect(pdf.headers.get("content-type")).toBe("application/pdf")
    expect(pdf.headers.get("content-disposition")).toBe(
      `attachment; filename="_____ ______.pdf"; filename*=UTF-8''${encodeURIComponent("Смета «итог».pdf")}`
    )
    expect(new Uint8Array(await pdf.arrayBuffer())).toEqual(sampleFiles["application/pdf"])

    // Bob's publication naming Alice's file does not make it public.
    const bobsFile = await readyFile(bob)
    await db.query("UPDATE publications SET hidden = true WHERE uuid = $1", [publicationUuid])
    expect((await read(asset.uuid)).status).toBe(404)
    await db.query(
      `INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at)
       VALUES ($1, 'portfolio', $2, 'approved', $3, $3, now())`,
      [`pub${Date.now()}b`, bob.profileUuid, JSON.stringify({ title: "Чужое", files: [asset.uuid, bobsFile.uuid] })]
    )
    expect((await read(asset.uuid)).status).toBe(404)
    expect((await read(bobsFile.uuid)).status).toBe(200)
  })

  it("serves a file a contractor handed over in a deal's results to the customer, privately; a stranger gets 404", async () => {
    const carol = await signIn({ url: host.url, origin, db })
    const task = { title: "Таблица", category: "Аналитика", description: "Свести продажи в одну таблицу", budget: "", deadline: "", files: [] }
    const { rows } = await db.query(
      `INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at)
       VALUES ($1, 'task', $2, 'approved', $3, $3, now()) RETURNING uuid`,
      [`pub${Date.now()}d`, alice.profileUuid, JSON.stringify(task)]
    )
    const command = async (id: string, who: SignedIn, body: Record<string, unknown>) => {
      const response = await call("POST", `/api/v1/commands/${id}`, { requestUuid: crypto.randomUUID(), ...body }, who.cookie)
      expect(response.status, id).toBe(200)
      return (await response.json()) as { uuid: string; revision: number; dealUuid?: string }
    }
    const response = await command("responses.create", bob, { publicationUuid: rows[0].uuid, body: "Сделаю за день" })
    const accepted = await command("responses.status", alice, { relationUuid: response.uuid, expectedRevision: response.revision, status: "accepted" })
    const result = await readyFile(bob, "text/csv", { purpose: "publication_file", name: "продажи.csv" })
    expect((await read(result.uuid, alice.cookie)).status).toBe(404)
    await command("deals.results", bob, {
      relationUuid: accepted.dealUuid!,
      expectedRevision: 1,
      body: "Готово",
      references: [{ kind: "file", uuid: result.uuid }]
    })
    const handedOver = await read(result.uuid, alice.cookie)
    expect(handedOver.status).toBe(200)
    expect(handedOver.headers.get("cache-control")).toBe("private, no-cache")
    expect(new Uint8Array(await handedOver.arrayBuffer())).toEqual(sampleFiles["text/csv"])
    for (const reader of [await read(result.uuid, carol.cookie), await read(result.uuid)]) {
      expect(reader.status).toBe(404)
      expect(await codeOf(reader)).toBe("not_found")
    }
  })

  it("serves avatars to anyone; a text file with its charset", async () => {
    const avatar = await readyFile(alice, "image/png", { purpose: "avatar" })
    expect((await read(avatar.uuid)).status).toBe(200)
    const text = await readyFile(alice, "text/plain", { purpose: "publication_file", name: "notes.txt" })
    const response = await read(text.uuid, alice.cookie)
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; /)
    expect(await response.text()).toBe(Buffer.from(sampleFiles["text/plain"]).toString("utf8"))
    expect((await read(crypto.randomUUID())).status).toBe(404)
    expect((await read("nope")).status).toBe(404)
  })

  it("knows the byte routes: other methods are 405", async () => {
    const uuid = crypto.randomUUID()
    const upload = await fetch(`${host.url}/api/v1/files/uploads/${uuid}`, { method: "GET" })
    expect(upload.status).toBe(405)
    expect(upload.headers.get("allow")).toBe("PUT")
    const content = await fetch(`${host.url}/api/v1/files/${uuid}/content`, { method: "DELETE" })
    expect(content.status).toBe(405)
    expect(content.headers.get("allow")).toBe("GET")
  })

  it("unusableFiles names every reference that is not a ready file of the profile and purpose", async () => {
    const asset = await readyFile(alice)
    const attachment = await readyFile(alice, "application/pdf", { purpose: "publication_file" })
    const pending = await prepare(alice)
    const bobs = await readyFile(bob)
    const unusable = (profileUuid: string, purpose: FilePurpose, uuids: ReadonlyArray<string>) =>
      Effect.runPromise(unusableFiles(profileUuid, purpose, uuids).pipe(
        Effect.provide(testPgLayer(database.url))
      ))
    expect(await unusable(alice.profileUuid, "publication_asset", [])).toEqual([])
    expect(await unusable(alice.profileUuid, "publication_asset", [asset.uuid, asset.uuid.toUpperCase()])).toEqual([])
    expect(await unusable(alice.profileUuid, "publication_file", [attachment.uuid])).toEqual([])
    const absent = crypto.randomUUID()
    expect(await unusable(alice.profileUuid, "publication_asset", [attachment.uuid, asset.uuid, pending.uuid, bobs.uuid, absent, "x", pending.uuid]))
      .toEqual([attachment.uuid, pending.uuid, bobs.uuid, absent, "x"])
    expect(await unusable(bob.profileUuid, "publication_asset", [asset.uuid, bobs.uuid])).toEqual([asset.uuid])
    expect(await unusable(alice.profileUuid, "avatar", [asset.uuid])).toEqual([asset.uuid])
  })
})
