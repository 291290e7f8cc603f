import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import type { CursorPosition } from "../store/Cursor.js"
import type { PooledRead } from "../store/PooledReads.js"
import { JsonObject, rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"
import { PublicationKind, PublicationStatus } from "./Publication.js"
import { publicationsJoin, publiclyVisible, publiclyVisibleRow } from "./Visibility.js"

/**
 * The `publications` table: its rows, read and written only here (the owner's commands in
 * Publications.ts, public reads in PublicReads.ts, moderation in Moderation.ts). The data columns
 * are checked to be JSON objects here and decoded by their kind's schema where they are read.
 */
export const PublicationRow = Schema.Struct({
  uuid: Schema.String,
  id: Schema.String,
  kind: PublicationKind,
  owner_profile_uuid: Schema.String,
  status: PublicationStatus,
  draft: JsonObject,
  approved: Schema.NullOr(JsonObject),
  reason: Schema.String,
  hidden: Schema.Boolean,
  closed: Schema.Boolean,
  revision: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp,
  /** `updated_at::text`: the exact keyset position */
  updated_key: Schema.String
})
export type PublicationRow = typeof PublicationRow.Type

/** The row's columns over alias `p`. */
export const rowColumns = selectList(PublicationRow, "p", { updated_key: "p.updated_at::text" })
const decodeRows = rowsDecoder(PublicationRow)
const decodeRow = rowDecoder(PublicationRow)

const returned = (rows: ReadonlyArray<unknown>) =>
  rows.length === 0 ? Effect.dieMessage("publications: the statement returned no row") : decodeRow(rows[0])

/** An owner's live publication of a kind, locked for the rest of the transaction. */
export const lockOwnPublication = (
  ownerProfileUuid: string,
  kind: PublicationKind,
  uuid: string
): Effect.Effect<Option.Option<PublicationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* decodeRows(
      yield* sql`SELECT ${sql.literal(rowColumns)} FROM publications p
        WHERE p.uuid = ${uuid} AND p.kind = ${kind} AND p.owner_profile_uuid = ${ownerProfileUuid} AND p.deleted_at IS NULL
        FOR UPDATE`
    )
    return Option.fromNullable(rows[0])
  })

/** An owner's live publications of a kind, most recently changed first, before a keyset position. */
export const listOwnPublications = (
  ownerProfileUuid: string,
  kind: PublicationKind,
  query: { readonly after: Option.Option<CursorPosition>; readonly limit: number; readonly uuid?: string | undefined }
): Effect.Effect<ReadonlyArray<PublicationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeRows(
      yield* sql`SELECT ${sql.literal(rowColumns)} FROM publications p
        WHERE p.owner_profile_uuid = ${ownerProfileUuid} AND p.kind = ${kind} AND p.deleted_at IS NULL
        ${query.uuid === undefined ? sql`` : sql`AND p.uuid = ${query.uuid}`}
        ${
        Option.match(query.after, {
          onNone: () => sql``,
          onSome: (at) => sql`AND (p.updated_at, p.uuid) < (${at.key}::timestamptz, ${at.uuid}::uuid)`
        })
      }
        ORDER BY p.updated_at DESC, p.uuid DESC LIMIT ${query.limit}`
    )
  })

/** Any live publication of an owner, whatever its kind (the webhook payload's `current` record). */
export const findOwnPublication = (
  ownerProfileUuid: string,
  uuid: string
): Effect.Effect<Option.Option<PublicationRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* decodeRows(
      yield* sql`SELECT ${sql.literal(rowColumns)} FROM publications p
        WHERE p.uuid = ${uuid} AND p.owner_profile_uuid = ${ownerProfileUuid} AND p.deleted_at IS NULL`
    )
    return Option.fromNullable(rows[0])
  })

/** A new draft at revision 1; `draft` is the encoded data as JSON. */
export const insertPublication = (
  publication: { readonly id: string; readonly kind: PublicationKind; readonly ownerProfileUuid: string; readonly draft: string }
): Effect.Effect<PublicationRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`INSERT INTO publications AS p (id, kind, owner_profile_uuid, draft)
        VALUES (${publication.id}, ${publication.kind}, ${publication.ownerProfileUuid}, ${publication.draft}::jsonb)
        RETURNING ${sql.literal(rowColumns)}`,
      returned
    ))

/** What an owner's command sets (`draft` as encoded JSON; times as ISO strings). */
export type PublicationChange = {
  readonly draft?: string
  readonly status?: PublicationStatus
  readonly submitted_at?: string
  readonly reason?: string
  readonly hidden?: boolean
  readonly closed?: boolean
  readonly deleted_at?: string
}

/** Applies a change, next revision; returns the new row. */
export const updatePublication = (uuid: string, change: PublicationChange): Effect.Effect<PublicationRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE publications p SET ${sql.update(change)}, revision = p.revision + 1, updated_at = now()
        WHERE p.uuid = ${uuid} RETURNING ${sql.literal(rowColumns)}`,
      returned
    ))

// ---- public reads ---------------------------------------------------------------------------

/** A public publication with its owner's public identity (aliases `p` and owner profile `o`). */
export const PublicRow = Schema.Struct({
  uuid: Schema.String,
  id: Schema.String,
  kind: PublicationKind,
  owner_id: Schema.String,
  owner_uuid: Schema.String,
  approved: JsonObject,
  closed: Schema.Boolean,
  demo: Schema.Boolean,
  created_at: Timestamp,
  approved_at: Timestamp,
  /** `approved_at::text`: the exact keyset position */
  approved_key: Schema.String
})
export type PublicRow = typeof PublicRow.Type

const publicColumns = selectList(PublicRow, "p", {
  owner_id: "o.id",
  owner_uuid: "o.uuid",
  approved_key: "p.approved_at::text"
})
const decodePublicRows = rowsDecoder(PublicRow)
// The same columns read back from the search window's subquery `w`.
const windowColumns = selectList(PublicRow, "w")

const publicByUuid = `SELECT ${publicColumns} FROM ${publicationsJoin} WHERE p.uuid = $1 AND ${publiclyVisible}`

const firstPublic = (rows: ReadonlyArray<unknown>): Effect.Effect<Option.Option<PublicRow>> =>
  Effect.map(decodePublicRows(rows), (decoded) => Option.fromNullable(decoded[0]))

/** A public publication by uuid. */
export const findPublicPublication = (uuid: string): Effect.Effect<Option.Option<PublicRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.flatMap(sql.unsafe(publicByUuid, [uuid]), firstPublic))

/** `findPublicPublication` through a pooled read (`makePooledRead`): the public page of every publication runs it. */
export const findPublicPublicationWith = (read: PooledRead) => (uuid: string): Effect.Effect<Option.Option<PublicRow>, SqlError> =>
  Effect.flatMap(read(publicByUuid, [uuid]), firstPublic)

const publicPageOrder = `ORDER BY p.approved_at DESC, p.uuid DESC LIMIT $1`
const publicFirstPage = `SELECT ${publicColumns} FROM ${publicationsJoin} WHERE ${publiclyVisible} ${publicPageOrder}`
// `approved_at <=` is what the index publications_public seeks to; the row comparison breaks ties.
const publicPageAfter = `SELECT ${publicColumns} FROM ${publicationsJoin} WHERE ${publiclyVisible}
  AND p.approved_at <= $2::timestamptz AND (p.approved_at, p.uuid) < ($2::timestamptz, $3::uuid) ${publicPageOrder}`

/**
 * Public publications, newest approval first: `limit` of them after a keyset position, through a
 * pooled read (`makePooledRead`). The catalog reads every public publication this way, page by page.
 */
export const publicPublicationPageWith = (read: PooledRead) =>
(after: Option.Option<CursorPosition>, limit: number): Effect.Effect<ReadonlyArray<PublicRow>, SqlError> =>
  Effect.flatMap(
    Option.match(after, {
      onNone: () => read(publicFirstPage, [limit]),
      onSome: (at) => read(publicPageAfter, [limit, at.key, at.uuid])
    }),
    decodePublicRows
  )

type Fragment = ReturnType<SqlClient.SqlClient["and"]>

/**
 * Public publications that also meet `conditions`, newest approval first; `limit` rows at most
 * (none: all of them). `prefix` marks the statement (a planning hint).
 */
export const listPublicPublications = (
  conditions: (sql: SqlClient.SqlClient) => ReadonlyArray<Fragment | string>,
  options: { readonly limit?: number | undefined; readonly prefix?: string | undefined } = {}
): Effect.Effect<ReadonlyArray<PublicRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodePublicRows(
      yield* sql`SELECT ${sql.literal(options.prefix ?? "")} ${sql.literal(publicColumns)} FROM ${sql.literal(publicationsJoin)}
        WHERE ${sql.and([publiclyVisible, ...conditions(sql)])}
        ORDER BY p.approved_at DESC, p.uuid DESC ${options.limit === undefined ? sql`` : sql`LIMIT ${options.limit}`}`
    )
  })

/**
 * Public publications matching text conditions over `search_text`, newest approval first, without
 * trusting the planner's guess of how many rows a `LIKE '%term%'` matches (it comes from a histogram
 * of 100 unique texts: a rare and a common term get the same 1 %; bench/README.md "search").
 * First the newest `window` public rows that meet `conditions` are read in index order and the
 * text conditions applied to them: any match outside the window is older than every row in it, so
 * when the window holds `limit` matches they are the answer (a common term, a few milliseconds).
 * Otherwise the matches are rare: every match is collected through the trigram index (a
 * materialized set, which the planner reads by bitmap) and the newest `limit` kept.
 */
export const searchPublicPublications = (
  conditions: (sql: SqlClient.SqlClient) => ReadonlyArray<Fragment | string>,
  text: (sql: SqlClient.SqlClient, column: string) => ReadonlyArray<Fragment>,
  options: { readonly limit: number; readonly window: number; readonly prefix: string }
): Effect.Effect<ReadonlyArray<PublicRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const recent = yield* decodePublicRows(
      yield* sql`SELECT ${sql.literal(options.prefix)} ${sql.literal(windowColumns)} FROM (
          SELECT ${sql.literal(publicColumns)}, p.search_text FROM ${sql.literal(publicationsJoin)}
          WHERE ${sql.and([publiclyVisible, ...conditions(sql)])}
          ORDER BY p.approved_at DESC, p.uuid DESC LIMIT ${options.window}
        ) w
        WHERE ${sql.and(text(sql, "w.search_text"))}
        ORDER BY w.approved_at DESC, w.uuid DESC LIMIT ${options.limit}`
    )
    if (recent.length >= options.limit) return recent
    return yield* decodePublicRows(
      yield* sql`WITH matching AS MATERIALIZED (
          SELECT p.uuid, p.approved_at, p.owner_profile_uuid FROM publications p
          WHERE ${sql.and([publiclyVisibleRow, ...conditions(sql), ...text(sql, "p.search_text")])}
        ), newest AS (
          SELECT m.uuid FROM matching m JOIN profiles o ON o.uuid = m.owner_profile_uuid
          WHERE o.deleted_at IS NULL ORDER BY m.approved_at DESC, m.uuid DESC LIMIT ${options.limit}
        )
        SELECT ${sql.literal(options.prefix)} ${sql.literal(publicColumns)} FROM newest
          JOIN publications p ON p.uuid = newest.uuid JOIN profiles o ON o.uuid = p.owner_profile_uuid
        ORDER BY p.approved_at DESC, p.uuid DESC`
    )
  })

// ---- moderation -----------------------------------------------------------------------------

/** A pending publication with its owner's name, for the moderation queue. */
export const QueueRow = Schema.Struct({
  ...PublicationRow.pick("uuid", "id", "kind", "revision", "status", "draft", "approved").fields,
  owner_uuid: Schema.String,
  owner_id: Schema.String,
  owner_name: Schema.String,
  submitted_at: Timestamp,
  /** `submitted_at::text`: the exact keyset position */
  submitted_key: Schema.String
})
export type QueueRow = typeof QueueRow.Type

const queueColumns = selectList(QueueRow, "p", {
  owner_uuid: "o.uuid",
  owner_id: "o.id",
  owner_name: "o.name",
  submitted_key: "p.submitted_at::text"
})
const decodeQueue = rowsDecoder(QueueRow)

/** Pending live publications, oldest submission first, after a keyset position. */
export const listPendingPublications = (
  query: { readonly kind?: PublicationKind | undefined; readonly after: Option.Option<CursorPosition>; readonly limit: number }
): Effect.Effect<ReadonlyArray<QueueRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeQueue(
      yield* sql`SELECT ${sql.literal(queueColumns)}
        FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid
        WHERE ${
        sql.and([
          "p.status = 'pending' AND p.deleted_at IS NULL",
          ...(query.kind === undefined ? [] : [sql`p.kind = ${query.kind}`]),
          ...Option.match(query.after, {
            onNone: () => [],
            onSome: (at) => [sql`(p.submitted_at, p.uuid) > (${at.key}::timestamptz, ${at.uuid}::uuid)`]
          })
        ])
      }
        ORDER BY p.submitted_at, p.uuid LIMIT ${query.limit}`
    )
  })

/** Where a live publication stands, whoever owns it. */
export const PublicationStanding = PublicationRow.pick("uuid", "kind", "status", "revision")
export type PublicationStanding = typeof PublicationStanding.Type
const standingColumns = selectList(PublicationStanding, "p")
const decodeStanding = rowsDecoder(PublicationStanding)

/** A live publication's standing, locked for the rest of the transaction when `lock`. */
export const findPublicationStanding = (
  uuid: string,
  options: { readonly lock: boolean }
): Effect.Effect<Option.Option<PublicationStanding>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* decodeStanding(
      yield* sql`SELECT ${sql.literal(standingColumns)} FROM publications p WHERE p.uuid = ${uuid} AND p.deleted_at IS NULL
        ${options.lock ? sql`FOR UPDATE` : sql``}`
    )
    return Option.fromNullable(rows[0])
  })

const Revision = Schema.Struct({ revision: Schema.Int })
const decodeRevision = rowsDecoder(Revision)

/**
 * A moderator's decision: `approved` copies the draft into the public snapshot; `returned` and
 * `rejected` keep the previous snapshot public. Next revision; returns it.
 */
export const moderatePublication = (
  uuid: string,
  status: "approved" | "returned" | "rejected",
  reason: string
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* decodeRevision(
      yield* (status === "approved"
        ? sql`UPDATE publications SET status = 'approved', approved = draft, approved_at = now(), reason = ${reason},
            revision = revision + 1, updated_at = now() WHERE uuid = ${uuid} RETURNING revision`
        : sql`UPDATE publications SET status = ${status}, reason = ${reason},
            revision = revision + 1, updated_at = now() WHERE uuid = ${uuid} RETURNING revision`)
    )
    return row === undefined ? yield* Effect.dieMessage("publications: the moderated row vanished") : row.revision
  })

/**
 * A moderator unpublishes a publication (an upheld complaint, `unpublish`): the approved snapshot
 * leaves public view and the status becomes `returned` with the reason; the draft stays for the
 * owner to fix and submit again. Returns the new revision, none when absent or deleted.
 */
export const unpublishPublication = (uuid: string, reason: string): Effect.Effect<Option.Option<number>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`UPDATE publications SET status = 'returned', approved = NULL, reason = ${reason},
        revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid} AND deleted_at IS NULL RETURNING revision`,
      decodeRevision
    ).pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.revision))))
