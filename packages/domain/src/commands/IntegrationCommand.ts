import { Schema } from "effect"
import { AnyJson, DateTime, field, maxChars, minChars } from "../kernel/Common.js"
import { stateDetails } from "../kernel/ApiError.js"

/** Where a prepared command stands; `expired` is read from `expiresAt`, never stored. */
export const IntegrationCommandState = Schema.Literal("pending", "approved", "denied", "running", "committed", "failed", "expired", "revoked")
export type IntegrationCommandState = typeof IntegrationCommandState.Type

/** The body of `integrationCommands.prepare`: an approval-flagged operation and its arguments (path, query and body fields, flat). */
export const IntegrationCommandPrepare = Schema.Struct({
  operationId: Schema.String.pipe(minChars(1), maxChars(100)),
  arguments: Schema.Record({ key: Schema.String, value: AnyJson })
}).annotations({ identifier: "IntegrationCommandPrepare", parseOptions: { onExcessProperty: "error" } })

export const IntegrationCommandPath = Schema.Struct({ uuid: field(Schema.UUID, "The prepared command's uuid (the uuid of the command an approval tool answered).") })

/** The operation's own answer, stored once and returned by every later commit. */
export const IntegrationCommandResult = Schema.Struct({
  status: Schema.Int,
  body: AnyJson
}).annotations({ identifier: "IntegrationCommandResult" })

export const IntegrationCommand = Schema.Struct({
  uuid: Schema.UUID,
  operationId: Schema.String,
  /** Exactly what will run: the client's arguments plus the server-fixed requestUuid (and profileUuid). */
  arguments: Schema.Record({ key: Schema.String, value: AnyJson }),
  state: IntegrationCommandState,
  approvalUrl: Schema.String,
  expiresAt: DateTime,
  createdAt: DateTime,
  decidedAt: Schema.optional(DateTime),
  committedAt: Schema.optional(DateTime),
  result: Schema.optional(IntegrationCommandResult)
}).annotations({ identifier: "IntegrationCommand" })
export type IntegrationCommand = typeof IntegrationCommand.Type

export const IntegrationCommandAnswer = Schema.Struct({ command: IntegrationCommand })
  .annotations({ identifier: "IntegrationCommandAnswer" })


/** prepare of an operation that is not flagged for approval: call it directly. */
export class ApprovalNotRequired extends Schema.TaggedError<ApprovalNotRequired>()("ApprovalNotRequired", { message: Schema.String }) {
  static readonly status = 400
  static readonly code = "approval_not_required"
}

/** commit before the owner decided. */
export class ApprovalPending extends Schema.TaggedError<ApprovalPending>()("ApprovalPending", { message: Schema.String, ...stateDetails }) {
  static readonly status = 409
  static readonly code = "approval_pending"
}

/** The owner denied the command; it can never run. */
export class CommandDenied extends Schema.TaggedError<CommandDenied>()("CommandDenied", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "command_denied"
}

/** The command's hour passed before it was committed; prepare it again. */
export class CommandExpired extends Schema.TaggedError<CommandExpired>()("CommandExpired", { message: Schema.String }) {
  static readonly status = 410
  static readonly code = "command_expired"
}

/** The operation ran and failed (its error is in the message and in the stored result); prepare a new command. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "command_failed"
}

/** Another commit of the same command is running now; retry shortly. */
export class CommandInProgress extends Schema.TaggedError<CommandInProgress>()("CommandInProgress", { message: Schema.String }) {
  static readonly status = 409
  static readonly code = "command_in_progress"
}



/**
 * The owner's view of a prepared command (the approval pages): exactly what will run, what it does
 * in words, which key asks, and the publication it touches with its current data, so the page can
 * show the change. Never its result: a result may carry a secret meant for the key alone.
 */
export const OwnerCommand = Schema.Struct({
  uuid: Schema.UUID,
  operationId: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: AnyJson }),
  state: IntegrationCommandState,
  expiresAt: DateTime,
  createdAt: DateTime,
  decidedAt: Schema.optional(DateTime),
  /** The operation's declared summary (English); a page may say it in its own language by `operationId`. */
  summary: Schema.String,
  /** Operations an input flag adds to this one (`tasks.save` with `submit: true` also submits). */
  also: Schema.Array(Schema.Struct({ operationId: Schema.String, summary: Schema.String })),
  key: Schema.Struct({ uuid: Schema.UUID, name: Schema.String }),
  /** The publication named by `publicationUuid`: its owner's draft when it is the key profile's own, else its public version. */
  record: Schema.optional(Schema.Struct({
    uuid: Schema.UUID,
    kind: Schema.String,
    title: Schema.optional(Schema.String),
    /** The key profile's current draft of it (its own publication only): what a save would change. */
    draft: Schema.optional(Schema.Record({ key: Schema.String, value: AnyJson }))
  }))
}).annotations({ identifier: "OwnerCommand" })
export type OwnerCommand = typeof OwnerCommand.Type

export const OwnerCommandAnswer = Schema.Struct({ command: OwnerCommand }).annotations({ identifier: "OwnerCommandAnswer" })

export const OwnerCommandList = Schema.Struct({ items: Schema.Array(OwnerCommand) }).annotations({ identifier: "OwnerCommandList" })

export const OwnerDecision = Schema.Struct({
  decision: Schema.Literal("approve", "deny")
}).annotations({ identifier: "OwnerDecision", parseOptions: { onExcessProperty: "error" } })
