import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { rowDecoder } from "../store/Rows.js"

/**
 * Where the bytes of files live, by key. The default keeps them in Postgres (`file_blobs`), so
 * one database holds everything and a blob is written in the same transaction as its file row;
 * a filesystem or S3-compatible store can be provided instead without touching the domain.
 * Keys are chosen by the domain (a file's uuid), never by a client.
 */
export interface BlobStoreService {
  /** Stores the bytes under the key, replacing what was there. */
  readonly put: (key: string, bytes: Uint8Array) => Effect.Effect<void, SqlError>
  readonly get: (key: string) => Effect.Effect<Option.Option<Uint8Array>, SqlError>
  /** Removes the key; absent is fine. */
  readonly delete: (key: string) => Effect.Effect<void, SqlError>
}

export class BlobStore extends Context.Tag("@birzha/domain/BlobStore")<BlobStore, BlobStoreService>() {}

/** `file_blobs`, read and written only by the Postgres blob store below. pg hands `bytea` back as a Buffer, PGlite as a Uint8Array: both are Uint8Arrays. */
const FileBlobRow = Schema.Struct({ key: Schema.String, bytes: Schema.Uint8ArrayFromSelf, created_at: Schema.DateFromSelf })
const decodeBytes = rowDecoder(Schema.Struct({ bytes: FileBlobRow.fields.bytes }))

/**
 * The Postgres blob store: a `bytea` column per key. Its statements run on the caller's
 * transaction when there is one, so a rolled-back upload leaves no bytes behind.
 */
export const PostgresBlobStore: Layer.Layer<BlobStore, never, SqlClient.SqlClient> = Layer.effect(
  BlobStore,
  Effect.map(SqlClient.SqlClient, (sql): BlobStoreService => ({
    put: (key, bytes) =>
      sql`INSERT INTO file_blobs (key, bytes) VALUES (${key}, ${bytes})
        ON CONFLICT (key) DO UPDATE SET bytes = EXCLUDED.bytes, created_at = now()`.pipe(Effect.asVoid),
    get: (key) =>
      sql`SELECT bytes FROM file_blobs WHERE key = ${key}`.pipe(
        Effect.flatMap((rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(Effect.map(decodeBytes(rows[0]), (row) => row.bytes)))
      ),
    delete: (key) => sql`DELETE FROM file_blobs WHERE key = ${key}`.pipe(Effect.asVoid)
  }))
)
