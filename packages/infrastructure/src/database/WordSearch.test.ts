import { listProfiles, listPublications } from "@birzha/domain/internal"
import * as Store from "@birzha/domain/internal"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmbeddedDataDir, embeddedDataDir } from "../../../../testing/pglite.js"
import { createTestDatabase, type TestDatabase } from "../../../../testing/postgres.js"
import { makePgliteClient } from "./PgliteClient.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

/** Titles that put a word at every boundary the rule names; each gets its own public publication. */
const titles = {
  alone: "Бот",
  plural: "Телеграм боты для магазина",
  genitive: "Разработка ботов",
  inside: "Фотообработка свадьбы",
  hyphen: "Телеграм-бот поддержки",
  quoted: "Сервис «Ботаник» (анализ)",
  comma: "Чат,бот и сайт",
  yo: "ЁЛКА в офисе",
  digits: "Отчёт 1С:Бухгалтерия"
} as const
type Key = keyof typeof titles

/** Seeds one public profile and one approved task per title; returns the uuid of each. */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [owner] = yield* sql<{ uuid: string }>`INSERT INTO profiles (id, name, type, is_public, about, skills)
    VALUES ('P-1', 'Мария Ёлкина', 'ИП', true, 'Делаю чат-боты', '[{"name": "Python"}, {"name": "Node.js"}]') RETURNING uuid`
  const uuids: Partial<Record<Key, string>> = {}
  let n = 0
  for (const [key, title] of Object.entries(titles)) {
    n += 1
    const data = { title, category: "Прочее", description: "Описание задачи без ключевых слов", budget: "", deadline: "", files: [] }
    const [row] = yield* sql<{ uuid: string }>`INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at)
      VALUES (${`T-${n}`}, 'task', ${owner!.uuid}, 'approved', ${JSON.stringify(data)}::jsonb, ${JSON.stringify(data)}::jsonb, now())
      RETURNING uuid`
    uuids[key as Key] = row!.uuid
  }
  return { uuids: uuids as Record<Key, string>, owner: owner!.uuid }
})

interface Database {
  readonly name: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
  readonly close: () => Promise<void>
}

/** One runtime over the database for the whole file, closed at the end. */
const database = (name: string, layer: Layer.Layer<SqlClient.SqlClient, unknown>, remove: () => Promise<void>): Database => {
  const runtime = ManagedRuntime.make(layer)
  return { name, run: (effect) => runtime.runPromise(effect), close: () => runtime.dispose().then(remove) }
}

const postgres = async (): Promise<Database> => {
  const made: TestDatabase = await createTestDatabase("word_search")
  return database("Postgres", testPgLayer(made.url, 2), () => made.drop())
}

const pglite = async (): Promise<Database> => {
  const data: EmbeddedDataDir = await embeddedDataDir("word-search", (dir) => Effect.runPromise(Effect.scoped(makePgliteClient(dir))))
  return database("PGlite", Layer.scoped(SqlClient.SqlClient, makePgliteClient(data.dir)), async () => data.remove())
}

describe.each([["Postgres", postgres], ["PGlite", pglite]] as const)("search by words on %s", (_name, open) => {
  let db: Database
  let uuids: Record<Key, string>
  let owner: string
  beforeAll(async () => {
    db = await open()
    await db.run(Store.runMigrations)
    ;({ uuids, owner } = await db.run(seed))
  })
  afterAll(async () => {
    await db?.close()
  })

  const found = async (q: string): Promise<ReadonlyArray<Key>> => {
    const page = await db.run(listPublications({ q, limit: 100 }))
    const byUuid = new Map(Object.entries(uuids).map(([key, uuid]) => [uuid, key as Key]))
    return page.items.map((p) => byUuid.get(p.uuid)!).sort()
  }

  it("matches a term at the start of a word: after a space, a hyphen, a comma, quotes, or at the very start; never mid-word", async () => {
    expect(await found("бот")).toEqual(["alone", "comma", "genitive", "hyphen", "plural", "quoted"].sort())
    expect(await found("обработка")).toEqual([])
    expect(await found("отообработка")).toEqual([])
    expect(await found("фотообработка")).toEqual(["inside"])
  })

  it("is case-insensitive with ё as е, and needs every term", async () => {
    expect(await found("БОТЫ")).toEqual(["plural"])
    expect(await found("елка")).toEqual(["yo"])
    expect(await found("ёлк офис")).toEqual(["yo"])
    expect(await found("ёлка бот")).toEqual([])
    expect(await found("телеграм бот")).toEqual(["hyphen", "plural"])
  })

  it("reads punctuation in a term as a word boundary: a hyphenated term is a phrase of word starts", async () => {
    expect(await found("телеграм-бот")).toEqual(["hyphen", "plural"])
    expect(await found("1с:бух")).toEqual(["digits"])
    expect(await found("«ботан»")).toEqual(["quoted"])
    expect(await found("(анализ)")).toEqual(["quoted"])
    expect(await found("ом-бот")).toEqual([])
  })

  it("treats LIKE's own characters as separators, not wildcards", async () => {
    expect(await found("б_т")).toEqual([])
    expect(await found("б%т")).toEqual([])
    expect(await found("%бот")).toEqual(["alone", "comma", "genitive", "hyphen", "plural", "quoted"].sort())
  })

  it("pages through a term on thousands of rows in date order, past the newest ones a search reads first, and finds a rare old match", async () => {
    // 2 100 older matches of "старая заявка" and one much older "редкостный": more than the newest
    // 2 000 a search reads in date order before it asks the trigram index for every match.
    const filler = await db.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at)
        SELECT 'F-' || g, 'task', ${owner}, 'approved', d, d, now() - interval '1 day' - g * interval '1 minute'
        FROM generate_series(1, 2100) g,
          LATERAL (SELECT jsonb_build_object('title', 'Старая заявка ' || g, 'category', 'Прочее', 'description', 'Без слов',
            'budget', '', 'deadline', '', 'files', '[]'::jsonb) AS d) data`
      yield* sql`INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at)
        SELECT 'R-1', 'task', ${owner}, 'approved', d, d, now() - interval '30 days'
        FROM (SELECT jsonb_build_object('title', 'Редкостный экспонат', 'category', 'Прочее', 'description', 'Без слов',
          'budget', '', 'deadline', '', 'files', '[]'::jsonb) AS d) data`
      return yield* sql<{ uuid: string }>`SELECT uuid FROM publications WHERE id LIKE 'F-%' ORDER BY approved_at DESC, uuid DESC`
    }))
    const seen: Array<string> = []
    let cursor: string | undefined
    do {
      const page = await db.run(listPublications({ q: "старая заявка", limit: 100, ...(cursor === undefined ? {} : { cursor }) }))
      seen.push(...page.items.map((p) => p.uuid))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    expect(seen).toEqual(filler.map((row) => row.uuid))
    const rare = await db.run(listPublications({ q: "редкостн" }))
    expect(rare.items.map((p) => p.id)).toEqual(["R-1"])
    expect((await db.run(listPublications({ q: "старая", limit: 3 }))).items.map((p) => p.id)).toEqual(["F-1", "F-2", "F-3"])
  })

  it("finds public profiles by the start of a word in name, about and skills", async () => {
    const uuidsOf = async (q: string) => (await db.run(listProfiles({ q }))).items.map((p) => p.uuid)
    expect(await uuidsOf("елкин")).toEqual([owner])
    expect(await uuidsOf("бот")).toEqual([owner])
    expect(await uuidsOf("node")).toEqual([owner])
    expect(await uuidsOf("лкина")).toEqual([])
    expect(await uuidsOf("ython")).toEqual([])
  })
})
