import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { publicationsJoin, publiclyVisible } from "../publications/Visibility.js"
import { rowsDecoder, selectList } from "../store/Rows.js"
import { FileMimeType, FilePurpose } from "./File.js"

/** `files`: the one module that reads and writes it (the bytes are the `BlobStore`'s). */
export const StoredFileRow = Schema.Struct({
  uuid: Schema.String,
  profile_uuid: Schema.String,
  purpose: FilePurpose,
  name: Schema.String,
  mime_type: FileMimeType,
  size: Schema.Number,
  status: Schema.Literal("pending", "uploaded", "ready"),
  upload_token_hash: Schema.String,
  upload_expires_at: Schema.DateFromSelf,
  sha256: Schema.NullOr(Schema.String),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})

/** The stored row and whether it is pending past its upload deadline, by the database's clock. */
export const FileRow = Schema.Struct({ ...StoredFileRow.fields, expired: Schema.Boolean })
export type FileRow = typeof FileRow.Type

const fileRowList = `${selectList(StoredFileRow, "f")}, (f.status = 'pending' AND f.upload_expires_at <= now()) AS expired`
const decodeFileRows = Schema.decodeUnknown(Schema.Array(FileRow))
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))
const first = <E, R>(rows: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
  Effect.flatMap(rows, (found) => Effect.map(Effect.orDie(decodeFileRows(found)), (decoded) => Option.fromNullable(decoded[0])))

/** A file by uuid (of `profileUuid` when given), row-locked when `lock`. */
export const fileRow = (
  uuid: string,
  options: { readonly profileUuid?: string; readonly lock: boolean }
): Effect.Effect<Option.Option<FileRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    first(sql`SELECT ${sql.literal(fileRowList)} FROM files f
      WHERE f.uuid = ${uuid}${options.profileUuid === undefined ? sql`` : sql` AND f.profile_uuid = ${options.profileUuid}`}${
      sql.literal(options.lock ? " FOR UPDATE" : "")
    }`))

/** A new pending file whose upload address (the token's keyed hash) lives `lifetimeSeconds`. */
export const insertFile = (file: {
  readonly uuid: string
  readonly profileUuid: string
  readonly purpose: FilePurpose
  readonly name: string
  readonly mimeType: FileMimeType
  readonly size: number
  readonly uploadTokenHash: string
  readonly lifetimeSeconds: number
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO files (uuid, profile_uuid, purpose, name, mime_type, size, upload_token_hash, upload_expires_at)
      VALUES (${file.uuid}, ${file.profileUuid}, ${file.purpose}, ${file.name}, ${file.mimeType}, ${file.size},
        ${file.uploadTokenHash}, now() + make_interval(secs => ${file.lifetimeSeconds}))`.pipe(Effect.asVoid))

/** A pending file's upload address is renewed; the previous token stops working. */
export const renewUpload = (uuid: string, uploadTokenHash: string, lifetimeSeconds: number): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE files SET upload_token_hash = ${uploadTokenHash}, upload_expires_at = now() + make_interval(secs => ${lifetimeSeconds})
      WHERE uuid = ${uuid} AND status = 'pending'`.pipe(Effect.asVoid))

export const markUploaded = (uuid: string, sha256: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE files SET status = 'uploaded', sha256 = ${sha256}, uploaded_at = now(), updated_at = now(),
      revision = revision + 1 WHERE uuid = ${uuid}`.pipe(Effect.asVoid))

/** The file becomes ready; returns the changed row. */
export const markReady = (uuid: string): Effect.Effect<FileRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    first(sql`UPDATE files f SET status = 'ready', ready_at = now(), updated_at = now(),
      revision = revision + 1 WHERE f.uuid = ${uuid} RETURNING ${sql.literal(fileRowList)}`).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage(`the file ${uuid} to complete is missing`), onSome: Effect.succeed }))
    ))

/** A file the server wrote itself (a learning export), ready at once: no upload address, its bytes put by the caller. */
export const insertReadyFile = (file: {
  readonly uuid: string
  readonly profileUuid: string
  readonly name: string
  readonly mimeType: "application/json" | "text/csv"
  readonly size: number
  readonly sha256: string
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO files (uuid, profile_uuid, purpose, name, mime_type, size, status, upload_token_hash, upload_expires_at, sha256,
        uploaded_at, ready_at)
      VALUES (${file.uuid}, ${file.profileUuid}, 'publication_file', ${file.name}, ${file.mimeType}, ${file.size}, 'ready', '', now(),
        ${file.sha256}, now(), now())`.pipe(Effect.asVoid))

/** Deletes the file rows (their bytes are the caller's to remove, in the same transaction). */
export const deleteFiles = (uuids: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM files WHERE ${sql.in("uuid", uuids)}`.pipe(Effect.asVoid))

/** A ready file of a live profile, with who may read it besides its owner. */
export const ReadableFileRow = Schema.Struct({
  ...FileRow.fields,
  /** An avatar, or referenced by a publicly visible publication of its owner profile. */
  is_public: Schema.Boolean,
  /** The viewer is a moderator. */
  moderator: Schema.Boolean
})
const decodeReadable = Schema.decodeUnknown(Schema.Array(ReadableFileRow))

export const readableFileRow = (
  uuid: string,
  viewerEmail: string | null
): Effect.Effect<Option.Option<typeof ReadableFileRow.Type>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      SELECT ${sql.literal(fileRowList)},
        (f.purpose = 'avatar' OR EXISTS (
          SELECT 1 FROM ${sql.literal(publicationsJoin)}
          WHERE p.owner_profile_uuid = f.profile_uuid AND ${sql.literal(publiclyVisible)}
            AND jsonb_path_exists(p.approved, '$.** ? (@ == $id)', jsonb_build_object('id', f.uuid::text))
        )) AS is_public,
        EXISTS (SELECT 1 FROM moderators m WHERE m.email = ${viewerEmail}) AS moderator
      FROM files f JOIN profiles fp ON fp.uuid = f.profile_uuid
      WHERE f.uuid = ${uuid} AND f.status = 'ready' AND fp.deleted_at IS NULL`.pipe(
      Effect.flatMap((rows) => Effect.orDie(decodeReadable(rows))),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

/** Which of `uuids` (lower-case, well formed) are ready files of the profile with the purpose. */
export const readyFileUuids = (
  profileUuid: string,
  purpose: FilePurpose,
  uuids: ReadonlyArray<string>
): Effect.Effect<ReadonlySet<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT uuid::text AS uuid FROM files
      WHERE uuid IN ${sql.in(uuids)} AND profile_uuid = ${profileUuid} AND purpose = ${purpose} AND status = 'ready'`.pipe(
      Effect.flatMap(decodeUuids),
      Effect.map((rows) => new Set(rows.map((row) => row.uuid)))
    ))

/**
 * Retention: deletes up to `batch` files that never became ready, older than `olderThanDays`,
 * whose upload address is dead and whose `files.prepare` result is no longer remembered.
 * Returns their uuids (the caller removes their bytes in the same transaction).
 */
export const deleteAbandonedFiles = (olderThanDays: number, batch: number): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`DELETE FROM files WHERE uuid IN (
        SELECT f.uuid FROM files f
        WHERE f.status <> 'ready' AND f.created_at < now() - make_interval(days => ${olderThanDays})
          AND (f.status = 'uploaded' OR f.upload_expires_at < now())
          -- Never while the files.prepare key that names it is still remembered (its retry must find it).
          AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.scope = f.profile_uuid::text
            AND k.operation_id = 'files.prepare' AND k.response->>'uuid' = f.uuid::text)
        LIMIT ${batch} FOR UPDATE OF f SKIP LOCKED)
      RETURNING uuid`.pipe(Effect.flatMap(decodeUuids), Effect.map((rows) => rows.map((row) => row.uuid))))
