import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowDecoder, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"

/**
 * The moderation tables, read and written only here (through Moderation.ts): `moderators` (who
 * holds the role, and whether the CLI or `BIRZHA_MODERATORS` granted it) and
 * `moderation_decisions` (the record of each decision; append-only).
 */
export const ModeratorSource = Schema.Literal("cli", "config")

export const ModeratorRow = Schema.Struct({
  email: Schema.String,
  source: ModeratorSource,
  granted_at: Timestamp
})
export type ModeratorRow = typeof ModeratorRow.Type
const moderatorColumns = selectList(ModeratorRow, "m")
const decodeModerators = rowsDecoder(ModeratorRow)

/** Whether the (lower-cased) address holds the role. */
export const hasModeratorRow = (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 FROM moderators WHERE email = ${email}`).pipe(
    Effect.map((rows) => rows.length > 0)
  )

/** Grants the role; a grant by the CLI outlives the configured list. */
export const upsertModerator = (email: string, source: typeof ModeratorSource.Type): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    source === "cli"
      ? sql`INSERT INTO moderators (email, source) VALUES (${email}, 'cli') ON CONFLICT (email) DO UPDATE SET source = 'cli'`
      : sql`INSERT INTO moderators (email, source) VALUES (${email}, 'config') ON CONFLICT (email) DO NOTHING`).pipe(Effect.asVoid)

/** Removes the role; whether the address held it. */
export const deleteModerator = (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM moderators WHERE email = ${email} RETURNING email`).pipe(
    Effect.map((rows) => rows.length > 0)
  )

/** Removes the configured grants not in `keep`. */
export const deleteConfiguredModeratorsExcept = (keep: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM moderators WHERE source = 'config' AND NOT (email = ANY(${keep}))`)
    .pipe(Effect.asVoid)

export const listModeratorRows: Effect.Effect<ReadonlyArray<ModeratorRow>, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* decodeModerators(yield* sql`SELECT ${sql.literal(moderatorColumns)} FROM moderators m ORDER BY m.email`)
})

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
