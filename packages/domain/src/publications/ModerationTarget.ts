import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import type { PublicationKind, PublicationStatus } from "./Publication.js"

/** Where a publication stands, whoever owns it: what an operator needs before deciding on it. */
export interface ModerationTarget {
  readonly uuid: string
  readonly kind: PublicationKind
  readonly status: PublicationStatus
  readonly revision: number
}

/**
 * The current revision and status of a live publication (none when absent or deleted), so
 * `birzha moderation approve|return|reject` can decide at the revision it read; `uuid` must be a UUID.
 */
export const moderationTarget = (uuid: string): Effect.Effect<Option.Option<ModerationTarget>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<ModerationTarget>`SELECT uuid, kind, status, revision FROM publications
      WHERE uuid = ${uuid} AND deleted_at IS NULL`).pipe(Effect.map((rows) => Option.fromNullable(rows[0])))
