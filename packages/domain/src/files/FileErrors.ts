import { Schema } from "effect"

/** A file its purpose does not allow: a format or a size outside the purpose's rules. */
export class InvalidFile extends Schema.TaggedError<InvalidFile>()("InvalidFile", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_file"
}

/** `files.complete` before the bytes arrived (or after the upload address lapsed unused). */
export class NotUploaded extends Schema.TaggedError<NotUploaded>()("NotUploaded", {
  message: Schema.String
}) {
  static readonly status = 409
  static readonly code = "not_uploaded"
}

/** The upload address was already used: its bytes are stored; it takes no others. */
export class UploadUsed extends Schema.TaggedError<UploadUsed>()("UploadUsed", {
  message: Schema.String
}) {
  static readonly status = 409
  static readonly code = "upload_used"
}

/** The upload address lapsed before the bytes arrived; prepare again (a retry with the same requestUuid renews it). */
export class UploadExpired extends Schema.TaggedError<UploadExpired>()("UploadExpired", {
  message: Schema.String
}) {
  static readonly status = 410
  static readonly code = "upload_expired"
}

/** The body's byte count is not the size declared at prepare. */
export class SizeMismatch extends Schema.TaggedError<SizeMismatch>()("SizeMismatch", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "size_mismatch"
}

/** The bytes are not of the declared format (magic bytes, UTF-8, JSON). */
export class ContentMismatch extends Schema.TaggedError<ContentMismatch>()("ContentMismatch", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "content_mismatch"
}
