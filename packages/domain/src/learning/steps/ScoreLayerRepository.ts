import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { Int8Text, rowsDecoder, selectList, Timestamp } from "../../store/Rows.js"

/**
 * `learning_score_layers`: a submission's layers, appended and only ever revoked (the table's
 * trigger holds that); the one module that writes it. What a layer means (the effective score, who
 * may add one) is in grading/Layers.ts and SubmissionViews.ts.
 */

export const LayerRow = Schema.Struct({
  uuid: Schema.String,
  submission_uuid: Schema.String,
  kind: Schema.Literal("auto", "review", "appeal", "override", "regrade", "plan", "incident"),
  /** `numeric`: text, so no digit is lost. */
  points: Int8Text,
  max_points: Schema.Number,
  verdict: Schema.String,
  feedback: Schema.String,
  passed: Schema.Boolean,
  late: Schema.Boolean,
  released: Schema.Boolean,
  only_if_higher: Schema.Boolean,
  source_uuid: Schema.NullOr(Schema.String),
  by_profile_uuid: Schema.NullOr(Schema.String),
  reason: Schema.String,
  revoked_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
})
export type LayerRow = typeof LayerRow.Type

export const layerColumns = selectList(LayerRow)
export const decodeLayers = rowsDecoder(LayerRow)

/** A new layer's values; the optional ones take the table's defaults. */
export interface NewLayer {
  readonly uuid: string
  readonly submission_uuid: string
  readonly kind: LayerRow["kind"]
  readonly points: number
  readonly max_points: number
  readonly verdict: string
  readonly feedback: string
  readonly passed: boolean
  readonly late: boolean
  readonly source_uuid: string | null
}

/** The first (`auto`) layers of checked submissions, in one statement; answered in the given order. */
export const insertAutoLayers = (
  layers: ReadonlyArray<Omit<NewLayer, "kind">>
): Effect.Effect<ReadonlyArray<LayerRow>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = new Map((yield* Effect.flatMap(
      sql`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict,
        feedback, passed, late, source_uuid)
      SELECT uuid, submission_uuid, 'auto', points, max_points, verdict, feedback, passed, late, source_uuid
      FROM jsonb_to_recordset(${JSON.stringify(layers)}::jsonb) AS l(uuid uuid, submission_uuid uuid, points numeric, max_points numeric,
        verdict text, feedback text, passed boolean, late boolean, source_uuid uuid)
      RETURNING ${sql.literal(layerColumns)}`,
      decodeLayers
    )).map((layer) => [layer.uuid, layer]))
    return layers.map((layer) => rows.get(layer.uuid)!)
  })

/** A later layer (a review, an appeal, an override, ...), with who added it and why. */
export interface AddedLayer extends NewLayer {
  readonly released: boolean
  readonly only_if_higher: boolean
  readonly by_profile_uuid: string | null
  readonly reason: string
}

/** Appends one layer; answers it. */
export const insertLayer = (layer: AddedLayer): Effect.Effect<LayerRow, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, feedback,
        passed, late, released, only_if_higher, source_uuid, by_profile_uuid, reason)
      VALUES (${layer.uuid}, ${layer.submission_uuid}, ${layer.kind}, ${layer.points}, ${layer.max_points}, ${layer.verdict}, ${layer.feedback},
        ${layer.passed}, ${layer.late}, ${layer.released}, ${layer.only_if_higher}, ${layer.source_uuid},
        ${layer.by_profile_uuid}, ${layer.reason})
      RETURNING ${sql.literal(layerColumns)}`,
        decodeLayers
      ),
      (rows) => rows[0]!
    ))

/** Appends many layers in one statement; answered in the given order. */
export const insertLayers = (layers: ReadonlyArray<AddedLayer>): Effect.Effect<ReadonlyArray<LayerRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, feedback,
        passed, late, released, only_if_higher, source_uuid, by_profile_uuid, reason)
      SELECT l.uuid, l.submission_uuid, l.kind, l.points, l.max_points, l.verdict, l.feedback, l.passed, l.late, l.released, l.only_if_higher,
        l.source_uuid, l.by_profile_uuid, l.reason
      FROM jsonb_to_recordset(${JSON.stringify(layers.map((layer, i) => ({ i, ...layer })))}::jsonb) AS l(i int, uuid uuid, submission_uuid uuid,
        kind text, points numeric, max_points int, verdict text, feedback text, passed boolean,
        late boolean, released boolean, only_if_higher boolean, source_uuid uuid, by_profile_uuid uuid, reason text)
      ORDER BY l.i
      RETURNING ${sql.literal(layerColumns)}`,
      decodeLayers
    ))

/** Revokes a layer (the caller checked it may be); answers it. */
export const revokeLayer = (uuid: string): Effect.Effect<LayerRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`UPDATE learning_score_layers SET revoked_at = clock_timestamp() WHERE uuid = ${uuid}
      RETURNING ${sql.literal(layerColumns)}`,
        decodeLayers
      ),
      (rows) => rows[0]
    ))
