import { Schema } from "effect"
import { inputDetails } from "../kernel/ApiError.js"

/** A rule body that breaks the spec's table or the condition grammar; the message names the path in the rule. */
export class InvalidRule extends Schema.TaggedError<InvalidRule>()("InvalidRule", {
  message: Schema.String,
  ...inputDetails
}) {
  static readonly status = 400
  static readonly code = "invalid_rule"
}
