import { Schema } from "effect"
import { DateTime, maxChars, strict } from "../../kernel/Common.js"
import { command, ExpectedRevision, listing, NodeKey, page, text } from "../courses/Model.js"
import { StaffRoleSchema } from "../staff/StaffModel.js"

/**
 * Wire shapes of community threads: a thread per
 * enrollment with its messages, the staff inbox and the recipients list. Bounds follow the
 * marketplace's messages: body 1–5000 characters, at most 20 attached files;
 * a title is 1–160 characters, like a course's.
 */

export const threadTitleMax = 160
export const messageBodyMax = 5000
export const messageFilesMax = 20

export const ThreadStatus = Schema.Literal("open", "answered", "resolved")
export type ThreadStatus = typeof ThreadStatus.Type
export const ThreadVisibility = Schema.Literal("private", "group", "run")
export const AuthorRole = Schema.Literal("learner", "staff")
export type AuthorRole = typeof AuthorRole.Type

/**
 * One message. A learner reading another learner's message in a run-visible thread sees the
 * author's name only when that profile is public; staff and the author's own messages always show it.
 */
export const ThreadMessage = Schema.Struct({
  uuid: Schema.UUID,
  threadUuid: Schema.UUID,
  authorRole: AuthorRole,
  authorProfileUuid: Schema.optional(Schema.UUID),
  authorName: Schema.optional(Schema.String),
  body: Schema.String,
  fileUuids: Schema.Array(Schema.UUID),
  createdAt: DateTime
}).annotations({ identifier: "LearningThreadMessage" })
export type ThreadMessage = typeof ThreadMessage.Type

/**
 * A thread. `enrollmentUuid` shows to its learner and to staff, not to other learners of a
 * run-visible thread. `messages` (oldest first) come with `community.get` and with the command
 * that created or changed the thread; `nextMessagesCursor` pages on through `community.get`.
 */
export const Thread = Schema.Struct({
  uuid: Schema.UUID,
  revision: Schema.Int,
  courseUuid: Schema.UUID,
  runUuid: Schema.UUID,
  enrollmentUuid: Schema.optional(Schema.UUID),
  nodeKey: Schema.optional(Schema.String),
  visibility: ThreadVisibility,
  title: Schema.String,
  status: ThreadStatus,
  authorRole: AuthorRole,
  authorName: Schema.optional(Schema.String),
  /** True while the last word is a learner's and the thread is open: what the staff inbox calls unanswered. */
  awaitingStaff: Schema.Boolean,
  messageCount: Schema.Int,
  lastMessageAt: DateTime,
  resolvedAt: Schema.optional(DateTime),
  createdAt: DateTime,
  updatedAt: DateTime,
  messages: Schema.optional(Schema.Array(ThreadMessage)),
  nextMessagesCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "LearningThread" })
export type Thread = typeof Thread.Type

/** Whom the caller may address: staff (for a learner) or learners in scope (for staff). */
export const Recipient = Schema.Struct({
  profileUuid: Schema.UUID,
  name: Schema.String,
  role: Schema.Union(StaffRoleSchema, Schema.Literal("learner")),
  enrollmentUuid: Schema.optional(Schema.UUID),
  runUuid: Schema.optional(Schema.UUID)
}).annotations({ identifier: "LearningRecipient" })
export type Recipient = typeof Recipient.Type

export const ThreadPage = page(Thread, "LearningThreadPage")
export const RecipientPage = page(Recipient, "LearningRecipientPage")

// ---- inputs ----

const Title = text(1, threadTitleMax)
const Body = text(1, messageBodyMax)

export const ThreadCreate = Schema.Struct({
  ...command,
  title: Title,
  body: Body,
  nodeKey: Schema.optional(NodeKey),
  visibility: ThreadVisibility
}).annotations({ identifier: "LearningThreadCreate", ...strict })

export const StaffThreadCreate = Schema.Struct({
  ...command,
  title: Title,
  body: Body,
  nodeKey: Schema.optional(NodeKey)
}).annotations({ identifier: "LearningStaffThreadCreate", ...strict })

export const ThreadReply = Schema.Struct({
  ...command,
  body: Body,
  fileUuids: Schema.optional(Schema.Array(Schema.UUID).pipe(Schema.maxItems(messageFilesMax)))
}).annotations({ identifier: "LearningThreadReply", ...strict })

export const ThreadResolve = Schema.Struct({ ...command, expectedRevision: ExpectedRevision })
  .annotations({ identifier: "LearningThreadResolve", ...strict })

export const ThreadListQuery = Schema.Struct({ status: Schema.optional(ThreadStatus), nodeKey: Schema.optional(NodeKey), ...listing })
export const ThreadGetQuery = Schema.Struct(listing)
/** The staff inbox: `unanswered` = open with the learner's word last; `open` = not resolved; `resolved`. */
export const InboxStatus = Schema.Literal("unanswered", "open", "resolved")
export const StaffThreadQuery = Schema.Struct({
  status: Schema.optional(InboxStatus),
  runUuid: Schema.optional(Schema.UUID),
  groupUuid: Schema.optional(Schema.UUID),
  nodeKey: Schema.optional(NodeKey),
  ...listing
})
export const RecipientQuery = Schema.Struct({
  runUuid: Schema.optional(Schema.UUID),
  groupUuid: Schema.optional(Schema.UUID),
  q: Schema.optional(Schema.String.pipe(maxChars(200))),
  ...listing
})
