import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { NotFound } from "../kernel/ApiError.js"
import type { Actor } from "../kernel/Authentication.js"
import {
  deleteConfiguredOperatorsExcept,
  deleteOperator,
  hasOperatorRow,
  listOperatorRows,
  upsertOperator
} from "./OperatorRepository.js"

/** Whether an address holds the operator role (granted by the CLI, the admin area or `BIRZHA_OPERATORS`). */
export const isOperator = (email: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  hasOperatorRow(email.toLowerCase())

/** Who acts in the admin area: the signed-in operator, recorded by account and address. */
export interface Operator {
  readonly accountUuid: string
  readonly email: string
}

/**
 * The caller as an operator, or 404: to anyone else the admin area is not there at all, so an
 * account cannot tell an admin operation from a path the service does not have.
 */
export const operatorOf = (actor: Actor): Effect.Effect<Operator, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(isOperator(actor.email), (yes) =>
    yes && actor.via === "session"
      ? Effect.succeed({ accountUuid: actor.accountUuid, email: actor.email })
      : Effect.fail(new NotFound({ message: "No such page" })))

export const grantOperator = (email: string) => upsertOperator(email.toLowerCase(), "cli")

export const revokeOperator = (email: string) => deleteOperator(email.toLowerCase())

export const listOperators = listOperatorRows

/**
 * Makes the configured operators (`BIRZHA_OPERATORS`) exactly the `config` rows: added ones are
 * granted, removed ones lose the role; grants made by hand are left alone.
 */
export const syncConfiguredOperators = (emails: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const wanted = [...new Set(emails.map((email) => email.trim().toLowerCase()).filter((email) => email.length > 0))]
      yield* deleteConfiguredOperatorsExcept(wanted)
      for (const email of wanted) yield* upsertOperator(email, "config")
    })))
