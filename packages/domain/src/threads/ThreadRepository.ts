import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { ProfileType } from "../profiles/Profile.js"
import type { PooledRead } from "../store/PooledReads.js"
import { rowDecoder, rowsDecoder, selectList, uuidArray } from "../store/Rows.js"

const Refs = Schema.Array(Schema.Struct({ kind: Schema.Literal("file", "publication", "relation"), uuid: Schema.String }))

/** `threads` with the reader's participant row: this module is the one reader and writer of threads, participants and messages. */
export const ThreadRow = Schema.Struct({
  uuid: Schema.String,
  relation_uuid: Schema.NullOr(Schema.String),
  publication_uuid: Schema.NullOr(Schema.String),
  low_profile_uuid: Schema.String,
  high_profile_uuid: Schema.String,
  created_by_profile_uuid: Schema.String,
  last_message_at: Schema.NullOr(Schema.DateFromSelf),
  revision: Schema.Number,
  created_at: Schema.DateFromSelf
})
export type ThreadRow = typeof ThreadRow.Type

export const MessageRow = Schema.Struct({
  uuid: Schema.String,
  seq: Schema.String,
  thread_uuid: Schema.String,
  author_profile_uuid: Schema.String,
  body: Schema.String,
  refs: Refs,
  hidden: Schema.Boolean,
  created_at: Schema.DateFromSelf
})
export type MessageRow = typeof MessageRow.Type

/** A thread as a participant sees it in a list: its position, unread count, participants and last message. */
export const ThreadViewRow = Schema.Struct({
  ...ThreadRow.fields,
  position: Schema.String,
  unread_count: Schema.Number,
  low_name: Schema.String,
  low_type: ProfileType,
  low_avatar_url: Schema.NullOr(Schema.String),
  high_name: Schema.String,
  high_type: ProfileType,
  high_avatar_url: Schema.NullOr(Schema.String),
  last_uuid: Schema.NullOr(Schema.String),
  last_seq: Schema.NullOr(Schema.String),
  last_author_profile_uuid: Schema.NullOr(Schema.String),
  last_body: Schema.NullOr(Schema.String),
  last_refs: Schema.NullOr(Refs),
  last_hidden: Schema.NullOr(Schema.Boolean),
  last_created_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ThreadViewRow = typeof ThreadViewRow.Type

const threadColumns = selectList(ThreadRow, "t")
const messageColumns = selectList(MessageRow, "m", { seq: "m.seq::text" })
const decodeThread = rowDecoder(ThreadRow)
const decodeMessages = rowsDecoder(MessageRow)
const decodeViews = rowsDecoder(ThreadViewRow)
const decodeUuids = rowsDecoder(Schema.Struct({ uuid: Schema.String }))

/** The view's columns over `t` and the reader's participant row `tp`. */
const viewSelect = `SELECT ${threadColumns}, tp.last_message_at::text AS position,
    (SELECT count(*) FROM messages u WHERE u.thread_uuid = t.uuid AND u.seq > tp.last_read_seq
      AND u.author_profile_uuid <> tp.profile_uuid)::int AS unread_count,
    lo.name AS low_name, lo.type AS low_type, lo.avatar_url AS low_avatar_url,
    hi.name AS high_name, hi.type AS high_type, hi.avatar_url AS high_avatar_url,
    last.uuid AS last_uuid, last.seq::text AS last_seq, last.author_profile_uuid AS last_author_profile_uuid, last.body AS last_body,
    last.refs AS last_refs, last.hidden AS last_hidden, last.created_at AS last_created_at
  FROM thread_participants tp
  JOIN threads t ON t.uuid = tp.thread_uuid
  JOIN profiles lo ON lo.uuid = t.low_profile_uuid
  JOIN profiles hi ON hi.uuid = t.high_profile_uuid
  LEFT JOIN LATERAL (
    SELECT m.uuid, m.seq, m.author_profile_uuid, m.body, m.refs, m.hidden, m.created_at FROM messages m
    WHERE m.thread_uuid = t.uuid ORDER BY m.seq DESC LIMIT 1
  ) last ON true`

/** One thread in `me`'s view, if `me` takes part in it. */
export const threadViewRow = (me: string, threadUuid: string): Effect.Effect<Option.Option<ThreadViewRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`${sql.literal(viewSelect)} WHERE tp.profile_uuid = ${me} AND tp.thread_uuid = ${threadUuid}`.pipe(
      Effect.flatMap(decodeViews),
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

/** A page of `me`'s threads by last message, newest first. */
export const threadPageRows = (me: string, filter: {
  readonly threadUuid?: string | undefined
  readonly publicationUuid?: string | undefined
  readonly after?: { readonly key: string; readonly uuid: string } | undefined
  readonly limit: number
}): Effect.Effect<ReadonlyArray<ThreadViewRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`${sql.literal(viewSelect)} WHERE ${
      sql.and([
        sql`tp.profile_uuid = ${me}`,
        ...(filter.threadUuid === undefined ? [] : [sql`t.uuid = ${filter.threadUuid}`]),
        ...(filter.publicationUuid === undefined ? [] : [sql`t.publication_uuid = ${filter.publicationUuid}`]),
        ...(filter.after === undefined
          ? []
          : [sql`(tp.last_message_at, tp.thread_uuid) < (${filter.after.key}::timestamptz, ${filter.after.uuid}::uuid)`])
      ])
    } ORDER BY tp.last_message_at DESC, tp.thread_uuid DESC LIMIT ${filter.limit}`.pipe(Effect.flatMap(decodeViews)))

/** The thread, row-locked (a message bumps its revision), if `me` takes part in it. */
export const lockThreadOf = (me: string, threadUuid: string): Effect.Effect<Option.Option<ThreadRow>, SqlError, SqlClient.SqlClient> =>
  Effect.map(lockThreadsOf([{ me, threadUuid }]), ([thread]) => Option.fromNullable(thread))

/**
 * `lockThreadOf` for a batch in one statement: per entry the thread, row-locked, or `undefined`
 * when there is none `me` takes part in. Rows are locked in uuid order (two batches never wait on
 * each other crosswise).
 */
export const lockThreadsOf = (
  wanted: ReadonlyArray<{ readonly me: string; readonly threadUuid: string }>
): Effect.Effect<ReadonlyArray<ThreadRow | undefined>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      // Only threads one of the callers takes part in are locked (each entry is checked below).
      const mes = [...new Set(wanted.map((w) => w.me))]
      const rows = yield* sql`SELECT ${sql.literal(threadColumns)} FROM threads t
        WHERE t.uuid = ANY(${uuidArray(sql, wanted.map((w) => w.threadUuid))})
          AND (t.low_profile_uuid = ANY(${uuidArray(sql, mes)}) OR t.high_profile_uuid = ANY(${uuidArray(sql, mes)}))
        ORDER BY t.uuid FOR UPDATE`
      const byUuid = new Map<string, ThreadRow>()
      for (const row of rows) {
        const thread = yield* decodeThread(row)
        byUuid.set(thread.uuid, thread)
      }
      const found = wanted.map(({ me, threadUuid }) => {
        const thread = byUuid.get(threadUuid.toLowerCase())
        return thread !== undefined && (thread.low_profile_uuid === me || thread.high_profile_uuid === me) ? thread : undefined
      })
      return found
    }))

/** Whether `me` takes part in the thread (no lock). */
export const isParticipant = (me: string, threadUuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM thread_participants WHERE thread_uuid = ${threadUuid} AND profile_uuid = ${me}`.pipe(
      Effect.map((rows) => rows.length > 0)
    ))

const pair = (a: string, b: string) => (a < b ? [a, b] as const : [b, a] as const)

/** The direct thread of a pair of profiles about a publication (or none), row-locked. */
export const lockDirectThread = (
  a: string,
  b: string,
  publicationUuid: string | null
): Effect.Effect<Option.Option<ThreadRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const [low, high] = pair(a, b)
    return sql`SELECT ${sql.literal(threadColumns)} FROM threads t
      WHERE t.relation_uuid IS NULL AND t.low_profile_uuid = ${low} AND t.high_profile_uuid = ${high}
        AND coalesce(t.publication_uuid, '00000000-0000-0000-0000-000000000000') = ${publicationUuid ?? "00000000-0000-0000-0000-000000000000"}::uuid
      FOR UPDATE`.pipe(Effect.flatMap((rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(decodeThread(rows[0]))))
  })

/**
 * A new thread of two profiles with both participant rows; returns its uuid. A relation's thread
 * is made once: a concurrent second attempt waits for the first and finds its thread.
 */
export const insertThread = (thread: {
  readonly a: string
  readonly b: string
  readonly createdBy: string
  readonly relationUuid: string | null
  readonly publicationUuid: string | null
}): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const [low, high] = pair(thread.a, thread.b)
      const [row] = yield* Effect.flatMap(
        sql`INSERT INTO threads
        (relation_uuid, publication_uuid, low_profile_uuid, high_profile_uuid, created_by_profile_uuid)
        VALUES (${thread.relationUuid}, ${thread.publicationUuid}, ${low}, ${high}, ${thread.createdBy})
        ON CONFLICT (relation_uuid) DO NOTHING RETURNING uuid`,
        decodeUuids
      )
      if (row === undefined) {
        const [existing] = yield* Effect.flatMap(sql`SELECT uuid FROM threads WHERE relation_uuid = ${thread.relationUuid}`, decodeUuids)
        return existing!.uuid
      }
      yield* sql`INSERT INTO thread_participants (thread_uuid, profile_uuid) VALUES (${row.uuid}, ${low}), (${row.uuid}, ${high})`
      return row.uuid
    }))

/**
 * A new message in a locked thread: the thread's revision and last-message time move, both
 * participants' list position with it, and the author has read everything up to it.
 */
export const insertMessage = (message: NewMessage): Effect.Effect<MessageRow, SqlError, SqlClient.SqlClient> =>
  Effect.map(insertMessages([message]), ([row]) => row!)

export interface NewMessage {
  readonly threadUuid: string
  readonly authorProfileUuid: string
  readonly body: string
  readonly references: ReadonlyArray<{ readonly kind: string; readonly uuid: string }>
}

/**
 * `insertMessage` for a batch in one statement (one round trip on the send path): the messages in
 * the given order (their `seq` follows it), then each thread once (its revision moves by its
 * number of new messages) and its participants (each author has read up to their last one).
 * Answers the rows in the given order.
 */
export const insertMessages = (messages: ReadonlyArray<NewMessage>): Effect.Effect<ReadonlyArray<MessageRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const input = messages.map((message, ord) => ({
        ord,
        uuid: randomUUID(),
        thread_uuid: message.threadUuid,
        author_profile_uuid: message.authorProfileUuid,
        body: message.body,
        refs: message.references
      }))
      const threads = uuidArray(sql, [...new Set(messages.map((message) => message.threadUuid))])
      const rows = yield* sql`WITH m AS (
          INSERT INTO messages (uuid, thread_uuid, author_profile_uuid, body, refs, created_at)
          -- Each message its own moment, in the given order (a batch's transaction started before them all).
          SELECT i.uuid, i.thread_uuid, i.author_profile_uuid, i.body, i.refs, clock_timestamp()
          FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
            AS i(ord int, uuid uuid, thread_uuid uuid, author_profile_uuid uuid, body text, refs jsonb)
          ORDER BY i.ord
          RETURNING *
        ), latest AS (
          SELECT thread_uuid, count(*)::int AS n, max(created_at) AS at FROM m GROUP BY thread_uuid
        ), thread AS (
          UPDATE threads t SET revision = t.revision + latest.n, last_message_at = latest.at FROM latest
          WHERE t.uuid = ANY(${threads}) AND t.uuid = latest.thread_uuid
        ), participants AS (
          UPDATE thread_participants p SET last_message_at = latest.at,
            last_read_seq = coalesce((SELECT max(m.seq) FROM m WHERE m.thread_uuid = p.thread_uuid AND m.author_profile_uuid = p.profile_uuid), p.last_read_seq)
          FROM latest WHERE p.thread_uuid = ANY(${threads}) AND p.thread_uuid = latest.thread_uuid
        )
        SELECT ${sql.literal(selectList(MessageRow, undefined, { seq: "seq::text" }))} FROM m`
      const byUuid = new Map<string, MessageRow>()
      for (const row of yield* decodeMessages(rows)) byUuid.set(row.uuid, row)
      return input.map((message) => byUuid.get(message.uuid)!)
    }))

/** A page of a thread's messages, oldest first, after `afterSeq`. */
const participantText = "SELECT 1 FROM thread_participants WHERE thread_uuid = $1 AND profile_uuid = $2"
const messagePageText = `SELECT ${messageColumns} FROM messages m
      WHERE m.thread_uuid = $1 AND m.seq > $2::bigint ORDER BY m.seq LIMIT $3`
const markReadText = `UPDATE thread_participants SET last_read_seq = $3::bigint
      WHERE thread_uuid = $1 AND profile_uuid = $2 AND last_read_seq < $3::bigint`

/**
 * The statements of `threads.messages` through a pooled runner (`makePooledRead`): a participant's
 * page of messages is read on every poll of a conversation, outside any transaction; the read
 * marker moves in its own autocommit statement, as before.
 */
export const messageReadsWith = (run: PooledRead) => ({
  isParticipant: (me: string, threadUuid: string): Effect.Effect<boolean, SqlError> =>
    Effect.map(run(participantText, [threadUuid, me]), (rows) => rows.length > 0),
  /** A page of a thread's messages after `afterSeq`, oldest first. */
  messagePageRows: (threadUuid: string, afterSeq: string, limit: number): Effect.Effect<ReadonlyArray<MessageRow>, SqlError> =>
    Effect.flatMap(run(messagePageText, [threadUuid, afterSeq, limit]), decodeMessages),
  /** Moves `me`'s read marker forward to `seq` (never back); bookkeeping only, no revision, no event. */
  markRead: (me: string, threadUuid: string, seq: string): Effect.Effect<void, SqlError> => Effect.asVoid(run(markReadText, [threadUuid, me, seq]))
})

/** Whether two profiles share a thread. */
export const haveThread = (a: string, b: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const [low, high] = pair(a, b)
    return sql`SELECT 1 FROM threads WHERE low_profile_uuid = ${low} AND high_profile_uuid = ${high} LIMIT 1`.pipe(
      Effect.map((rows) => rows.length > 0)
    )
  })

/** The thread of a relation (or of the relation it shares its thread with), row-locked. */
export const lockThread = (threadUuid: string): Effect.Effect<Option.Option<ThreadRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT ${sql.literal(threadColumns)} FROM threads t WHERE t.uuid = ${threadUuid} FOR UPDATE`.pipe(
      Effect.flatMap((rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(decodeThread(rows[0])))
    ))

/** The relations of a set that `me` is party to and have a thread (threads.list by relationUuid). */
export const latestThreadUuid = (me: string): Effect.Effect<Option.Option<string>, SqlError, SqlClient.SqlClient> =>
  Effect.map(threadPageRows(me, { limit: 1 }), (rows) => Option.fromNullable(rows[0]?.uuid))

/** A moderator hides a message (an upheld complaint, `hide_message`): its body is no longer served. Whether it exists. */
export const hideMessageRow = (uuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE messages SET hidden = true WHERE uuid = ${uuid} RETURNING uuid`.pipe(Effect.map((rows) => rows.length > 0)))

/**
 * Whether `ownerUuid` posted a message naming the file in a thread with `viewerUuid`: what lets
 * the other party of a conversation read a file sent to it (`files/Files.ts`), as
 * `relationReferencesFile` does for relations. The pair is found by `threads_pair`.
 */
export const threadMessageReferencesFile = (
  viewerUuid: string,
  ownerUuid: string,
  fileUuid: string
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const reference = JSON.stringify([{ kind: "file", uuid: fileUuid.toLowerCase() }])
    const [low, high] = viewerUuid.toLowerCase() < ownerUuid.toLowerCase() ? [viewerUuid, ownerUuid] : [ownerUuid, viewerUuid]
    return sql`SELECT 1 FROM threads t JOIN messages x ON x.thread_uuid = t.uuid
      WHERE t.low_profile_uuid = ${low}::uuid AND t.high_profile_uuid = ${high}::uuid
        AND x.author_profile_uuid = ${ownerUuid}::uuid AND x.refs @> ${reference}::jsonb
      LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0))
  })
