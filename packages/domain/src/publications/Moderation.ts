import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Forbidden, type InvalidRequest, type InvalidState, NotFound, type RequestConflict, type RevisionConflict, stateRefusal } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import { DateTime } from "../kernel/Common.js"
import { decodeCursor, pageOf } from "../store/Cursor.js"
import { idempotent } from "../store/Idempotency.js"
import { appendEvent } from "../store/Outbox.js"
import { requireRevision } from "../store/Revision.js"
import {
  deleteConfiguredModeratorsExcept,
  deleteModerator,
  hasModeratorRow,
  insertDecision,
  listModeratorRows,
  upsertModerator
} from "./ModerationRepository.js"
import { PublicationData, PublicationKind, PublicationStatus } from "./Publication.js"
import { findPublicationStanding, listPendingPublications, moderatePublication } from "./PublicationRepository.js"

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

const statusOf: Record<ModerationDecision, "approved" | "returned" | "rejected"> = { approve: "approved", return: "returned", reject: "rejected" }

/** Whether an address holds the moderator role (granted by the CLI or `BIRZHA_MODERATORS`). */
export const isModerator = (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  hasModeratorRow(email.toLowerCase())

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

export const grantModerator = (email: string) => upsertModerator(email.toLowerCase(), "cli")

export const revokeModerator = (email: string) => deleteModerator(email.toLowerCase())

export const listModerators = listModeratorRows

/**
 * Makes the configured moderators (`BIRZHA_MODERATORS`) exactly the `config` rows: added ones are
 * granted, removed ones lose the role; grants made with the CLI are left alone.
 */
export const syncConfiguredModerators = (emails: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const wanted = [...new Set(emails.map((email) => email.trim().toLowerCase()).filter((email) => email.length > 0))]
      yield* deleteConfiguredModeratorsExcept(wanted)
      for (const email of wanted) yield* upsertModerator(email, "config")
    })))

/** The moderation queue: pending publications, oldest submission first. */
export const moderationQueue = (
  query: { readonly kind?: PublicationKind | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
): Effect.Effect<{ readonly items: ReadonlyArray<ModerationItem>; readonly nextCursor?: string }, InvalidRequest | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const limit = query.limit ?? 20
    const after = yield* decodeCursor(query.cursor)
    const rows = yield* listPendingPublications({ kind: query.kind, after, limit: limit + 1 })
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
        const found = yield* findPublicationStanding(input.publicationUuid, { lock: true })
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such publication" })
        const row = found.value
        yield* requireRevision(row.kind, row.revision, input.expectedRevision, row.uuid)
        if (row.status !== "pending") {
          return yield* stateRefusal({
            resource: row.kind,
            uuid: row.uuid,
            state: row.status,
            allowed: ["pending"],
            operation: "moderation.decide",
            message: `only pending publications are moderated; this one is ${row.status}`
          })
        }
        const reason = (input.reason ?? "").trim()
        const status = statusOf[input.decision]
        const revision = yield* moderatePublication(input.publicationUuid, statusOf[input.decision], reason)
        const decision = yield* insertDecision({
          publicationUuid: input.publicationUuid,
          publicationRevision: revision,
          moderatorAccountUuid: moderator.accountUuid,
          moderator: moderator.name,
          decision: input.decision,
          reason
        })
        yield* appendEvent({
          type: "publication.moderated",
          aggregate: { kind: "publication", uuid: input.publicationUuid, revision },
          data: { objectUuid: input.publicationUuid, status },
          context: { moderation: input.decision }
        })
        return {
          uuid: decision.uuid,
          publicationUuid: input.publicationUuid,
          decision: input.decision,
          reason,
          status,
          revision,
          decidedAt: decision.created_at
        }
      })
    )
  })
