import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Forbidden, type InvalidRequest, InvalidState, NotFound, type RequestConflict, type RevisionConflict } from "../api/ApiError.js"
import type { Actor } from "../api/Authentication.js"
import { DateTime } from "../api/Common.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { requireRevision } from "../store/Revision.js"
import { PublicationData, PublicationKind, PublicationStatus } from "./Publication.js"

/** A decision of a moderator on a pending publication. */
export const ModerationDecision = Schema.Literal("approve", "return", "reject").annotations({ identifier: "ModerationDecision" })
export type ModerationDecision = typeof ModerationDecision.Type

/** A pending publication as a moderator reviews it: the new draft beside what is public now. */
export const ModerationItem = Schema.Struct({
  uuid: Schema.UUID,
  id: Schema.String,
  kind: PublicationKind,
  ownerUuid: Schema.UUID,
  ownerId: Schema.String,
  ownerName: Schema.String,
  revision: Schema.Int,
  status: PublicationStatus,
  draft: PublicationData,
  approved: Schema.NullOr(PublicationData),
  submittedAt: DateTime
}).annotations({ identifier: "ModerationItem" })
export type ModerationItem = typeof ModerationItem.Type

export const ModerationResult = Schema.Struct({
  uuid: Schema.UUID,
  publicationUuid: Schema.UUID,
  decision: ModerationDecision,
  reason: Schema.String,
  status: PublicationStatus,
  revision: Schema.Int,
  decidedAt: DateTime
}).annotations({ identifier: "ModerationResult" })
export type ModerationResult = typeof ModerationResult.Type

const statusOf: Record<ModerationDecision, PublicationStatus> = { approve: "approved", return: "returned", reject: "rejected" }

/** Whether an address holds the moderator role (granted by the CLI or `BIRZHA_MODERATORS`). */
export const isModerator = (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM moderators WHERE email = ${email.toLowerCase()}`).pipe(Effect.map((rows) => rows.length > 0))

/** Who decides: a signed-in moderator, or an operator at the CLI (no account). */
export interface Moderator {
  readonly accountUuid: string | null
  /** The moderator's address, or `cli` */
  readonly name: string
}

/** The caller as a moderator, or 403 when the address does not hold the role. */
export const moderatorOf = (actor: Actor): Effect.Effect<Moderator, Forbidden | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(isModerator(actor.email), (yes) =>
    yes
      ? Effect.succeed({ accountUuid: actor.accountUuid, name: actor.email })
      : Effect.fail(new Forbidden({ message: "Only moderators may do this" })))

export const grantModerator = (email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO moderators (email, source) VALUES (${email.toLowerCase()}, 'cli')
      ON CONFLICT (email) DO UPDATE SET source = 'cli'`).pipe(Effect.asVoid)

export const revokeModerator = (email: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ email: string }>`DELETE FROM moderators WHERE email = ${email.toLowerCase()} RETURNING email`).pipe(
      Effect.map((rows) => rows.length > 0)
    )

export const listModerators = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ email: string; source: string; granted_at: Date }>`SELECT email, source, granted_at FROM moderators ORDER BY email`)

/**
 * Makes the configured moderators (`BIRZHA_MODERATORS`) exactly the `config` rows: added ones are
 * granted, removed ones lose the role; grants made with the CLI are left alone.
 */
export const syncConfiguredModerators = (emails: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const wanted = [...new Set(emails.map((email) => email.trim().toLowerCase()).filter((email) => email.length > 0))]
      yield* sql`DELETE FROM moderators WHERE source = 'config' AND NOT (email = ANY(${wanted}))`
      for (const email of wanted) {
        yield* sql`INSERT INTO moderators (email, source) VALUES (${email}, 'config') ON CONFLICT (email) DO NOTHING`
      }
    })))

interface QueueRow {
  readonly uuid: string
  readonly id: string
  readonly kind: PublicationKind
  readonly owner_uuid: string
  readonly owner_id: string
  readonly owner_name: string
  readonly revision: number
  readonly status: PublicationStatus
  readonly draft: Record<string, unknown>
  readonly approved: Record<string, unknown> | null
  readonly submitted_at: Date
  readonly submitted_key: string
}

/** The moderation queue: pending publications, oldest submission first. */
export const moderationQueue = (
  query: { readonly kind?: PublicationKind | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
): Effect.Effect<{ readonly items: ReadonlyArray<ModerationItem>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limit = query.limit ?? 20
    const after = yield* decodeCursor(query.cursor)
    const rows = yield* sql<QueueRow>`SELECT p.uuid, p.id, p.kind, o.uuid AS owner_uuid, o.id AS owner_id, o.name AS owner_name,
        p.revision, p.status, p.draft, p.approved, p.submitted_at, p.submitted_at::text AS submitted_key
      FROM publications p JOIN profiles o ON o.uuid = p.owner_profile_uuid
      WHERE ${sql.and([
      "p.status = 'pending' AND p.deleted_at IS NULL",
      ...(query.kind === undefined ? [] : [sql`p.kind = ${query.kind}`]),
      ...Option.match(after, {
        onNone: () => [],
        onSome: (at) => [sql`(p.submitted_at, p.uuid) > (${at.key}::timestamptz, ${at.uuid}::uuid)`]
      })
    ])}
      ORDER BY p.submitted_at, p.uuid LIMIT ${limit + 1}`
    return pageOf(rows, limit, (row) => ({ key: row.submitted_key, uuid: row.uuid }), (row): ModerationItem => ({
      uuid: row.uuid,
      id: row.id,
      kind: row.kind,
      ownerUuid: row.owner_uuid,
      ownerId: row.owner_id,
      ownerName: row.owner_name,
      revision: row.revision,
      status: row.status,
      draft: row.draft,
      approved: row.approved,
      submittedAt: row.submitted_at
    }))
  })

export interface DecisionInput {
  readonly requestUuid: string
  readonly publicationUuid: string
  readonly expectedRevision: number
  readonly decision: ModerationDecision
  readonly reason?: string | undefined
}

/**
 * Decides on a pending publication at `expectedRevision`. Approval copies the draft into the
 * public `approved` snapshot; return and reject keep the previous snapshot public and need a
 * reason the owner reads. Records the decision and `publication.moderated`.
 */
export const decideModeration = (
  moderator: Moderator,
  input: DecisionInput
): Effect.Effect<ModerationResult, NotFound | InvalidState | RevisionConflict | RequestConflict | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    return yield* idempotent(
      { scope: moderator.accountUuid ?? "cli", operationId: "moderation.decide", requestUuid: input.requestUuid, request: input, result: ModerationResult },
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ revision: number; status: PublicationStatus }>`SELECT revision, status FROM publications
          WHERE uuid = ${input.publicationUuid} AND deleted_at IS NULL FOR UPDATE`
        if (row === undefined) return yield* new NotFound({ message: "No such publication" })
        yield* requireRevision("publication", row.revision, input.expectedRevision)
        if (row.status !== "pending") {
          return yield* new InvalidState({ message: `only pending publications are moderated; this one is ${row.status}` })
        }
        const reason = (input.reason ?? "").trim()
        const status = statusOf[input.decision]
        const [updated] = yield* (input.decision === "approve"
          ? sql<{ revision: number }>`UPDATE publications SET status = 'approved', approved = draft, approved_at = now(), reason = ${reason},
              revision = revision + 1, updated_at = now() WHERE uuid = ${input.publicationUuid} RETURNING revision`
          : sql<{ revision: number }>`UPDATE publications SET status = ${status}, reason = ${reason},
              revision = revision + 1, updated_at = now() WHERE uuid = ${input.publicationUuid} RETURNING revision`)
        const [decision] = yield* sql<{ uuid: string; created_at: Date }>`INSERT INTO moderation_decisions
            (publication_uuid, publication_revision, moderator_account_uuid, moderator, decision, reason)
          VALUES (${input.publicationUuid}, ${updated!.revision}, ${moderator.accountUuid}, ${moderator.name}, ${input.decision}, ${reason})
          RETURNING uuid, created_at`
        yield* appendEvent({
          type: "publication.moderated",
          aggregate: { kind: "publication", uuid: input.publicationUuid, revision: updated!.revision },
          data: { objectUuid: input.publicationUuid, status },
          context: { moderation: input.decision }
        })
        return {
          uuid: decision!.uuid,
          publicationUuid: input.publicationUuid,
          decision: input.decision,
          reason,
          status,
          revision: updated!.revision,
          decidedAt: decision!.created_at
        }
      })
    )
  })
