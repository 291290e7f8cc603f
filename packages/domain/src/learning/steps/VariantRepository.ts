import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"
import type { Variant } from "./StepModel.js"

/** `learning_variants`: the one module that reads and writes it (`Variants.ts` holds the rules of issuing). */

const VariantNumber = Schema.Struct({ n: Schema.Number })
const decodeNumber = rowsDecoder(VariantNumber)

/** The number of the learner's last variant of a step (0 before the first). */
export const lastVariantNumber = (enrollmentUuid: string, nodeKey: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT coalesce(max(n), 0)::int AS n FROM learning_variants WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey}`,
        decodeNumber
      ),
      (rows) => rows[0]?.n ?? 0
    ))

export const VariantRow = Schema.Struct({
  uuid: Schema.String,
  enrollment_uuid: Schema.String,
  node_key: Schema.String,
  n: Schema.Number,
  source: Schema.Literal("pool", "generated"),
  pool_index: Schema.NullOr(Schema.Number),
  dataset: Schema.Unknown,
  clue: Schema.Unknown,
  status: Schema.Literal("issued", "retired"),
  created_at: Timestamp
})
export type VariantRow = typeof VariantRow.Type

const variantColumns = selectList(VariantRow)
const decodeRows = rowsDecoder(VariantRow)

/** What the learner sees of a variant: its dataset, never its clue. */
export const variantView = (row: VariantRow): Variant => ({
  uuid: row.uuid,
  enrollmentUuid: row.enrollment_uuid,
  nodeKey: row.node_key,
  n: row.n,
  source: row.source,
  dataset: row.dataset,
  createdAt: row.created_at
})

export const currentVariant = (enrollmentUuid: string, nodeKey: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT ${sql.literal(variantColumns)} FROM learning_variants
          WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey} AND status = 'issued'`,
        decodeRows
      ),
      (rows) => rows[0]
    ))

/** Inserts a variant (retiring the current one) and returns it. */
export const insertVariant = (
  enrollmentUuid: string,
  nodeKey: string,
  variant: { readonly source: "pool" | "generated"; readonly poolIndex?: number; readonly dataset: unknown; readonly clue: unknown; readonly jobUuid?: string }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE learning_variants SET status = 'retired', retired_at = now()
      WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey} AND status = 'issued'`
    const n = yield* lastVariantNumber(enrollmentUuid, nodeKey)
    const [row] = yield* Effect.flatMap(sql`INSERT INTO learning_variants (uuid, enrollment_uuid, node_key, n, source, pool_index, dataset, clue, job_uuid)
      VALUES (${crypto.randomUUID()}, ${enrollmentUuid}, ${nodeKey}, ${n + 1}, ${variant.source}, ${variant.poolIndex ?? null},
        ${JSON.stringify(variant.dataset ?? null)}::jsonb, ${JSON.stringify(variant.clue ?? null)}::jsonb, ${variant.jobUuid ?? null})
      RETURNING ${sql.literal(variantColumns)}`, decodeRows)
    return row!
  })

