import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Option, type Redacted, Schema } from "effect"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { NotFound, type RequestConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { keyedHash, sameHash, ServerSecret } from "../auth/ServerSecret.js"
import { idempotencyRetentionDays, idempotent } from "../store/Idempotency.js"
import { relationReferencesFile } from "../relations/RelationRepository.js"
import { threadMessageReferencesFile } from "../threads/ThreadRepository.js"
import { appendEvent } from "../store/Outbox.js"
import { BlobStore } from "./BlobStore.js"
import { checkContent } from "./ContentSniffing.js"
import {
  deleteAbandonedFiles,
  fileRow,
  type FileRow,
  insertFile,
  markReady,
  markUploaded,
  readableFileRow,
  readyFileUuids,
  renewUpload
} from "./FileRepository.js"
import {
  fileContentPath,
  type FileMimeType,
  type FilePrepare,
  type FilePurpose,
  filePurposeRules,
  type FileRecord,
  fileUploadPath,
  type PreparedFile
} from "./File.js"
import { ContentMismatch, InvalidFile, NotUploaded, SizeMismatch, UploadExpired, UploadUsed } from "./FileErrors.js"

/** Ours: how long an upload address takes the bytes after prepare (or after a retry renews it). */
export const uploadLifetime = Duration.hours(1)

const tokenPurpose = "file-upload"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether a string is a uuid (anything else is absent without asking the database). */
export const isUuid = (value: string): boolean => uuidPattern.test(value)

const recordOf = (row: FileRow, origin: string): FileRecord => ({
  uuid: row.uuid,
  status: row.expired ? "expired" : row.status,
  name: row.name,
  mimeType: row.mime_type,
  size: row.size,
  purpose: row.purpose,
  revision: row.revision,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  expiresAt: row.upload_expires_at,
  ...(row.sha256 === null ? {} : { sha256: row.sha256 }),
  ...(row.status === "ready" ? { contentUrl: `${origin}${fileContentPath(row.uuid)}` } : {})
})

const notFound = () => new NotFound({ message: "No such file" })

const ownRow = (actor: Actor, uuid: string, lock: boolean) =>
  isUuid(uuid) ? fileRow(uuid, { profileUuid: actor.profileUuid, lock }) : Effect.succeedNone

const PreparedUuid = Schema.Struct({ uuid: Schema.UUID })

/**
 * `files.prepare`: records a file of the acting profile waiting for its bytes and returns a
 * one-time upload address (a random token, of which only a keyed hash is stored). Idempotent by
 * `requestUuid`: a retry returns the same file with a fresh address (the previous one stops
 * working), as the raw token is never stored to be returned again.
 */
export const prepareFile = (
  actor: Actor,
  input: FilePrepare,
  origin: string
): Effect.Effect<PreparedFile, InvalidFile | RequestConflict | SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const rule = filePurposeRules[input.purpose]
    if (!rule.mimeTypes.includes(input.mimeType)) {
      return yield* new InvalidFile({
        message: `A ${input.purpose} file is one of ${rule.mimeTypes.join(", ")}; ${input.mimeType} is not allowed`
      })
    }
    if (input.size > rule.maxBytes) {
      return yield* new InvalidFile({ message: `A ${input.purpose} file has at most ${rule.maxBytes} bytes; ${input.size} declared` })
    }
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const token = randomBytes(32).toString("base64url")
    const lifetime = Duration.toSeconds(uploadLifetime)
    return yield* sql.withTransaction(Effect.gen(function*() {
      const { uuid } = yield* idempotent(
        { scope: actor.profileUuid, operationId: "files.prepare", requestUuid: input.requestUuid, request: input, result: PreparedUuid },
        Effect.gen(function*() {
          const uuid = randomUUID()
          yield* insertFile({
            uuid,
            profileUuid: actor.profileUuid,
            purpose: input.purpose,
            name: input.name,
            mimeType: input.mimeType,
            size: input.size,
            uploadTokenHash: keyedHash(secret, tokenPurpose, `${uuid}:${token}`),
            lifetimeSeconds: lifetime
          })
          return { uuid }
        })
      )
      // The first call stores this token's hash already; a retry renews the address here.
      yield* renewUpload(uuid, keyedHash(secret, tokenPurpose, `${uuid}:${token}`), lifetime)
      const row = yield* Effect.flatMap(ownRow(actor, uuid, false), Option.match({
        onNone: () => Effect.dieMessage(`the prepared file ${uuid} is missing`),
        onSome: Effect.succeed
      }))
      const record = recordOf(row, origin)
      if (row.status !== "pending") return record
      return {
        ...record,
        upload: {
          method: "PUT" as const,
          url: `${origin}${fileUploadPath(uuid)}?token=${token}`,
          expiresAt: row.upload_expires_at,
          headers: { "content-type": row.mime_type }
        }
      }
    }))
  })

/** `files.status`: a file of the acting profile; another profile's file is absent (404). */
export const fileStatus = (
  actor: Actor,
  uuid: string,
  origin: string
): Effect.Effect<FileRecord, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(ownRow(actor, uuid, false), Option.match({
    onNone: () => Effect.fail(notFound()),
    onSome: (row) => Effect.succeed(recordOf(row, origin))
  }))

/**
 * `files.complete`: an uploaded file of the acting profile becomes ready, and `file.ready` is
 * appended to the outbox in the same transaction. A ready file is returned again (idempotent);
 * a file without its bytes is 409 `not_uploaded`.
 */
export const completeFile = (
  actor: Actor,
  uuid: string,
  origin: string
): Effect.Effect<FileRecord, NotFound | NotUploaded | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const found = yield* ownRow(actor, uuid, true)
      if (Option.isNone(found)) return yield* notFound()
      const row = found.value
      if (row.status === "ready") return recordOf(row, origin)
      if (row.status === "pending") {
        return yield* new NotUploaded({
          message: row.expired
            ? "The file's upload address expired before its bytes arrived; prepare the file again"
            : "The file's bytes have not been uploaded yet: PUT them to the upload address first"
        })
      }
      const updated = yield* markReady(row.uuid)
      yield* appendEvent({
        type: "file.ready",
        aggregate: { kind: "file", uuid: row.uuid, revision: updated.revision },
        data: { objectUuid: row.uuid, status: "ready" },
        context: { profileUuid: row.profile_uuid }
      })
      return recordOf(updated, origin)
    }))
  })

/** What the upload address accepts, once its token, deadline and use are checked. */
export interface UploadTarget {
  readonly uuid: string
  readonly mimeType: FileMimeType
  readonly size: number
}

const targetOf = (
  row: FileRow | undefined,
  uuid: string,
  token: string,
  secret: Redacted.Redacted<string>
): Effect.Effect<UploadTarget, NotFound | UploadUsed | UploadExpired> => {
  // A wrong token reads like an unknown file: the address reveals nothing without its token.
  if (row === undefined || !sameHash(keyedHash(secret, tokenPurpose, `${uuid}:${token}`), row.upload_token_hash)) {
    return Effect.fail(new NotFound({ message: "No such upload address" }))
  }
  if (row.status !== "pending") {
    return Effect.fail(new UploadUsed({ message: "This upload address was already used; its file has its bytes" }))
  }
  if (row.expired) {
    return Effect.fail(new UploadExpired({ message: "This upload address has expired; prepare the file again" }))
  }
  return Effect.succeed({ uuid: row.uuid, mimeType: row.mime_type, size: row.size })
}

const targetRow = (uuid: string, token: string, lock: boolean) =>
  !isUuid(uuid) || token.length === 0 || token.length > 200
    ? Effect.succeed(undefined)
    : Effect.map(fileRow(uuid, { lock }), Option.getOrUndefined)

/** Checks an upload address before its body is read, so a bad one costs no bytes. */
export const uploadTarget = (
  uuid: string,
  token: string
): Effect.Effect<UploadTarget, NotFound | UploadUsed | UploadExpired | SqlError, SqlClient.SqlClient | ServerSecret> =>
  Effect.gen(function*() {
    const secret = yield* ServerSecret
    const row = yield* targetRow(uuid, token, false)
    return yield* targetOf(row, uuid, token, secret)
  })

/**
 * Takes the bytes of an upload address: exactly the declared size, of the declared format by
 * their content; then stores them and marks the file uploaded, in one transaction with the
 * address's use, so of two concurrent uploads exactly one is kept. A refused body uses nothing:
 * the address takes a corrected one until it expires.
 */
export const receiveUpload = (
  uuid: string,
  token: string,
  bytes: Uint8Array
): Effect.Effect<
  string,
  NotFound | UploadUsed | UploadExpired | SizeMismatch | ContentMismatch | SqlError,
  SqlClient.SqlClient | ServerSecret | BlobStore
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServerSecret
    const blobs = yield* BlobStore
    const target = yield* uploadTarget(uuid, token)
    yield* checkBytes(target, bytes)
    const sha256 = createHash("sha256").update(bytes).digest("hex")
    return yield* sql.withTransaction(Effect.gen(function*() {
      // Again under the row lock: a concurrent upload may have won meanwhile.
      const row = yield* targetRow(uuid, token, true)
      yield* targetOf(row, uuid, token, secret)
      yield* blobs.put(target.uuid, bytes)
      yield* markUploaded(target.uuid, sha256)
      return target.uuid
    }))
  })

/** The size and format rules of an upload, on bytes already read. */
export const checkBytes = (target: UploadTarget, bytes: Uint8Array): Effect.Effect<void, SizeMismatch | ContentMismatch> => {
  if (bytes.length !== target.size) {
    return Effect.fail(new SizeMismatch({ message: `The file was declared with ${target.size} bytes; ${bytes.length} arrived` }))
  }
  const checked = checkContent(target.mimeType, bytes)
  return checked.ok ? Effect.void : Effect.fail(new ContentMismatch({ message: `Not a ${target.mimeType} file: ${checked.reason}` }))
}

/** A ready file's bytes and what a reader may be told about them. */
export interface FileContent {
  readonly uuid: string
  readonly name: string
  readonly mimeType: FileMimeType
  readonly sha256: string
  readonly bytes: Uint8Array
  /** Readable by anyone (so shared caches may keep it), not only by its owner or a moderator. */
  readonly isPublic: boolean
}

/**
 * The bytes of a ready file, if `viewer` may read them. Anyone may read an avatar, and a file
 * that a publicly visible publication of its owner profile references in its approved data;
 * the owner profile and moderators may read every ready file (moderators review drafts); the
 * other party of a relation with the owner that references the file may read it (a deal's
 * handed-over results, a response's or offer's attachments). Not readable and absent are the
 * same `None`.
 */
export const readFileContent = (
  uuid: string,
  viewer: Option.Option<Actor>
): Effect.Effect<Option.Option<FileContent>, SqlError, SqlClient.SqlClient | BlobStore> =>
  Effect.gen(function*() {
    if (!isUuid(uuid)) return Option.none()
    const blobs = yield* BlobStore
    const viewerEmail = Option.match(viewer, { onNone: () => null, onSome: (actor) => actor.email })
    const found = yield* readableFileRow(uuid, viewerEmail)
    if (Option.isNone(found)) return Option.none()
    const row = found.value
    const owner = Option.exists(viewer, (actor) => actor.profileUuid === row.profile_uuid)
    const readable = row.is_public || owner || row.moderator || (yield* Option.match(viewer, {
      onNone: () => Effect.succeed(false),
      onSome: (actor) =>
        Effect.flatMap(relationReferencesFile(actor.profileUuid, row.profile_uuid, row.uuid), (named) =>
          named ? Effect.succeed(true) : threadMessageReferencesFile(actor.profileUuid, row.profile_uuid, row.uuid))
    }))
    if (!readable) return Option.none()
    const bytes = yield* blobs.get(row.uuid)
    if (Option.isNone(bytes)) {
      yield* Effect.logError("a ready file has no stored bytes", { file: row.uuid })
      return Option.none()
    }
    return Option.some({
      uuid: row.uuid,
      name: row.name,
      mimeType: row.mime_type,
      sha256: row.sha256 ?? "",
      bytes: bytes.value,
      isPublic: row.is_public
    })
  })

/**
 * Which of `uuids` are not ready files of this profile with this purpose (in the order given,
 * each once): what a save checks before it accepts references to files. Empty: all usable.
 */
export const unusableFiles = (
  profileUuid: string,
  purpose: FilePurpose,
  uuids: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const distinct = [...new Set(uuids)]
    const wellFormed = distinct.filter(isUuid).map((uuid) => uuid.toLowerCase())
    if (wellFormed.length === 0 || !isUuid(profileUuid)) return distinct
    const usable = yield* readyFileUuids(profileUuid, purpose, wellFormed)
    return distinct.filter((uuid) => !usable.has(uuid.toLowerCase()))
  })

/**
 * Removes files that never became ready (never uploaded, or uploaded and never completed) a day
 * after the idempotency retention, once their upload address is dead and the `files.prepare` key
 * naming them is gone, with their bytes. Until then `files.status` still answers `expired` or
 * `uploaded`, and a retried `files.prepare` still finds its file. Ready files are never removed
 * here. Returns how many went.
 */
export const cleanAbandonedFiles: Effect.Effect<number, SqlError, SqlClient.SqlClient | BlobStore> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const blobs = yield* BlobStore
  let total = 0
  for (;;) {
    const removed = yield* sql.withTransaction(Effect.gen(function*() {
      const uuids = yield* deleteAbandonedFiles(idempotencyRetentionDays + 1, 500)
      yield* Effect.forEach(uuids, (uuid) => blobs.delete(uuid), { discard: true })
      return uuids.length
    }))
    total += removed
    if (removed < 500) return total
  }
})
