import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Marketplace, openMarketplace } from "../../test/marketplace.js"
import { anonymous } from "../kernel/Authentication.js"
import { EncodedJson, forEachPiece, pieceText, StreamedJson } from "../operations/Implementation.js"
import { Operations } from "../operations/Operations.js"
import { decodeProfileRows, publicProfileColumns, publiclyVisibleProfile } from "../profiles/ProfileRepository.js"
import { publicView } from "../profiles/Profiles.js"
import { listPublicPublications } from "./PublicationRepository.js"
import { Catalog } from "./PublicationsApi.js"
import { catalogPublication } from "./PublicReads.js"

let m: Marketplace

beforeAll(async () => {
  m = await openMarketplace("catalog")
})
afterAll(async () => {
  await m?.close()
})

/**
 * The catalog as it was built before it was streamed: one statement per list, the whole document
 * encoded with the declared schema at once. What every answer must equal byte for byte.
 */
const wholeCatalog = () =>
  m.runtime.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const profiles = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(publicProfileColumns)} FROM profiles p LEFT JOIN accounts a ON a.uuid = p.account_uuid
      WHERE ${sql.literal(publiclyVisibleProfile)} ORDER BY p.created_at DESC, p.uuid DESC`,
      decodeProfileRows
    )
    const publications = yield* listPublicPublications(() => [])
    return JSON.stringify(Schema.encodeSync(Catalog)({
      schemaVersion: 1,
      profiles: profiles.map(publicView),
      publications: publications.map(catalogPublication)
    }))
  }))

/** The pieces HTTP writes (`streamed`). */
const streamedPieces = () =>
  m.runtime.runPromise(Effect.gen(function*() {
    const operations = yield* Operations
    const answer = yield* operations.invoke("getCatalog", anonymous, {}, { streamed: true })
    expect(answer.body).toBeInstanceOf(StreamedJson)
    const pieces: Array<string> = []
    yield* forEachPiece(answer.body as StreamedJson, (piece) => Effect.sync(() => void pieces.push(pieceText(piece))))
    return pieces
  }))

/** The text every other caller gets (collected by the registry). */
const collected = async () => {
  const answer = await m.invoke("getCatalog", anonymous)
  expect(answer.status).toBe(200)
  expect(answer.body).toBeInstanceOf(EncodedJson)
  return (answer.body as EncodedJson).json
}

/** `count` more public publications of one new public profile, approved at a few moments (many ties, across page ends). */
const addPublications = async (count: number) => {
  const owner = await m.profile({ public: true })
  await m.sql(
    `INSERT INTO publications (id, kind, owner_profile_uuid, status, draft, approved, approved_at, closed, demo)
     SELECT 'bulk-' || gen_random_uuid(), 'task', $1, 'approved', d, d, now() - (i % 3) * interval '1 minute', i % 4 = 0, i % 5 = 0
     FROM generate_series(1, $2::int) i,
       LATERAL (SELECT jsonb_build_object('title', 'Задача ' || i, 'category', 'Сайты', 'description', 'Описание задачи номер ' || i,
         'budget', 'до 5 000 ₽', 'deadline', 'неделя', 'files', '[]'::jsonb) AS d) data`,
    owner.profileUuid,
    count
  )
}

/** `count` more public profiles without an account (as imported ones are), created at a few moments. */
const addProfiles = async (count: number) => {
  await m.sql(
    `INSERT INTO profiles (id, name, type, is_public, created_at)
     SELECT 'bulk-' || gen_random_uuid(), 'Профиль ' || i, 'Физлицо', true, now() - (i % 3) * interval '1 minute'
     FROM generate_series(1, $1::int) i`,
    count
  )
}

const decodeCount = Schema.decodeUnknownSync(Schema.Tuple(Schema.Struct({ count: Schema.Int })))

const publicationCount = async () =>
  decodeCount(await m.sql("SELECT count(*)::int AS count FROM publications WHERE approved IS NOT NULL AND NOT hidden AND deleted_at IS NULL"))[0].count

describe("the catalog answer", () => {
  it("streams exactly the bytes of the whole catalog and of the collected answer: empty, one, a full page, several pages with ties", async () => {
    const sizes: Array<number> = []
    for (const add of [0, 1, 499, 700]) {
      if (add > 0) await addPublications(add)
      if (add === 700) await addProfiles(1100)
      const whole = await wholeCatalog()
      const pieces = await streamedPieces()
      expect(pieces.join("")).toBe(whole)
      expect(await collected()).toBe(whole)
      const catalog = JSON.parse(whole) as { publications: Array<unknown>; profiles: Array<unknown> }
      expect(catalog.publications.length).toBe(await publicationCount())
      sizes.push(catalog.publications.length)
      if (add === 700) {
        // Read in pages: more than one piece per list, so the joins between pages are exercised.
        expect(catalog.profiles.length).toBeGreaterThan(1000)
        expect(pieces.length).toBeGreaterThan(6)
      }
    }
    expect(sizes).toEqual([0, 1, 500, 1200])
    expect(await wholeCatalog()).toContain(`"profiles":[{`)
  })

  it("gives a typed caller the decoded value", async () => {
    const catalog = await m.call("getCatalog", anonymous, {})
    expect(catalog.schemaVersion).toBe(1)
    expect(catalog.publications.length).toBe(await publicationCount())
  })

  it("answers a database failure while collecting with the envelope (503), never a partial document", async () => {
    await m.sql("ALTER TABLE publications RENAME TO publications_away")
    try {
      const answer = await m.invoke("getCatalog", anonymous)
      expect(answer.status).toBe(503)
      expect((answer.body as { error: { code: string } }).error.code).toBe("unavailable")
    } finally {
      await m.sql("ALTER TABLE publications_away RENAME TO publications")
    }
  })
})
