import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { JsonObject, rowsDecoder, selectList, Timestamp } from "../store/Rows.js"

/** `admin_actions`: the audit trail of the admin area, append-only; read and written only here. */
export const AdminActionRow = Schema.Struct({
  uuid: Schema.String,
  operator_account_uuid: Schema.NullOr(Schema.String),
  operator: Schema.String,
  operation: Schema.String,
  target: Schema.String,
  detail: JsonObject,
  created_at: Timestamp
})
export type AdminActionRow = typeof AdminActionRow.Type
const actionColumns = selectList(AdminActionRow, "a")
const decodeActions = rowsDecoder(AdminActionRow)

export interface NewAdminAction {
  readonly operatorAccountUuid: string | null
  readonly operator: string
  readonly operation: string
  readonly target: string
  readonly detail: { readonly [key: string]: string | boolean }
}

/** Records one action, in the caller's transaction. */
export const insertAdminAction = (action: NewAdminAction): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO admin_actions (operator_account_uuid, operator, operation, target, detail)
      VALUES (${action.operatorAccountUuid}, ${action.operator}, ${action.operation}, ${action.target}, ${JSON.stringify(action.detail)}::jsonb)`
  ).pipe(Effect.asVoid)

/** The latest actions, newest first. */
export const recentAdminActions = (limit: number): Effect.Effect<ReadonlyArray<AdminActionRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* decodeActions(yield* sql`SELECT ${sql.literal(actionColumns)} FROM admin_actions a
      ORDER BY a.created_at DESC, a.uuid DESC LIMIT ${limit}`)
  })
