import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Either, Effect, Exit, Option, Schema } from "effect"
import { Forbidden, InvalidRequest, NotFound, type RequestConflict } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { type LimitReached, lockSubject } from "../auth/RateLimit.js"
import { publiclyVisible, publicationsJoin } from "../publications/Visibility.js"
import { countLimit, countLimits, countNewContact, limits } from "../relations/Limits.js"
import { checkReferences } from "../relations/References.js"
import type { ReferenceView } from "../relations/Relation.js"
import type { InvalidReference } from "../relations/RelationErrors.js"
import type { Reference } from "../relations/RelationFields.js"
import { haveRelation, type RelationRow, relationViewRow } from "../relations/RelationRepository.js"
import { relationKinds } from "../relations/Transitions.js"
import { makePooledRead } from "../store/PooledReads.js"
import { decodeCursor, encodeCursor } from "../store/Cursor.js"
import { rowsDecoder } from "../store/Rows.js"
import { groupCommit } from "../store/GroupCommit.js"
import { commandHash, idempotent, idempotentBatch } from "../store/Idempotency.js"
import { appendEvent, appendEvents, type NewEvent } from "../store/Outbox.js"
import { type MessageView, MessageView as MessageViewSchema, ThreadOpened, type ThreadView } from "./Thread.js"
import {
  haveThread,
  insertMessage,
  insertMessages,
  insertThread,
  latestThreadUuid,
  lockDirectThread,
  lockThread,
  lockThreadOf,
  lockThreadsOf,
  type MessageRow,
  messageReadsWith,
  type ThreadRow,
  threadPageRows,
  threadViewRow,
  type ThreadViewRow
} from "./ThreadRepository.js"

const noThread = () => new NotFound({ message: "No such thread" })

export const messageView = (row: MessageRow): MessageView => ({
  uuid: row.uuid,
  threadUuid: row.thread_uuid,
  authorProfileUuid: row.author_profile_uuid,
  body: row.hidden ? "" : row.body,
  references: row.hidden ? [] : row.refs,
  createdAt: row.created_at,
  hidden: row.hidden
})

const threadView = (row: ThreadViewRow): ThreadView => {
  const participant = (uuid: string, name: string, type: ThreadViewRow["low_type"], avatar: string | null) => ({
    profileUuid: uuid,
    name,
    type,
    ...(avatar === null ? {} : { avatarUrl: avatar })
  })
  return {
    uuid: row.uuid,
    participants: [
      participant(row.low_profile_uuid, row.low_name, row.low_type, row.low_avatar_url),
      participant(row.high_profile_uuid, row.high_name, row.high_type, row.high_avatar_url)
    ],
    ...(row.relation_uuid === null ? {} : { relationUuid: row.relation_uuid }),
    ...(row.publication_uuid === null ? {} : { publicationUuid: row.publication_uuid }),
    createdByProfileUuid: row.created_by_profile_uuid,
    ...(row.last_message_at === null ? {} : { lastMessageAt: row.last_message_at }),
    unreadCount: row.unread_count,
    ...(row.last_uuid === null ? {} : {
      lastMessage: messageView({
        uuid: row.last_uuid,
        seq: row.last_seq ?? "0",
        thread_uuid: row.uuid,
        author_profile_uuid: row.last_author_profile_uuid ?? "",
        body: row.last_body ?? "",
        refs: row.last_refs ?? [],
        hidden: row.last_hidden ?? false,
        created_at: row.last_created_at ?? row.created_at
      })
    }),
    revision: row.revision,
    createdAt: row.created_at
  }
}

const viewOf = (me: string, threadUuid: string) =>
  Effect.flatMap(threadViewRow(me, threadUuid), Option.match({
    onNone: () => Effect.fail(noThread()),
    onSome: (row) => Effect.succeed(threadView(row))
  }))

const other = (thread: ThreadRow, me: string) => (thread.low_profile_uuid === me ? thread.high_profile_uuid : thread.low_profile_uuid)

/**
 * Posts a message in a thread the caller locked and takes part in, with `message.received`
 * addressed to the other participant.
 */
export const postMessage = (
  thread: ThreadRow,
  authorProfileUuid: string,
  body: string,
  references: ReadonlyArray<{ readonly kind: "file" | "publication" | "relation"; readonly uuid: string }>
): Effect.Effect<MessageRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const message = yield* insertMessage({ threadUuid: thread.uuid, authorProfileUuid, body, references })
    yield* appendEvent(messageReceived(thread, message))
    return message
  })

const messageReceived = (thread: ThreadRow, message: MessageRow): NewEvent => ({
  type: "message.received",
  aggregate: { kind: "message", uuid: message.uuid, revision: 1 },
  data: { objectUuid: message.uuid, status: "sent", threadUuid: thread.uuid },
  context: { profileUuid: message.author_profile_uuid, audience: [other(thread, message.author_profile_uuid)], threadUuid: thread.uuid }
})

/**
 * The thread of a relation, made on first use: its own (an offer made in a thread, a deal that
 * inherited its origin's) or the one of its root (a deal shares its origin's), locked.
 */
export const relationThread = (relation: RelationRow, createdBy: string): Effect.Effect<ThreadRow, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const threadUuid = relation.thread_uuid ?? (yield* insertThread({
      a: relation.initiator_profile_uuid,
      b: relation.recipient_profile_uuid,
      createdBy,
      relationUuid: relation.origin_relation_uuid ?? relation.uuid,
      publicationUuid: relation.publication_uuid
    }))
    return yield* Effect.flatMap(lockThread(threadUuid), Option.match({
      onNone: () => Effect.dieMessage(`the thread ${threadUuid} of relation ${relation.uuid} is missing`),
      onSome: Effect.succeed
    }))
  })

export interface OpenInput {
  readonly requestUuid: string
  readonly body: string
  readonly relationUuid?: string | undefined
  readonly publicationUuid?: string | undefined
  readonly recipientProfileUuid?: string | undefined
  readonly references?: ReadonlyArray<Reference> | undefined
}

/** A profile the caller may write to directly: public, or one it already has a relation or thread with. */
const decodePublic = rowsDecoder(Schema.Struct({ is_public: Schema.Boolean }))
const decodeOwner = rowsDecoder(Schema.Struct({ owner_profile_uuid: Schema.String }))

export const reachableProfile = (me: string, profileUuid: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT p.is_public FROM profiles p
      JOIN accounts a ON a.uuid = p.account_uuid
      WHERE p.uuid = ${profileUuid} AND p.deleted_at IS NULL AND a.deleted_at IS NULL`,
      decodePublic
    )
    if (row === undefined) return false
    if (row.is_public) return true
    return (yield* haveRelation(me, profileUuid)) || (yield* haveThread(me, profileUuid))
  })

/**
 * `threads.open`: finds or makes the thread (of a relation the caller is party to; about a
 * publicly visible publication, with its owner; or with a reachable profile) and posts the first
 * message. Once per `requestUuid`. New threads with profiles never dealt with count against the
 * daily new-contacts limit; every message against the hourly messages limit.
 */
export const openThread = (
  actor: Actor,
  input: OpenInput
): Effect.Effect<ThreadOpened, NotFound | Forbidden | InvalidRequest | InvalidReference | RequestConflict | LimitReached | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { scope: actor.profileUuid, operationId: "threads.open", requestUuid: input.requestUuid, request: input, result: ThreadOpened },
    Effect.gen(function*() {
      const me = actor.profileUuid
      const given = [input.relationUuid, input.publicationUuid, input.recipientProfileUuid].filter((v) => v !== undefined)
      if (given.length !== 1) {
        return yield* new InvalidRequest({ message: "threads.open needs exactly one of relationUuid, publicationUuid, recipientProfileUuid" })
      }
      const references = yield* checkReferences(me, input.references)
      const sql = yield* SqlClient.SqlClient
      let thread: ThreadRow
      if (input.relationUuid !== undefined) {
        const relation = Option.getOrUndefined(yield* relationViewRow(me, relationKinds, input.relationUuid))
        if (relation === undefined) return yield* new NotFound({ message: "No such relation" })
        thread = yield* relationThread(relation, me)
      } else {
        let counterpart: string
        let publicationUuid: string | null = null
        if (input.publicationUuid !== undefined) {
          const [publication] = yield* Effect.flatMap(
            sql`SELECT p.owner_profile_uuid FROM ${sql.literal(publicationsJoin)}
            WHERE p.uuid = ${input.publicationUuid} AND ${sql.literal(publiclyVisible)}`,
            decodeOwner
          )
          if (publication === undefined) return yield* new NotFound({ message: "No such publication" })
          counterpart = publication.owner_profile_uuid
          publicationUuid = input.publicationUuid
          if (counterpart === me) return yield* new Forbidden({ message: "This is your own publication" })
        } else {
          counterpart = input.recipientProfileUuid!
          if (counterpart === me) return yield* new Forbidden({ message: "A thread needs another profile" })
          if (!(yield* reachableProfile(me, counterpart))) return yield* new NotFound({ message: "No such profile" })
        }
        // One direct thread per pair and publication: concurrent opens queue here.
        const [low, high] = me < counterpart ? [me, counterpart] : [counterpart, me]
        yield* lockSubject(`thread:${low}:${high}:${publicationUuid ?? ""}`)
        const existing = Option.getOrUndefined(yield* lockDirectThread(me, counterpart, publicationUuid))
        if (existing !== undefined) {
          thread = existing
        } else {
          yield* countNewContact(me, counterpart)
          const uuid = yield* insertThread({ a: me, b: counterpart, createdBy: me, relationUuid: null, publicationUuid })
          thread = Option.getOrThrow(yield* lockThread(uuid))
        }
      }
      yield* countLimit(limits.messages, me)
      const message = yield* postMessage(thread, me, input.body, references)
      return { thread: yield* viewOf(me, thread.uuid), message: messageView(message) }
    })
  )

interface SendInput {
  readonly requestUuid: string
  readonly threadUuid: string
  readonly body: string
  readonly references?: ReadonlyArray<Reference> | undefined
}

/** A `messages.send` waiting for its group commit: the request's hash is taken in its own fiber. */
interface Send {
  readonly me: string
  readonly input: SendInput
  readonly hash: string
}

type SendError = NotFound | InvalidReference | RequestConflict | LimitReached

const sendCommand = (send: Send) => ({ scope: send.me, operationId: "messages.send", requestUuid: send.input.requestUuid, hash: send.hash })

/**
 * The sends of a batch whose keys it claimed, in order: each thread locked (in uuid order), the
 * references checked, the hourly limit counted, then every message in one statement and every
 * `message.received` in another. The same checks in the same order as a send alone; a refused
 * send writes nothing (its batch rolls back and runs again without it: `Rerun`).
 */
const sendClaimed = (sends: ReadonlyArray<Send>) =>
  Effect.gen(function*() {
    const answers: Array<Exit.Exit<MessageView, SendError>> = []
    const threads = yield* lockThreadsOf(sends.map((send) => ({ me: send.me, threadUuid: send.input.threadUuid })))
    const checked: Array<{ readonly index: number; readonly thread: ThreadRow; readonly references: ReadonlyArray<ReferenceView> }> = []
    for (const [index, send] of sends.entries()) {
      const thread = threads[index]
      if (thread === undefined) {
        answers[index] = Exit.fail(noThread())
        continue
      }
      const references = yield* checkReferences(send.me, send.input.references).pipe(
        Effect.map(Either.right),
        Effect.catchTag("InvalidReference", (refused) => Effect.succeed(Either.left(refused)))
      )
      if (Either.isLeft(references)) answers[index] = Exit.fail(references.left)
      else checked.push({ index, thread, references: references.right })
    }
    const refused = yield* countLimits(limits.messages, checked.map(({ index }) => sends[index]!.me))
    const posting = checked.filter((check, j) => {
      const limit = refused[j]
      if (limit !== undefined) answers[check.index] = Exit.fail(limit)
      return limit === undefined
    })
    if (posting.length > 0) {
      const messages = yield* insertMessages(posting.map(({ index, references, thread }) => ({
        threadUuid: thread.uuid,
        authorProfileUuid: sends[index]!.me,
        body: sends[index]!.input.body,
        references
      })))
      yield* appendEvents(messages.map((message, j) => messageReceived(posting[j]!.thread, message)))
      messages.forEach((message, j) => answers[posting[j]!.index] = Exit.succeed(messageView(message)))
    }
    return answers
  })

const sendAlone = (send: Send): Effect.Effect<MessageView, SendError | SqlError, SqlClient.SqlClient> =>
  idempotent(
    { ...sendCommand(send), request: send.input, result: MessageViewSchema },
    Effect.gen(function*() {
      const thread = Option.getOrUndefined(yield* lockThreadOf(send.me, send.input.threadUuid))
      if (thread === undefined) return yield* noThread()
      const references = yield* checkReferences(send.me, send.input.references)
      yield* countLimit(limits.messages, send.me)
      return messageView(yield* postMessage(thread, send.me, send.input.body, references))
    })
  )

/**
 * Concurrent sends go through one group commit (`groupCommit`): the busiest write of the
 * marketplace pays a transaction and a round trip per statement once per batch, not per message.
 * Inside a transaction, or for an automation's command (its events carry their cause), a send
 * runs alone.
 */
const sendGrouped = groupCommit<Send, MessageView, SendError>({
  maxBatch: 64,
  maxConcurrent: 2,
  alone: sendAlone,
  batch: (sends) => idempotentBatch(sends, sendCommand, MessageViewSchema, sendClaimed)
})

/** `messages.send`: a message in a thread the caller takes part in, once per `requestUuid`. */
export const sendMessage = (actor: Actor, input: SendInput): Effect.Effect<MessageView, SendError | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const send: Send = { me: actor.profileUuid, input, hash: yield* commandHash("messages.send", input) }
    return yield* sendGrouped(send)
  })

const positionOf = (cursor: string | undefined) => Effect.map(decodeCursor(cursor), Option.getOrUndefined)

/** `threads.list`: the caller's threads by last message, with unread counts and the last message. */
export const listThreads = (
  actor: Actor,
  query: { readonly cursor?: string | undefined; readonly limit: number; readonly relationUuid?: string | undefined; readonly publicationUuid?: string | undefined }
) =>
  Effect.gen(function*() {
    const after = yield* positionOf(query.cursor)
    let threadUuid: string | undefined
    if (query.relationUuid !== undefined) {
      const relation = Option.getOrUndefined(yield* relationViewRow(actor.profileUuid, relationKinds, query.relationUuid))
      if (relation?.relation_thread_uuid == null) return { items: [] }
      threadUuid = relation.relation_thread_uuid
    }
    const rows = yield* threadPageRows(actor.profileUuid, {
      threadUuid,
      publicationUuid: query.publicationUuid,
      after,
      limit: query.limit + 1
    })
    const page = rows.slice(0, query.limit)
    const last = page[page.length - 1]
    const items = page.map(threadView)
    return rows.length > query.limit && last !== undefined
      ? { items, nextCursor: encodeCursor({ key: last.position, uuid: last.uuid }) }
      : { items }
  })

/** `threads.get`: one of the caller's threads, the most recently active without `threadUuid`. */
export const getThread = (actor: Actor, threadUuid: string | undefined) =>
  Effect.gen(function*() {
    const uuid = threadUuid ?? Option.getOrUndefined(yield* latestThreadUuid(actor.profileUuid))
    if (uuid === undefined) return yield* noThread()
    return yield* viewOf(actor.profileUuid, uuid)
  })

/**
 * `threads.messages`: a page oldest first; the caller's read marker moves to the newest message
 * returned (bookkeeping only: no revision, no event). Its statements run through a pooled runner,
 * resolved once (`implementWith`).
 */
export const makeThreadMessages = Effect.map(makePooledRead, (run) => {
  const { isParticipant, markRead, messagePageRows } = messageReadsWith(run)
  return (
    actor: Actor,
    query: { readonly threadUuid: string; readonly cursor?: string | undefined; readonly limit: number }
  ): Effect.Effect<{ readonly items: ReadonlyArray<MessageView>; readonly nextCursor?: string }, NotFound | InvalidRequest | SqlError> =>
    Effect.gen(function*() {
      if (!(yield* isParticipant(actor.profileUuid, query.threadUuid))) return yield* noThread()
      const after = yield* positionOf(query.cursor)
      if (after !== undefined && !/^[0-9]{1,18}$/.test(after.key)) {
        return yield* new InvalidRequest({ message: "cursor is not a cursor of this list; start again without it" })
      }
      const rows = yield* messagePageRows(query.threadUuid, after?.key ?? "0", query.limit + 1)
      const page = rows.slice(0, query.limit)
      const last = page[page.length - 1]
      if (last !== undefined) yield* markRead(actor.profileUuid, query.threadUuid, last.seq)
      const items = page.map(messageView)
      return rows.length > query.limit && last !== undefined
        ? { items, nextCursor: encodeCursor({ key: last.seq, uuid: last.uuid }) }
        : { items }
    })
})
