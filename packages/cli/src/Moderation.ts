import {
  catalog,
  ComplaintAction,
  ComplaintDecisionInput,
  type ComplaintQueueItem,
  ComplaintStatus,
  ComplaintSubjectKind,
  Email,
  ModerationDecisionInput,
  type ModerationItem,
  PublicationKind,
  ReviewDecisionInput,
  type SystemCaller
} from "@birzha/domain"
import {
  complaintStanding,
  grantModerator,
  MarketplaceModerationOperations,
  reviewStanding,
  listModerators,
  moderationTarget,
  ModerationOperations,
  Operations,
  revokeModerator,
  runOperation
} from "@birzha/domain/internal"
import { ModeratorsConfig, validateSettings } from "@birzha/infrastructure"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Either, Option, ParseResult, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { CommandDatabase } from "./HostLink.js"
import { CommandFailed, databaseProblem, reportingConfigErrors, reportingFailures } from "./Reporting.js"

/** The operator at the database: decisions are recorded as moderator `cli`. */
const operator: SystemCaller = { via: "system", name: "cli" }

/** The moderation operations, run through the same registry as HTTP and MCP. */
const ModerationRegistry = Operations.layer(
  catalog.filter((entry) => entry.group === "moderation" || entry.group === "marketplace_moderation"),
  [ModerationOperations, MarketplaceModerationOperations]
)

/**
 * Settings first (a bad one is reported by name), then `use` on the configured database (or, run
 * for the CLI inside `birzha serve`, the host's). A database error is one line.
 */
const onDatabase = <A, E, R>(use: Effect.Effect<A, E, R>) =>
  reportingConfigErrors(reportingFailures(Effect.gen(function*() {
    yield* validateSettings
    return yield* use.pipe(
      Effect.provide(ModerationRegistry),
      Effect.provide(CommandDatabase),
      Effect.catchIf(
        (error): error is E & { readonly _tag: "SqlError"; readonly message: string; readonly cause: unknown } =>
          typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError",
        (error) =>
          new CommandFailed({ message: databaseProblem("the database refused the command", error) })
      )
    )
  })))

const isEmail = Schema.is(Email)

const emailArg = Args.text({ name: "email" }).pipe(Args.withDescription("The address, as its owner signs in with it (compared lower-cased)."))

const validEmail = (email: string) =>
  isEmail(email.trim()) ? Effect.succeed(email.trim().toLowerCase()) : new CommandFailed({ message: `not an email address: ${JSON.stringify(email)}` })

const grantCommand = Command.make("grant", { email: emailArg }, ({ email }) =>
  onDatabase(Effect.gen(function*() {
    const address = yield* validEmail(email)
    yield* grantModerator(address)
    yield* Console.log(`${address} is a moderator (granted with the CLI: it stays until birzha moderation revoke).`)
  }))).pipe(
    Command.withDescription(
      "Grant the moderator role to an address, even before its first sign-in. A CLI grant survives the address leaving BIRZHA_MODERATORS."
    )
  )

const revokeCommand = Command.make("revoke", { email: emailArg }, ({ email }) =>
  onDatabase(Effect.gen(function*() {
    const address = yield* validEmail(email)
    const revoked = yield* revokeModerator(address)
    if (!revoked) return yield* new CommandFailed({ message: `${address} is not a moderator` })
    yield* Console.log(`${address} is no longer a moderator.`)
    const configured = yield* ModeratorsConfig
    if (configured.includes(address)) {
      yield* Console.error(`Note: ${address} is listed in BIRZHA_MODERATORS, so the next start grants the role again; remove it there too.`)
    }
  }))).pipe(Command.withDescription("Take the moderator role from an address, whichever way it was granted."))

const listCommand = Command.make("list", {}, () =>
  onDatabase(Effect.gen(function*() {
    const moderators = yield* listModerators
    if (moderators.length === 0) return yield* Console.log("There are no moderators.")
    for (const moderator of moderators) {
      yield* Console.log(`${moderator.email}  ${moderator.source}  granted ${moderator.granted_at.toISOString()}`)
    }
  }))).pipe(
    Command.withDescription("Print the moderators: address, how the role was granted (cli or config, from BIRZHA_MODERATORS) and when.")
  )

const titleOf = (item: ModerationItem): string => {
  const title = item.draft["title"]
  return typeof title === "string" && title.trim().length > 0 ? title : "(untitled)"
}

/** Every page of the queue: an operator wants the whole of it, and pending publications are few. */
const wholeQueue = (kind: PublicationKind | undefined) =>
  Effect.gen(function*() {
    const items: Array<ModerationItem> = []
    let cursor: string | undefined
    do {
      const page = yield* runOperation("moderation.queue", operator, {
        urlParams: { limit: "100", ...(kind === undefined ? {} : { kind }), ...(cursor === undefined ? {} : { cursor }) }
      })
      items.push(...page.items)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return items
  })

const queueCommand = Command.make(
  "queue",
  {
    kind: Options.choice("kind", PublicationKind.literals).pipe(
      Options.withDescription("Only publications of this kind."),
      Options.optional
    )
  },
  ({ kind }) =>
    onDatabase(Effect.gen(function*() {
      // An invalid cursor cannot happen here (we pass back the one we were given).
      const items = yield* wholeQueue(Option.getOrUndefined(kind)).pipe(
        Effect.catchIf((error) => error._tag !== "SqlError", (error) => new CommandFailed({ message: error.message }))
      )
      if (items.length === 0) return yield* Console.log("No publications are waiting for moderation.")
      yield* Console.log("UUID  KIND  REVISION  SUBMITTED  OWNER  TITLE")
      for (const item of items) {
        yield* Console.log(
          `${item.uuid}  ${item.kind}  ${item.revision}  ${item.submittedAt.toISOString()}  ${item.ownerName} (${item.ownerId})  ${titleOf(item)}`
        )
      }
    }))
).pipe(
  Command.withDescription(
    "Print the publications waiting for moderation, oldest submission first: uuid, kind, revision, submitted at, owner and title."
  )
)

const decisionOf = { approve: "approved", return: "returned", reject: "rejected" } as const

/**
 * Reads the current revision, then decides at it as moderator `cli` (no account), with a fresh
 * request id: the same path, checks and `publication.moderated` event as the HTTP operation.
 */
const decide = (decision: "approve" | "return" | "reject", publicationUuid: string, reason: string | undefined) =>
  onDatabase(Effect.gen(function*() {
    if (!Schema.is(Schema.UUID)(publicationUuid)) {
      return yield* new CommandFailed({ message: `not a publication uuid: ${JSON.stringify(publicationUuid)}` })
    }
    // The HTTP operation's input rules (reason required to return or reject, at most 2000
    // characters), checked before the database is touched; the revision is set once read.
    const input = Schema.decodeUnknownEither(ModerationDecisionInput)({
      requestUuid: randomUUID(),
      publicationUuid,
      expectedRevision: 1,
      decision,
      ...(reason === undefined ? {} : { reason })
    })
    if (Either.isLeft(input)) {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(input.left)[0]
      // The schema's message quotes the whole value; a long reason is better summed up.
      const tooLong = reason !== undefined && reason.length > 2000
      return yield* new CommandFailed({
        message: tooLong ? `--reason has at most 2000 characters, this one has ${reason.length}` : `--reason: ${issue?.message ?? "invalid"}`
      })
    }
    const target = yield* moderationTarget(publicationUuid)
    if (Option.isNone(target)) return yield* new CommandFailed({ message: `no publication ${publicationUuid}` })
    if (target.value.status !== "pending") {
      return yield* new CommandFailed({
        message: `publication ${publicationUuid} is ${target.value.status}, not pending: only pending publications are moderated`
      })
    }
    const result = yield* runOperation("moderation.decide", operator, {
      payload: { ...Schema.encodeSync(ModerationDecisionInput)(input.right), expectedRevision: target.value.revision }
    }).pipe(
      Effect.catchTags({
        NotFound: () => new CommandFailed({ message: `no publication ${publicationUuid}` }),
        InvalidState: (error) => new CommandFailed({ message: `publication ${publicationUuid}: ${error.message}` }),
        RevisionConflict: () =>
          new CommandFailed({ message: `publication ${publicationUuid} changed while deciding (its owner edited it); look at the queue again` }),
        RequestConflict: (error) => new CommandFailed({ message: error.message })
      }),
      // Anything else the operation may answer (its input rules, the service unavailable) is one line too.
      Effect.catchIf(
        (error) => !(error instanceof CommandFailed) && error._tag !== "SqlError",
        (error) => new CommandFailed({ message: error.message })
      )
    )
    yield* Console.log(
      `Publication ${publicationUuid} is ${decisionOf[decision]} (revision ${result.revision})${
        result.reason === "" ? "" : `, reason: ${result.reason}`
      }.`
    )
  }))

const publicationArg = Args.text({ name: "publicationUuid" }).pipe(Args.withDescription("The uuid of a pending publication (see birzha moderation queue)."))

const approveCommand = Command.make(
  "approve",
  {
    publicationUuid: publicationArg,
    reason: Options.text("reason").pipe(Options.withDescription("An optional note kept with the decision (at most 2000 characters)."), Options.optional)
  },
  ({ publicationUuid, reason }) => decide("approve", publicationUuid, Option.getOrUndefined(reason))
).pipe(Command.withDescription("Approve a pending publication: its draft becomes the public data."))

const reasonRequired = Options.text("reason").pipe(
  Options.withDescription("Required: what the owner should know or change (1 to 2000 characters).")
)

const returnCommand = Command.make(
  "return",
  { publicationUuid: publicationArg, reason: reasonRequired },
  ({ publicationUuid, reason }) => decide("return", publicationUuid, reason)
).pipe(
  Command.withDescription("Return a pending publication to its owner for changes, with a reason; the previously approved data stays public.")
)

const rejectCommand = Command.make(
  "reject",
  { publicationUuid: publicationArg, reason: reasonRequired },
  ({ publicationUuid, reason }) => decide("reject", publicationUuid, reason)
).pipe(
  Command.withDescription("Reject a pending publication for good, with a reason; it can no longer be edited or submitted.")
)

// ---- complaints and reviews: the same operations as /api/v1/moderation/... ----

/** Every page of the complaints queue. */
const wholeComplaintQueue = (status: ComplaintStatus | undefined, subjectKind: ComplaintSubjectKind | undefined) =>
  Effect.gen(function*() {
    const items: Array<ComplaintQueueItem> = []
    let cursor: string | undefined
    do {
      const page = yield* runOperation("moderation.complaints.queue", operator, {
        urlParams: {
          limit: "100",
          ...(status === undefined ? {} : { status }),
          ...(subjectKind === undefined ? {} : { subjectKind }),
          ...(cursor === undefined ? {} : { cursor })
        }
      })
      items.push(...page.items)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return items
  })

/** Any failure of an operation other than the database's, as one line. */
const oneLine = <A, R>(effect: Effect.Effect<A, { readonly _tag: string; readonly message: string }, R>) =>
  effect.pipe(
    Effect.catchIf(
      (error) => !(error instanceof CommandFailed) && error._tag !== "SqlError",
      (error) => new CommandFailed({ message: error.message })
    )
  )

const complaintsCommand = Command.make(
  "complaints",
  {
    status: Options.choice("status", ComplaintStatus.literals).pipe(Options.withDescription("Complaints in this status (default open)."), Options.optional),
    subjectKind: Options.choice("subject", ComplaintSubjectKind.literals).pipe(Options.withDescription("Only complaints about this kind of subject."), Options.optional),
    json: Options.boolean("json").pipe(Options.withDescription("Print the queue items as JSON, one per line, with snapshots."))
  },
  ({ json, status, subjectKind }) =>
    onDatabase(Effect.gen(function*() {
      const items = yield* oneLine(wholeComplaintQueue(Option.getOrUndefined(status), Option.getOrUndefined(subjectKind)))
      if (json) {
        for (const item of items) yield* Console.log(JSON.stringify(item))
        return
      }
      if (items.length === 0) return yield* Console.log("No complaints are waiting for a decision.")
      yield* Console.log("UUID  REVISION  FILED  SUBJECT  OTHERS  BODY")
      for (const item of items) {
        yield* Console.log(
          `${item.uuid}  ${item.revision}  ${item.createdAt.toISOString()}  ${item.subjectKind} ${item.subjectUuid}  ${item.otherOpenComplaints.length}  ${
            item.body.replace(/\s+/g, " ").slice(0, 80)
          }`
        )
        for (const review of item.reviews ?? []) {
          yield* Console.log(`    review ${review.uuid}  ${review.status}  rating ${review.rating}  ${review.body.replace(/\s+/g, " ").slice(0, 60)}`)
        }
      }
    }))
).pipe(
  Command.withDescription(
    "Print the complaints queue, oldest first: uuid, revision, filed at, subject, other open complaints on it and the text (a relation's reviews below it). Reads of private subjects are audited."
  )
)

const reasonOption = Options.text("reason").pipe(Options.withDescription("Required: the reason the author (or the review's parties) read (1 to 2000 characters)."))

/** The first schema issue of a decision's input, as one line naming the option. */
const inputProblem = (error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  return new CommandFailed({ message: `--${String(issue?.path[0] ?? "input")}: ${issue?.message ?? "invalid"}` })
}

const decideComplaint = (decision: "uphold" | "dismiss", complaintUuid: string, reason: string, action: string | undefined, reviewUuid: string | undefined) =>
  onDatabase(Effect.gen(function*() {
    if (!Schema.is(Schema.UUID)(complaintUuid)) return yield* new CommandFailed({ message: `not a complaint uuid: ${JSON.stringify(complaintUuid)}` })
    const input = Schema.decodeUnknownEither(ComplaintDecisionInput)({
      requestUuid: randomUUID(),
      complaintUuid,
      expectedRevision: 1,
      decision,
      reason,
      ...(action === undefined ? {} : { action }),
      ...(reviewUuid === undefined ? {} : { reviewUuid })
    })
    if (Either.isLeft(input)) return yield* inputProblem(input.left)
    const standing = yield* complaintStanding(complaintUuid)
    if (Option.isNone(standing)) return yield* new CommandFailed({ message: `no complaint ${complaintUuid}` })
    const result = yield* oneLine(runOperation("moderation.complaints.decide", operator, {
      payload: { ...Schema.encodeSync(ComplaintDecisionInput)(input.right), expectedRevision: standing.value.revision }
    }))
    const also = result.alsoDecided.length === 0 ? "" : `; also decided: ${result.alsoDecided.join(", ")}`
    yield* Console.log(
      `Complaint ${complaintUuid} is ${result.complaint.status} (action ${result.complaint.decision?.action ?? "none"}, revision ${result.complaint.revision})${also}.`
    )
  }))

const complaintArg = Args.text({ name: "complaintUuid" }).pipe(Args.withDescription("The uuid of an open complaint (see birzha moderation complaints)."))

const upholdCommand = Command.make(
  "uphold",
  {
    complaintUuid: complaintArg,
    reason: reasonOption,
    action: Options.choice("action", ComplaintAction.literals).pipe(
      Options.withDescription("What happens to the subject: unpublish (publication), hide_message, hide_profile, remove_review (relation, with --review) or none (default)."),
      Options.optional
    ),
    review: Options.text("review").pipe(Options.withDescription("With remove_review: the uuid of the relation's review to remove."), Options.optional)
  },
  ({ action, complaintUuid, reason, review }) => decideComplaint("uphold", complaintUuid, reason, Option.getOrUndefined(action), Option.getOrUndefined(review))
).pipe(Command.withDescription("Uphold an open complaint, with an action on its subject; every open complaint on the subject is decided with it."))

const dismissCommand = Command.make(
  "dismiss",
  { complaintUuid: complaintArg, reason: reasonOption },
  ({ complaintUuid, reason }) => decideComplaint("dismiss", complaintUuid, reason, undefined, undefined)
).pipe(Command.withDescription("Dismiss an open complaint, with a reason its author reads."))

const complaintCommand = Command.make("complaint").pipe(
  Command.withDescription("Decide on a complaint (recorded with moderator cli; complaint.moderated goes to its author)."),
  Command.withSubcommands([upholdCommand, dismissCommand])
)

const decideReview = (decision: "remove" | "restore", reviewUuid: string, reason: string) =>
  onDatabase(Effect.gen(function*() {
    if (!Schema.is(Schema.UUID)(reviewUuid)) return yield* new CommandFailed({ message: `not a review uuid: ${JSON.stringify(reviewUuid)}` })
    const input = Schema.decodeUnknownEither(ReviewDecisionInput)({ requestUuid: randomUUID(), reviewUuid, expectedRevision: 1, decision, reason })
    if (Either.isLeft(input)) return yield* inputProblem(input.left)
    const standing = yield* reviewStanding(reviewUuid)
    if (Option.isNone(standing)) return yield* new CommandFailed({ message: `no review ${reviewUuid}` })
    const result = yield* oneLine(runOperation("moderation.reviews.decide", operator, {
      payload: { ...Schema.encodeSync(ReviewDecisionInput)(input.right), expectedRevision: standing.value.revision }
    }))
    yield* Console.log(`Review ${reviewUuid} is ${result.status} (revision ${result.revision}).`)
  }))

const reviewArg = Args.text({ name: "reviewUuid" }).pipe(Args.withDescription("The uuid of a review."))

const reviewCommand = Command.make("review").pipe(
  Command.withDescription("Remove a published review or restore a removed one (review.moderated to its author and subject; statistics recomputed)."),
  Command.withSubcommands([
    Command.make("remove", { reviewUuid: reviewArg, reason: reasonOption }, ({ reason, reviewUuid }) => decideReview("remove", reviewUuid, reason)).pipe(
      Command.withDescription("Remove a published review from public view, with a reason.")
    ),
    Command.make("restore", { reviewUuid: reviewArg, reason: reasonOption }, ({ reason, reviewUuid }) => decideReview("restore", reviewUuid, reason)).pipe(
      Command.withDescription("Publish a removed review again, with a reason.")
    )
  ])
)

export const moderationCommand = Command.make("moderation").pipe(
  Command.withDescription(
    "Moderation: the moderator role by address, the queue of pending publications and decisions on them, complaints and reviews (recorded with moderator cli)."
  ),
  Command.withSubcommands([
    grantCommand,
    revokeCommand,
    listCommand,
    queueCommand,
    approveCommand,
    returnCommand,
    rejectCommand,
    complaintsCommand,
    complaintCommand,
    reviewCommand
  ])
)
