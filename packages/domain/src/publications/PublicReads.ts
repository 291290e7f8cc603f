import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema, type Types } from "effect"
import type { InvalidRequest } from "../kernel/ApiError.js"
import { ProfileRow, publicProfileColumns, publiclyVisibleProfile } from "../profiles/ProfileRepository.js"
import { publicView } from "../profiles/Profiles.js"
import type { Profile, ProfileType } from "../profiles/Profile.js"
import { type CursorPosition, decodeCursor, keysetPages, pageOf } from "../store/Cursor.js"
import { type StreamedJson, streamedStruct } from "../operations/Implementation.js"
import { Catalog } from "./PublicationsApi.js"
import { rowsDecoder } from "../store/Rows.js"
import type { CatalogPublication, Publication, PublicationKind } from "./Publication.js"
import type { PooledRead } from "../store/PooledReads.js"
import {
  findPublicPublication,
  findPublicPublicationWith,
  listPublicPublications,
  publicPublicationPageWith,
  type PublicRow,
  searchPublicPublications
} from "./PublicationRepository.js"

/**
 * A public row's fields of the spec's Publication but `draft` (what the catalog sends of it), with
 * `approved` as given: no history, no reason.
 */
const publicFields = (row: PublicRow, approved: Publication["approved"]): Types.Mutable<CatalogPublication> => ({
  uuid: row.uuid,
  id: row.id,
  ownerId: row.owner_id,
  ownerUuid: row.owner_uuid,
  kind: row.kind,
  approved,
  status: "approved",
  hidden: false,
  history: [],
  reason: "",
  closed: row.closed,
  createdAt: row.created_at,
  // The public revision changes when a moderator approves, not when the owner edits a draft.
  updatedAt: row.approved_at
})

/**
 * The spec's Publication: approved data only; `draft` equals `approved`. Added to the object, not
 * spread into a new one: a literal that spreads an object and adds a key the object lacks
 * (`{ ...fields, draft }`) ended in the old generation with all it referenced (docs/decisions.md,
 * "The catalog is streamed").
 */
const publication = (row: PublicRow): Publication => {
  const item = publicFields(row, row.approved) as Types.Mutable<Publication>
  item.draft = row.approved
  return item
}

const isArray = (value: unknown): value is ReadonlyArray<unknown> => Array.isArray(value)
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The catalog projection (spec CatalogPublication): no `draft`; when the approved content document
 * has canonical `assets` and `blocks` arrays, the legacy `portfolio.assets` and `portfolio.blocks`
 * are sent empty (the client reads the canonical ones); everything else stays complete.
 */
export const catalogPublication = (row: PublicRow): CatalogPublication => {
  const content = row.approved["content"]
  const portfolio = row.approved["portfolio"]
  const canonical = isObject(content) && isArray(content["assets"]) && isArray(content["blocks"])
  const approved = canonical && isObject(portfolio)
    ? { ...row.approved, portfolio: { ...portfolio, assets: [], blocks: [] } }
    : row.approved
  // One object literal, `demo` assigned after: a copy spread from the fields with a key they lack
  // (`{ ...rest, approved, ...(row.demo ? { demo: true } : {}) }`) ended in the old generation with
  // what it referenced, ~4 MB per catalog answer kept until the next full collection
  // (docs/decisions.md, "The catalog is streamed").
  const item = publicFields(row, approved)
  if (row.demo) item.demo = true
  return item
}

/** Marks a statement to be planned with its values on every call (never kept as a generic plan). */
export const searchPlan = "/* birzha:per-call-plan */"

/**
 * How many of the newest public publications a search reads in date order before it asks the
 * trigram index for every match instead (`searchPublicPublications`).
 */
const searchWindow = 2000

/** `q` split on white space, at most 64 terms. */
const searchTerms = (q: string | undefined): ReadonlyArray<string> => (q ?? "").split(/\s+/u).filter((term) => term.length > 0).slice(0, 64)

/**
 * Every term of `q` must start a word of the column (migration 0016): the column and the term are
 * both `birzha_search_words` (lower case, ё as е, separators as one space, a space in front). The
 * term without its leading space is the LIKE the trigram index serves and the planner estimates,
 * exactly as before word search; `strpos` with the leading space then keeps only matches at a word
 * start, written `<> 0` so the planner takes it as not selective (0.995; `> 0` would be 1/3 a term
 * and tip frequent terms into sorting thousands of bitmap rows). Putting the space into the LIKE
 * instead underestimated frequent terms the same way (`ИИ агент` 91 ms instead of 1 ms at 100k;
 * docs/decisions.md "Search"). The normalised term holds no LIKE wildcard: `%`, `_` and `\` are
 * separators.
 */
export const matchingAll = (sql: SqlClient.SqlClient, column: string, q: string | undefined) =>
  searchTerms(q).map((term) =>
    sql`${sql.literal(column)} LIKE '%' || btrim(birzha_search_words(${term})) || '%' AND strpos(${sql.literal(column)}, birzha_search_words(${term})) <> 0`
  )

export const getPublication = (uuid: string): Effect.Effect<Option.Option<Publication>, SqlError, SqlClient.SqlClient> =>
  Effect.map(findPublicPublication(uuid), Option.map(publication))

/** `getPublication` through a pooled read (`makePooledRead`), for the operation every public page calls. */
export const getPublicationWith = (read: PooledRead) => {
  const find = findPublicPublicationWith(read)
  return (uuid: string): Effect.Effect<Option.Option<Publication>, SqlError> => Effect.map(find(uuid), Option.map(publication))
}

export interface PublicationQuery {
  readonly q?: string | undefined
  readonly kind?: PublicationKind | undefined
  readonly category?: string | undefined
  readonly ownerUuid?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/** Public publications, newest approval first, filtered by `q`, kind, category and owner. */
export const listPublications = (
  query: PublicationQuery
): Effect.Effect<{ readonly items: ReadonlyArray<Publication>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = yield* decodeCursor(query.cursor)
    const conditions = (sql: SqlClient.SqlClient) => [
      ...(query.kind === undefined ? [] : [sql`p.kind = ${query.kind}`]),
      ...(query.category === undefined ? [] : [sql`p.category = ${query.category}`]),
      ...(query.ownerUuid === undefined ? [] : [sql`p.owner_profile_uuid = ${query.ownerUuid}`]),
      ...Option.match(after, {
        onNone: () => [],
        onSome: (at) => [sql`(p.approved_at, p.uuid) < (${at.key}::timestamptz, ${at.uuid}::uuid)`]
      })
    ]
    // Planned per call (see perCallPlan in the infrastructure's PreparingClient): the plan depends on the terms.
    const rows = searchTerms(query.q).length === 0
      ? yield* listPublicPublications(conditions, { limit: limit + 1, prefix: searchPlan })
      : yield* searchPublicPublications(conditions, (sql, column) => matchingAll(sql, column, query.q), {
        limit: limit + 1,
        window: searchWindow,
        prefix: searchPlan
      })
    return pageOf(rows, limit, (row) => ({ key: row.approved_key, uuid: row.uuid }), publication)
  })

export interface ProfileQuery {
  readonly q?: string | undefined
  readonly type?: ProfileType | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

const publicProfiles = `profiles p LEFT JOIN accounts a ON a.uuid = p.account_uuid`

const decodeKeyedProfiles = rowsDecoder(Schema.Struct({ ...ProfileRow.fields, created_key: Schema.String }))

/** Publicly visible profiles (public ones and public authors), newest first, filtered by `q` and type. */
export const listProfiles = (
  query: ProfileQuery
): Effect.Effect<{ readonly items: ReadonlyArray<Profile>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limit = query.limit ?? 20
    const after = yield* decodeCursor(query.cursor)
    const conditions = [
      publiclyVisibleProfile,
      ...(query.type === undefined ? [] : [sql`p.type = ${query.type}`]),
      ...matchingAll(sql, "p.search_text", query.q),
      ...Option.match(after, {
        onNone: () => [],
        onSome: (at) => [sql`(p.created_at, p.uuid) < (${at.key}::timestamptz, ${at.uuid}::uuid)`]
      })
    ]
    const rows = yield* Effect.flatMap(
      sql`
      SELECT ${sql.literal(searchPlan)} ${sql.literal(publicProfileColumns)}, p.created_at::text AS created_key FROM ${sql.literal(publicProfiles)}
      WHERE ${sql.and(conditions)}
      ORDER BY p.created_at DESC, p.uuid DESC LIMIT ${limit + 1}`,
      decodeKeyedProfiles
    )
    return pageOf(rows, limit, (row) => ({ key: row.created_key, uuid: row.uuid }), publicView)
  })

/** Rows of the catalog read per statement: about 260 KiB of JSON at the demo's sizes. With 250 or 500, four readers at once raised the host's RSS twice as much (bench/README.md, `catalog`). */
const catalogPageSize = 100

const profileColumns = `${publicProfileColumns}, p.created_at::text AS created_key`
const profilePageOrder = `ORDER BY p.created_at DESC, p.uuid DESC LIMIT $1`
const profileFirstPage = `SELECT ${profileColumns} FROM ${publicProfiles} WHERE ${publiclyVisibleProfile} ${profilePageOrder}`
// `created_at <=` is what an index on created_at can seek to; the row comparison breaks ties.
const profilePageAfter = `SELECT ${profileColumns} FROM ${publicProfiles} WHERE ${publiclyVisibleProfile}
  AND p.created_at <= $2::timestamptz AND (p.created_at, p.uuid) < ($2::timestamptz, $3::uuid) ${profilePageOrder}`

/** Publicly visible profiles (the catalog's), newest first: `limit` after a keyset position. */
const publicProfilePageWith = (read: PooledRead) => (after: Option.Option<CursorPosition>, limit: number) =>
  Effect.flatMap(
    Option.match(after, {
      onNone: () => read(profileFirstPage, [limit]),
      onSome: (at) => read(profilePageAfter, [limit, at.key, at.uuid])
    }),
    decodeKeyedProfiles
  )

/**
 * The public catalog bootstrap (spec getCatalog): every public profile and every public
 * publication in the catalog projection; no private account state. Read page by page while it is
 * sent (`streamedStruct`), so the answer is never held whole: each page is a statement of its own
 * on a pooled connection (`makePooledRead`, as the other public reads; a third less time per answer
 * than through `@effect/sql`, bench/README.md "catalog"), in the order of the whole list (newest first). A publication approved again while the catalog is being read moves ahead of
 * the pages already sent and is left out of that answer, as one approved for the first time then
 * is (docs/decisions.md, "The catalog is streamed").
 */
export const catalogAnswerWith = (read: PooledRead): StreamedJson => {
  const profiles = keysetPages(catalogPageSize, publicProfilePageWith(read), (row) => ({ key: row.created_key, uuid: row.uuid }))
  const publications = keysetPages(catalogPageSize, publicPublicationPageWith(read), (row) => ({ key: row.approved_key, uuid: row.uuid }))
  return streamedStruct(Catalog, {
    schemaVersion: 1,
    profiles: profiles.map(publicView),
    publications: publications.map(catalogPublication)
  })
}
