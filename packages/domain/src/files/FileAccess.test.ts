import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Marketplace, okBody, openMarketplace } from "../../test/marketplace.js"
import type { SessionActor } from "../kernel/Authentication.js"
import type { RelationView } from "../relations/Relation.js"
import { PostgresBlobStore } from "./BlobStore.js"
import { completeFile, prepareFile, readFileContent, receiveUpload } from "./Files.js"

let m: Marketplace
let customer: SessionActor
let contractor: SessionActor
let stranger: SessionActor

beforeAll(async () => {
  m = await openMarketplace("file_access")
  customer = await m.profile({ public: true, name: "Заказчик" })
  contractor = await m.profile({ public: true, name: "Исполнитель" })
  stranger = await m.profile({ public: true, name: "Посторонний" })
})
afterAll(async () => {
  await m?.close()
})

const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  m.runtime.runPromise(Effect.provide(effect, PostgresBlobStore) as Effect.Effect<A, E, never>)

/** A ready CSV file of `owner`, through prepare, the upload and complete, as a client makes one. */
const readyFile = async (owner: SessionActor, text: string): Promise<string> => {
  const bytes = new TextEncoder().encode(text)
  const prepared = await run(prepareFile(owner, {
    requestUuid: randomUUID(),
    name: "итог.csv",
    mimeType: "text/csv",
    size: bytes.length,
    purpose: "publication_file"
  }, "http://localhost:8080"))
  const token = new URL(prepared.upload!.url).searchParams.get("token")!
  await run(receiveUpload(prepared.uuid, token, bytes))
  await run(completeFile(owner, prepared.uuid, "http://localhost:8080"))
  return prepared.uuid
}

const readBy = async (uuid: string, viewer: SessionActor | undefined) =>
  Option.map(await run(readFileContent(uuid, Option.fromNullable(viewer))), (content) => new TextDecoder().decode(content.bytes))

/** A deal between the customer (task owner) and the contractor (who responded). */
const deal = async (): Promise<RelationView> => {
  const task = await m.publication(customer, "task")
  const response = okBody<RelationView>(await m.invoke("responses.create", contractor, {
    payload: { requestUuid: randomUUID(), publicationUuid: task, body: "Сделаю" }
  }))
  const accepted = okBody<RelationView>(await m.invoke("responses.status", customer, {
    payload: { requestUuid: randomUUID(), relationUuid: response.uuid, expectedRevision: response.revision, status: "accepted", body: "Беру" }
  }))
  return okBody<RelationView>(await m.invoke("deals.get", customer, { urlParams: { relationUuid: accepted.dealUuid! } }))
}

describe("who may read a file's bytes", () => {
  it("the customer reads a file the contractor handed over in a deal's results; a stranger and nobody signed out do not", async () => {
    const started = await deal()
    const file = await readyFile(contractor, "строка,значение\n1,2\n")
    // Before the hand-over the file is the contractor's alone.
    expect(await readBy(file, customer)).toEqual(Option.none())
    okBody(await m.invoke("deals.results", contractor, {
      payload: {
        requestUuid: randomUUID(),
        relationUuid: started.uuid,
        expectedRevision: started.revision,
        body: "Готово, таблица во вложении",
        references: [{ kind: "file", uuid: file.toUpperCase() }]
      }
    }))
    expect(await readBy(file, customer)).toEqual(Option.some("строка,значение\n1,2\n"))
    expect(await readBy(file, contractor)).toEqual(Option.some("строка,значение\n1,2\n"))
    expect(await readBy(file, stranger)).toEqual(Option.none())
    expect(await readBy(file, undefined)).toEqual(Option.none())
    // The hand-over grants this file only: another file of the contractor stays private.
    const other = await readyFile(contractor, "a,b\n")
    expect(await readBy(other, customer)).toEqual(Option.none())
  })

  it("the recipient of an offer reads the files it references; a relation of the owner with someone else grants nothing", async () => {
    const file = await readyFile(customer, "ТЗ,подробно\n")
    okBody(await m.invoke("offers.create", customer, {
      payload: { requestUuid: randomUUID(), recipientProfileUuid: contractor.profileUuid, body: "Смета во вложении", references: [{ kind: "file", uuid: file }] }
    }))
    expect(await readBy(file, contractor)).toEqual(Option.some("ТЗ,подробно\n"))
    // The stranger has a relation with the contractor (the other party), not one that names the file.
    okBody(await m.invoke("offers.create", stranger, {
      payload: { requestUuid: randomUUID(), recipientProfileUuid: contractor.profileUuid, body: "Есть работа" }
    }))
    expect(await readBy(file, stranger)).toEqual(Option.none())
  })

  it("the other participant of a thread reads a file sent in one of its messages; a stranger does not", async () => {
    const file = await readyFile(contractor, "черновик,1\n")
    const opened = okBody<{ thread: { uuid: string } }>(await m.invoke("threads.open", customer, {
      payload: { requestUuid: randomUUID(), recipientProfileUuid: contractor.profileUuid, body: "Пришлите черновик" }
    }))
    expect(await readBy(file, customer)).toEqual(Option.none())
    okBody(await m.invoke("messages.send", contractor, {
      payload: { requestUuid: randomUUID(), threadUuid: opened.thread.uuid, body: "Вот он", references: [{ kind: "file", uuid: file }] }
    }))
    expect(await readBy(file, customer)).toEqual(Option.some("черновик,1\n"))
    expect(await readBy(file, stranger)).toEqual(Option.none())
  })
})
