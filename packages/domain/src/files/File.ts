import { Schema } from "effect"
import { DateTime, maxChars, minChars, RequestUuid, strict } from "../kernel/Common.js"

/** The formats a file may have: the spec's TaskFile list, for every purpose. */
export const fileMimeTypes = [
  "image/png",
  "image/jpeg",
  "image/webp",
  "image/gif",
  "image/avif",
  "application/pdf",
  "text/plain",
  "text/csv",
  "application/json",
  "application/zip",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
] as const

export const FileMimeType = Schema.Literal(...fileMimeTypes).annotations({ identifier: "FileMimeType" })
export type FileMimeType = typeof FileMimeType.Type

export const imageMimeTypes: ReadonlyArray<FileMimeType> = ["image/png", "image/jpeg", "image/webp", "image/gif", "image/avif"]

/**
 * What a file is for; a reference is valid only where its purpose fits (an attachment is never
 * shown as a publication image). `publication_asset`: images of `content.assets` (preview, cover,
 * blocks); `publication_file`: attachments in a draft's `files`; `avatar`: a profile picture.
 */
export const FilePurpose = Schema.Literal("publication_asset", "publication_file", "avatar").annotations({
  identifier: "FilePurpose"
})
export type FilePurpose = typeof FilePurpose.Type

/** Ours: the formats and the largest size of each purpose (docs/decisions.md, Files). */
export const filePurposeRules: Readonly<Record<FilePurpose, { readonly mimeTypes: ReadonlyArray<FileMimeType>; readonly maxBytes: number }>> = {
  publication_asset: { mimeTypes: imageMimeTypes, maxBytes: 5 * 1024 * 1024 },
  publication_file: { mimeTypes: fileMimeTypes, maxBytes: 1024 * 1024 },
  avatar: { mimeTypes: imageMimeTypes, maxBytes: 1024 * 1024 }
}

/** The largest size of any purpose: the schema's bound; each purpose's own bound is checked by prepare. */
export const maxFileBytes = Math.max(...Object.values(filePurposeRules).map((rule) => rule.maxBytes))

/** pending: waiting for its bytes; uploaded: bytes checked, waiting for complete; ready: usable; expired: the upload address lapsed unused. */
export const FileStatus = Schema.Literal("pending", "uploaded", "ready", "expired").annotations({ identifier: "FileStatus" })
export type FileStatus = typeof FileStatus.Type

// Control characters would break headers (Content-Disposition) and listings.
const FileName = Schema.String.pipe(
  minChars(1, { message: () => "a file name has 1 to 240 characters" }),
  maxChars(240, { message: () => "a file name has 1 to 240 characters" }),
  Schema.pattern(/^[^\u0000-\u001f\u007f]+$/, { message: () => "a file name has no control characters" })
)

export const FilePrepare = Schema.Struct({
  requestUuid: RequestUuid,
  name: FileName,
  mimeType: FileMimeType,
  size: Schema.Int.pipe(Schema.between(1, maxFileBytes)).annotations({
    description: "The exact byte count of the upload; at most 1048576 (5242880 for publication_asset)"
  }),
  purpose: FilePurpose
}).annotations({ identifier: "FilePrepare", ...strict })
export type FilePrepare = typeof FilePrepare.Type

/** A file as its owner sees it. */
export const FileRecord = Schema.Struct({
  uuid: Schema.UUID,
  status: FileStatus,
  name: Schema.String,
  mimeType: FileMimeType,
  size: Schema.Int,
  purpose: FilePurpose,
  revision: Schema.Int,
  createdAt: DateTime,
  updatedAt: DateTime,
  /** Until when the upload address takes the bytes. */
  expiresAt: DateTime,
  /** Hex SHA-256 of the stored bytes, once uploaded. */
  sha256: Schema.optional(Schema.String),
  /** Where the bytes are read (`GET`), once ready. */
  contentUrl: Schema.optional(Schema.String)
}).annotations({ identifier: "File" })
export type FileRecord = typeof FileRecord.Type

export const FileUpload = Schema.Struct({
  method: Schema.Literal("PUT"),
  /** One-time, bound to this file, served by this host; the raw bytes are its body. */
  url: Schema.String,
  expiresAt: DateTime,
  /** Headers to send with the bytes. */
  headers: Schema.Record({ key: Schema.String, value: Schema.String })
}).annotations({ identifier: "FileUpload" })

/** The answer of `files.prepare`: the file and, while it waits for its bytes, where to PUT them. */
export const PreparedFile = Schema.Struct({
  ...FileRecord.fields,
  /** Absent when a retry of prepare finds the bytes already uploaded. */
  upload: Schema.optional(FileUpload)
}).annotations({ identifier: "PreparedFile" })
export type PreparedFile = typeof PreparedFile.Type

/** Where the bytes of a prepared file are PUT (one-time, with its `token` query parameter); served by the host, not an operation. */
export const fileUploadPath = (uuid: string) => `/api/v1/files/uploads/${uuid}`

/** Where the bytes of a ready file are read (`GET`); served by the host, not an operation. */
export const fileContentPath = (uuid: string) => `/api/v1/files/${uuid}/content`
