// What the compiler checks of the packed client under strict, beside main.ts: results are typed
// (a wrong property is an error, so nothing became `any`), publication data per kind, the typed
// errors of the Effect client, and operation ids. Never run.
import { Effect } from "effect"
import {
  Birzha, BirzhaError, createBirzhaClient, followEvents, NotFound, typedPublication, verifyWebhook,
  type BirzhaPromiseClient, type PublicationDataByKind
} from "@birzha/client"

const client: BirzhaPromiseClient = createBirzhaClient({ baseUrl: "http://127.0.0.1:1", apiKey: "bk_key" })
export const titles = async (): Promise<Array<string>> => {
  const page = await client.listPublications({ urlParams: { q: "лендинг", kind: "task", limit: 10 } })
  return page.items.map((item) => {
    const publication = typedPublication(item)
    if (publication.kind === "task") return publication.approved.title + publication.approved.budget
    // @ts-expect-error an article has no budget
    if (publication.kind === "article") return publication.approved.budget
    return publication.kind
  })
}
export const saved = (): Promise<{ readonly uuid: string; readonly revision: number }> =>
  client["tasks.save"]({ payload: { requestUuid: crypto.randomUUID(), data: { title: "t", category: "Сайты", description: "d", budget: "b", deadline: "d", files: [] } } })
export const task: PublicationDataByKind["task"]["title"] = "a title"
export const events = async () => {
  for await (const event of followEvents(client, { types: ["publication.*"] })) console.log(event.type, event.aggregate.uuid)
}
export const verified = (body: string, headers: Record<string, string>): Promise<unknown> => verifyWebhook("whsec_x", headers, body)
export const read = (uuid: string) =>
  Effect.gen(function*() {
    const birzha = yield* Birzha
    const publication = typedPublication(yield* birzha.getPublication({ path: { uuid } }))
    return publication.kind === "task" ? publication.approved.deadline : publication.kind
  }).pipe(
    Effect.catchTag("NotFound", (error: NotFound) => Effect.succeed(error.message)),
    Effect.provide(Birzha.layerFetch({ baseUrl: "http://127.0.0.1:1" }))
  )
client.getPublication({ path: { uuid: "u" } }).catch((error: unknown) => error instanceof BirzhaError ? error.code : "")
// @ts-expect-error an operation id the catalog does not have
client["events.nope"]

export const ownTitles = async (): Promise<Array<string>> => {
  const page = await client.tasks.list()
  // @ts-expect-error an own task has no such property: the result is typed, not `any`
  page.items[0]?.notAProperty
  // @ts-expect-error a page has no such property
  page.notAPage
  return page.items.map((item) => item.draft.title)
}
// @ts-expect-error tasks.save takes its payload
client.tasks.save()
