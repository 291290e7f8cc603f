import { Schema } from "effect"

/**
 * A `references` item, `publicationUuid` or `threadUuid` that names something of the wrong kind
 * or that the caller may not attach: the message lists the offending item
 * indexes. Nothing is saved.
 */
export class InvalidReference extends Schema.TaggedError<InvalidReference>()("InvalidReference", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_reference"
}
