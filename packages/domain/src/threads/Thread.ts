import { Schema } from "effect"
import { DateTime } from "../kernel/Common.js"
import { Counterpart, ReferenceView } from "../relations/Relation.js"

/**
 * A message: immutable. A hidden message (moderation) is served with an empty
 * body and `hidden: true`.
 */
export const MessageView = Schema.Struct({
  uuid: Schema.UUID,
  threadUuid: Schema.UUID,
  authorProfileUuid: Schema.UUID,
  body: Schema.String,
  references: Schema.Array(ReferenceView),
  createdAt: DateTime,
  hidden: Schema.Boolean
}).annotations({ identifier: "Message" })
export type MessageView = typeof MessageView.Type

/** A thread in a participant's view: both participants, what it is about, unread messages and the last one. */
export const ThreadView = Schema.Struct({
  uuid: Schema.UUID,
  participants: Schema.Array(Counterpart),
  relationUuid: Schema.optional(Schema.UUID),
  publicationUuid: Schema.optional(Schema.UUID),
  createdByProfileUuid: Schema.UUID,
  lastMessageAt: Schema.optional(DateTime),
  /** Messages of the other participant after the caller's read marker. */
  unreadCount: Schema.Int,
  lastMessage: Schema.optional(MessageView),
  revision: Schema.Int,
  createdAt: DateTime
}).annotations({ identifier: "Thread" })
export type ThreadView = typeof ThreadView.Type

export const ThreadPage = Schema.Struct({
  items: Schema.Array(ThreadView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ThreadPage" })

export const MessagePage = Schema.Struct({
  items: Schema.Array(MessageView),
  nextCursor: Schema.optional(Schema.String)
}).annotations({ identifier: "MessagePage" })

/** `threads.open`: the thread (found or made) and the message posted in it. */
export const ThreadOpened = Schema.Struct({
  thread: ThreadView,
  message: MessageView
}).annotations({ identifier: "ThreadOpened" })
export type ThreadOpened = typeof ThreadOpened.Type
