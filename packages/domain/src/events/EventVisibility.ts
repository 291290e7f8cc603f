import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * The one rule of who may see an event, evaluated with current data at the moment of reading
 * (events.list, events.get) and of sending (webhooks). A profile sees an event when
 *
 * - it caused it: `context.profileUuid` is the profile, or
 * - it is addressed to it: `context.audience` lists the profile (the other party of a deal...), or
 * - it owns the record the event is about, as the records say now: its own profile, its
 *   publications (`owner_profile_uuid`), its files (`profile_uuid`).
 *
 * Nothing else: not the other profiles of the same account, not moderators by role. SQL over the
 * alias `e` for `outbox_events`.
 */
export const eventVisibleTo = (sql: SqlClient.SqlClient, profileUuid: string): Statement.Fragment =>
  visibleTo(sql, sql`${profileUuid}::text`, sql`${profileUuid}::uuid`)

/** The same rule for the profile in a uuid column of the query (`r.profile_uuid`: the automations' fan-out). */
export const eventVisibleToColumn = (sql: SqlClient.SqlClient, column: string): Statement.Fragment =>
  visibleTo(sql, sql`${sql.literal(column)}::text`, sql.literal(column))

const visibleTo = (sql: SqlClient.SqlClient, asText: Statement.Fragment, asUuid: Statement.Fragment): Statement.Fragment =>
  sql`(
    e.context ->> 'profileUuid' = ${asText}
    OR e.context -> 'audience' @> jsonb_build_array(${asText})
    OR (e.aggregate_kind = 'profile' AND e.aggregate_uuid = ${asUuid})
    OR (e.aggregate_kind = 'publication' AND EXISTS (
      SELECT 1 FROM publications owned WHERE owned.uuid = e.aggregate_uuid AND owned.owner_profile_uuid = ${asUuid}))
    OR (e.aggregate_kind = 'file' AND EXISTS (
      SELECT 1 FROM files owned WHERE owned.uuid = e.aggregate_uuid AND owned.profile_uuid = ${asUuid}))
  )`

/** Whether the profile may see the event now (webhook delivery re-checks this at send time). */
export const canSeeEvent = (profileUuid: string, eventUuid: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT 1 FROM outbox_events e WHERE e.uuid = ${eventUuid} AND ${eventVisibleTo(sql, profileUuid)}`
    return rows.length > 0
  })
