import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { publiclyVisible } from "../publications/Visibility.js"
import { JsonObject, rowsDecoder, Timestamp } from "../store/Rows.js"
import { reachableProfile } from "../threads/Threads.js"
import type { ComplaintSubjectKind } from "./Complaint.js"

/**
 * What a complaint's subject is to a reader: `visible` to the author
 * (publicly, or as a party or participant), owned by the author's own account (`own`: 403), and the
 * snapshot kept for moderators: the subject as the author saw it when filing. Read-only: each
 * subject's own module changes it.
 */
export interface SubjectFacts {
  readonly exists: boolean
  readonly visible: boolean
  readonly own: boolean
  readonly snapshot: Readonly<Record<string, unknown>>
}

const none: SubjectFacts = { exists: false, visible: false, own: false, snapshot: {} }

const ProfileSubject = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  type: Schema.String,
  about: Schema.String,
  avatar_url: Schema.NullOr(Schema.String),
  is_public: Schema.Boolean,
  account_uuid: Schema.NullOr(Schema.String)
})
const decodeProfile = rowsDecoder(ProfileSubject)

const PublicationSubject = Schema.Struct({
  uuid: Schema.String,
  kind: Schema.String,
  revision: Schema.Number,
  status: Schema.String,
  approved: Schema.NullOr(JsonObject),
  account_uuid: Schema.NullOr(Schema.String),
  owner_uuid: Schema.String,
  visible: Schema.Boolean
})
const decodePublication = rowsDecoder(PublicationSubject)

const MessageSubject = Schema.Struct({
  uuid: Schema.String,
  thread_uuid: Schema.String,
  author_profile_uuid: Schema.String,
  body: Schema.String,
  hidden: Schema.Boolean,
  created_at: Timestamp,
  low_profile_uuid: Schema.String,
  high_profile_uuid: Schema.String,
  account_uuid: Schema.NullOr(Schema.String)
})
const decodeMessage = rowsDecoder(MessageSubject)

const RelationSubject = Schema.Struct({
  uuid: Schema.String,
  kind: Schema.String,
  status: Schema.String,
  revision: Schema.Number,
  body: Schema.String,
  budget: Schema.NullOr(Schema.String),
  deadline: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  initiator_profile_uuid: Schema.String,
  recipient_profile_uuid: Schema.String,
  publication_uuid: Schema.NullOr(Schema.String),
  initiator_account: Schema.NullOr(Schema.String),
  recipient_account: Schema.NullOr(Schema.String)
})
const decodeRelation = rowsDecoder(RelationSubject)

/** The subject's facts for `me` (a profile of `accountUuid`); `me` undefined: a moderator's read, visibility not decided. */
export const subjectFacts = (
  kind: ComplaintSubjectKind,
  uuid: string,
  me: { readonly profileUuid: string; readonly accountUuid: string } | undefined
): Effect.Effect<SubjectFacts, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (kind === "profile") {
      const [row] = yield* Effect.flatMap(
        sql`SELECT uuid, name, type, about, avatar_url, is_public, account_uuid
        FROM profiles WHERE uuid = ${uuid} AND deleted_at IS NULL`,
        decodeProfile
      )
      if (row === undefined) return none
      const own = me !== undefined && row.account_uuid === me.accountUuid
      const visible = me === undefined || own || (yield* reachableProfile(me.profileUuid, uuid))
      return {
        exists: true,
        visible,
        own,
        snapshot: { kind, uuid, name: row.name, type: row.type, about: row.about, avatarUrl: row.avatar_url, isPublic: row.is_public }
      }
    }
    if (kind === "publication") {
      const [row] = yield* Effect.flatMap(
        sql`SELECT p.uuid, p.kind, p.revision, p.status, p.approved, o.account_uuid, o.uuid AS owner_uuid,
          (${sql.literal(publiclyVisible)}) AS visible
        FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid WHERE p.uuid = ${uuid} AND p.deleted_at IS NULL`,
        decodePublication
      )
      if (row === undefined) return none
      const own = me !== undefined && row.account_uuid === me.accountUuid
      const approved = row.approved
      return {
        exists: true,
        visible: me === undefined || own || row.visible,
        own,
        snapshot: {
          kind,
          uuid,
          publicationKind: row.kind,
          ownerProfileUuid: row.owner_uuid,
          revision: row.revision,
          status: row.status,
          title: approved?.["title"] ?? null,
          approved
        }
      }
    }
    if (kind === "message") {
      const [row] = yield* Effect.flatMap(
        sql`SELECT m.uuid, m.thread_uuid, m.author_profile_uuid, m.body, m.hidden, m.created_at,
          t.low_profile_uuid, t.high_profile_uuid, a.account_uuid
        FROM messages m JOIN threads t ON t.uuid = m.thread_uuid JOIN profiles a ON a.uuid = m.author_profile_uuid
        WHERE m.uuid = ${uuid}`,
        decodeMessage
      )
      if (row === undefined) return none
      const participant = me !== undefined && (row.low_profile_uuid === me.profileUuid || row.high_profile_uuid === me.profileUuid)
      const own = me !== undefined && row.account_uuid === me.accountUuid
      return {
        exists: true,
        visible: me === undefined || participant,
        own,
        snapshot: {
          kind,
          uuid,
          threadUuid: row.thread_uuid,
          authorProfileUuid: row.author_profile_uuid,
          body: row.body,
          hidden: row.hidden,
          createdAt: row.created_at
        }
      }
    }
    const [row] = yield* Effect.flatMap(
      sql`SELECT r.uuid, r.kind, r.status, r.revision, r.body, r.budget, r.deadline, r.reason,
        r.initiator_profile_uuid, r.recipient_profile_uuid, r.publication_uuid, i.account_uuid AS initiator_account, c.account_uuid AS recipient_account
      FROM relations r JOIN profiles i ON i.uuid = r.initiator_profile_uuid JOIN profiles c ON c.uuid = r.recipient_profile_uuid
      WHERE r.uuid = ${uuid}`,
      decodeRelation
    )
    if (row === undefined) return none
    const party = me !== undefined && (row.initiator_profile_uuid === me.profileUuid || row.recipient_profile_uuid === me.profileUuid)
    return {
      exists: true,
      visible: me === undefined || party,
      // A relation between two profiles of one's own account.
      own: me !== undefined && row.initiator_account === me.accountUuid && row.recipient_account === me.accountUuid,
      snapshot: {
        kind,
        uuid,
        relationKind: row.kind,
        status: row.status,
        revision: row.revision,
        body: row.body,
        budget: row.budget,
        deadline: row.deadline,
        reason: row.reason,
        initiatorProfileUuid: row.initiator_profile_uuid,
        recipientProfileUuid: row.recipient_profile_uuid,
        publicationUuid: row.publication_uuid
      }
    }
  })
