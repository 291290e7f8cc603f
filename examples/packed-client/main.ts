// A third party's script on @birzha/client, installed from npm (here: from its packed tarball).
// BIRZHA_URL is the service; BIRZHA_KEY a key from the integrations page, or BIRZHA_COOKIE and
// BIRZHA_ORIGIN a signed-in session's cookie and the service's origin (what a browser sends).
import { Birzha, BirzhaError, createBirzhaClient, typedPublication } from "@birzha/client"
import { Effect } from "effect"

const { BIRZHA_URL, BIRZHA_KEY, BIRZHA_COOKIE, BIRZHA_ORIGIN } = process.env
if (BIRZHA_URL === undefined) throw new Error("Set BIRZHA_URL")
const headers: Record<string, string> = BIRZHA_COOKIE !== undefined && BIRZHA_ORIGIN !== undefined
  ? { cookie: BIRZHA_COOKIE, origin: BIRZHA_ORIGIN }
  : {}
const options = { baseUrl: BIRZHA_URL, apiKey: BIRZHA_KEY, headers }
const birzha = createBirzhaClient(options)

// Save three task drafts (the group-style call and the call by id are the same operation).
const titles = ["Лендинг для кофейни", "Логотип для пекарни", "Бот для записи"]
for (const [i, title] of titles.entries()) {
  const save = i % 2 === 0 ? birzha.tasks.save : birzha["tasks.save"]
  const saved = await save({
    payload: {
      requestUuid: crypto.randomUUID(),
      data: { title, category: "Сайты", description: "Меню, карта и форма заказа на одной странице", budget: "до 30 000 ₽", deadline: "две недели", files: [] }
    }
  })
  if (saved.revision < 1) throw new Error("a saved draft has a revision")
}

// List one's own tasks, two at a time: `nextCursor` reads the next page.
const own: Array<string> = []
let cursor: string | undefined
do {
  const page = await birzha.tasks.list(cursor === undefined ? { urlParams: { limit: 2 } } : { urlParams: { limit: 2, cursor } })
  for (const item of page.items) own.push(item.draft.title)
  cursor = page.nextCursor
} while (cursor !== undefined)

// Public reads take no argument when every parameter is optional.
const catalog = await birzha.listPublications()
const kinds = catalog.items.map((item) => typedPublication(item).kind)

// A refusal is a BirzhaError with the service's code and HTTP status.
const missing = await birzha.getPublication({ path: { uuid: crypto.randomUUID() } }).then(
  () => "found",
  (error: unknown) => error instanceof BirzhaError ? `${error.code} ${error.status}` : String(error)
)

// The same operations from an Effect program, with the declared errors typed.
const counted = await Effect.runPromise(
  Effect.gen(function*() {
    const client = yield* Birzha
    const page = yield* client.tasks.list({ urlParams: { limit: 100 } })
    return page.items.length
  }).pipe(
    Effect.catchTag("Unauthenticated", () => Effect.succeed(-1)),
    Effect.provide(Birzha.layerFetch(options))
  )
)

console.log(JSON.stringify({ own: own.sort(), kinds, missing, counted }))
