import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect, Option } from "effect"
import { findPublicationStanding, type PublicationStanding } from "./PublicationRepository.js"

/** Where a publication stands, whoever owns it: what an operator needs before deciding on it. */
export type ModerationTarget = PublicationStanding

/**
 * The current revision and status of a live publication (none when absent or deleted), so
 * `birzha moderation approve|return|reject` can decide at the revision it read; `uuid` must be a UUID.
 */
export const moderationTarget = (uuid: string): Effect.Effect<Option.Option<ModerationTarget>, SqlError, SqlClient.SqlClient> =>
  findPublicationStanding(uuid, { lock: false })
