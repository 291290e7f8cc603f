import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { NotFound, RevisionConflict } from "../kernel/ApiError.js"
import { rowsDecoder } from "./Rows.js"

type Column = string | number | boolean | null | Date

const decodeRevisions = rowsDecoder(Schema.Struct({ revision: Schema.Number }))

/**
 * The one way a mutable record changes: the update applies only at `expectedRevision`, and
 * bumps `revision` and `updated_at` with it. A stale revision fails with `RevisionConflict`
 * (409) and changes nothing; a missing row fails with `NotFound`. Returns the new revision.
 */
export const updateAtRevision = (options: {
  readonly table: string
  readonly kind: string
  readonly uuid: string
  readonly expectedRevision: number
  readonly values: Readonly<Record<string, Column>>
}): Effect.Effect<number, RevisionConflict | NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { expectedRevision, kind, table, uuid, values } = options
    const assignments = Object.keys(values).length > 0 ? sql`${sql.update(values)},` : sql``
    const updated = yield* Effect.flatMap(
      sql`
      UPDATE ${sql(table)} SET ${assignments} revision = revision + 1, updated_at = now()
      WHERE uuid = ${uuid} AND revision = ${expectedRevision}
      RETURNING revision`,
      decodeRevisions
    )
    if (updated.length === 1) return updated[0]!.revision
    const current = yield* Effect.flatMap(sql`SELECT revision FROM ${sql(table)} WHERE uuid = ${uuid}`, decodeRevisions)
    if (current.length === 0) return yield* new NotFound({ message: `No ${kind} ${uuid}` })
    return yield* revisionConflict(kind, current[0]!.revision, expectedRevision, uuid)
  })

/** 409 `revision_conflict` naming the record's kind (snake_case), uuid where known, and current revision. */
const revisionConflict = (kind: string, current: number, expectedRevision: number, uuid?: string) =>
  new RevisionConflict({
    message: `The ${kind} is at revision ${current}, not ${expectedRevision}; read it again and retry`,
    resource: kind.replaceAll(" ", "_"),
    ...(uuid === undefined ? {} : { uuid }),
    revision: current
  })

/** For handlers that read with `FOR UPDATE` first: the same conflict, from the row already locked (its uuid named where given). */
export const requireRevision = (
  kind: string,
  current: number,
  expectedRevision: number,
  uuid?: string
): Effect.Effect<void, RevisionConflict> =>
  current === expectedRevision
    ? Effect.void
    : Effect.fail(revisionConflict(kind, current, expectedRevision, uuid))

/** Column values of an UPDATE: plain ones, jsonb ones, and the bump of `revision` and `updated_at` every revisioned record takes. */
export const revisedColumns = (
  sql: SqlClient.SqlClient,
  values: Readonly<Record<string, string | number | boolean | Date | null>>,
  json: Readonly<Record<string, unknown>> = {}
) =>
  sql.csv([
    ...Object.entries(values).map(([column, value]) => sql`${sql(column)} = ${value}`),
    ...Object.entries(json).map(([column, value]) => sql`${sql(column)} = ${JSON.stringify(value)}::jsonb`),
    sql`revision = revision + 1`,
    sql`updated_at = now()`
  ])
