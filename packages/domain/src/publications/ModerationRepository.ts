import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { RoleGrantRow, roleGrants, RoleGrantSource } from "../store/RoleGrants.js"
import { rowDecoder, Timestamp } from "../store/Rows.js"

/**
 * The moderation tables, read and written only here (through Moderation.ts): `moderators` (who
 * holds the role, and whether the CLI or `BIRZHA_MODERATORS` granted it) and
 * `moderation_decisions` (the record of each decision; append-only).
 */
const grants = roleGrants("moderators")

export const ModeratorSource = RoleGrantSource
export const ModeratorRow = RoleGrantRow
export type ModeratorRow = RoleGrantRow

/** Whether the (lower-cased) address holds the role. */
export const hasModeratorRow = grants.has
/** Grants the role; a grant by hand outlives the configured list. */
export const upsertModerator = grants.upsert
/** Removes the role; whether the address held it. */
export const deleteModerator = grants.remove
/** Removes the configured grants not in `keep`. */
export const deleteConfiguredModeratorsExcept = grants.removeConfiguredExcept
export const listModeratorRows = grants.list

const Recorded = Schema.Struct({ uuid: Schema.String, created_at: Timestamp })
const decodeRecorded = rowDecoder(Recorded)

export interface NewDecision {
  readonly publicationUuid: string
  readonly publicationRevision: number
  readonly moderatorAccountUuid: string | null
  readonly moderator: string
  readonly decision: string
  readonly reason: string
}

/** Records a decision; returns its uuid and time. */
export const insertDecision = (decision: NewDecision): Effect.Effect<typeof Recorded.Type, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`INSERT INTO moderation_decisions
        (publication_uuid, publication_revision, moderator_account_uuid, moderator, decision, reason)
      VALUES (${decision.publicationUuid}, ${decision.publicationRevision}, ${decision.moderatorAccountUuid}, ${decision.moderator},
        ${decision.decision}, ${decision.reason})
      RETURNING uuid, created_at`
    return yield* decodeRecorded(row)
  })
