import { Schema } from "effect"
import { details, policyDetails } from "../kernel/ApiError.js"

/**
 * Why a bearer key may not run an operation. All are 403 with their own code, so a client can
 * tell "ask the owner for a scope" from "go through approval" from "use the browser".
 */

/** The key does not hold any scope the operation names (`x-scopes`). */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  message: Schema.String,
  ...policyDetails
}) {
  static readonly status = 403
  static readonly code = "insufficient_scope"
}

/** The operation is flagged for human approval: prepare it with `POST /api/v1/integration-commands/prepare`. */
export class ApprovalRequired extends Schema.TaggedError<ApprovalRequired>()("ApprovalRequired", {
  message: Schema.String,
  ...details("operation")
}) {
  static readonly status = 403
  static readonly code = "approval_required"
}

/** The key exists and is valid, but its owner turned HTTP API access off. */
export class KeyHttpDisabled extends Schema.TaggedError<KeyHttpDisabled>()("KeyHttpDisabled", {
  message: Schema.String
}) {
  static readonly status = 403
  static readonly code = "key_http_disabled"
}

/** The key exists and is valid, but its owner turned MCP access off (`/mcp` and every tool call through it). */
export class KeyMcpDisabled extends Schema.TaggedError<KeyMcpDisabled>()("KeyMcpDisabled", {
  message: Schema.String
}) {
  static readonly status = 403
  static readonly code = "key_mcp_disabled"
}

/** Only a signed-in browser session may do this (manage keys, moderate, switch the session's profile). */
export class SessionRequired extends Schema.TaggedError<SessionRequired>()("SessionRequired", {
  message: Schema.String,
  ...details("operation")
}) {
  static readonly status = 403
  static readonly code = "session_required"
}

/** Showing a key's secret needs a sign-in within the last 10 minutes: sign in again, then retry. */
export class ReauthenticationRequired extends Schema.TaggedError<ReauthenticationRequired>()("ReauthenticationRequired", {
  message: Schema.String
}) {
  static readonly status = 403
  static readonly code = "reauthentication_required"
}

/** A scope that does not exist in the catalog, or one no key may hold (moderation, key management). */
export class InvalidScope extends Schema.TaggedError<InvalidScope>()("InvalidScope", {
  message: Schema.String
}) {
  static readonly status = 400
  static readonly code = "invalid_scope"
}

/** Only a bearer key may do this (the approval flow's prepare and commit); a browser session calls the operation directly. */
export class KeyRequired extends Schema.TaggedError<KeyRequired>()("KeyRequired", {
  message: Schema.String,
  ...details("operation")
}) {
  static readonly status = 403
  static readonly code = "key_required"
}
