import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { NotFound } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { decodeCursor, pageOf } from "../../store/Cursor.js"
import { rowsDecoder, selectList } from "../../store/Rows.js"
import { type StepDates, stepDates } from "../enrollments/Dates.js"
import { enrollmentFor } from "../enrollments/EnrollmentAccess.js"
import { decodeLayers, type LayerRow, layerColumns } from "./ScoreLayerRepository.js"
import type { Submission } from "./StepModel.js"
import { decodeSubmissions, SubmissionRow, submissionColumns } from "./SubmissionRepository.js"

/**
 * Submissions as they are read: rows with their score layers;
 * the effective score is the newest active layer the reader may see (a learner: released layers
 * only; `only_if_higher` layers apply as a maximum). Lateness is computed against the current
 * effective due date, so an extension removes it.
 */

// The rows live with their tables' one writer; re-exported here, where the areas that read submissions import them.
export { decodeSubmissions, SubmissionRow, submissionColumns } from "./SubmissionRepository.js"
export { decodeLayers, LayerRow, layerColumns } from "./ScoreLayerRepository.js"

/** A page of the history: the row and its keyset position (`submitted_at` as text, so no microsecond is lost). */
const HistoryRow = Schema.Struct({ ...SubmissionRow.fields, position: Schema.String })
const historyColumns = selectList(HistoryRow, "s", { position: "s.submitted_at::text" })
const decodeHistory = rowsDecoder(HistoryRow)

export const loadSubmission = (uuid: string, options: { readonly lock: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(submissionColumns)} FROM learning_submissions s WHERE s.uuid = ${uuid}
      ${options.lock ? sql.literal("FOR UPDATE OF s") : sql``}`,
      decodeSubmissions
    )
    return rows[0] === undefined ? yield* new NotFound({ message: `No submission ${uuid}` }) : rows[0]
  })

export const layersOf = (uuids: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, ReadonlyArray<LayerRow>>, SqlError, SqlClient.SqlClient> =>
  uuids.length === 0 ? Effect.succeed(new Map()) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.flatMap(
        sql`SELECT ${sql.literal(layerColumns)} FROM learning_score_layers WHERE submission_uuid IN ${sql.in(uuids)} ORDER BY created_at, uuid`,
        decodeLayers
      ),
      (rows) => {
        const map = new Map<string, Array<LayerRow>>()
        for (const row of rows) map.set(row.submission_uuid, [...(map.get(row.submission_uuid) ?? []), row])
        return map
      }
    ))

export interface Reader {
  /** The learner sees released layers only. */
  readonly learner: boolean
  readonly dates: StepDates | undefined
}

/**
 * The effective layer among those visible: the newest active one; `only_if_higher` layers count
 * only when higher. Layers come oldest first; `learner: true` looks at released layers only (an
 * unreleased grade never reaches the learner). Layers.ts `effectiveScore` reads it from the store.
 */
export const effectiveLayer = <L extends Pick<LayerRow, "released" | "revoked_at" | "only_if_higher" | "points">>(
  layers: ReadonlyArray<L>,
  options: { readonly learner?: boolean } = {}
): L | undefined => {
  let effective: L | undefined
  for (const layer of layers) {
    if (options.learner === true && !layer.released) continue
    if (layer.revoked_at !== null) continue
    if (layer.only_if_higher && effective !== undefined && Number(layer.points) <= Number(effective.points)) continue
    effective = layer
  }
  return effective
}

export const submissionView = (row: SubmissionRow, allLayers: ReadonlyArray<LayerRow>, reader: Reader): Submission => {
  const layers = reader.learner ? allLayers.filter((layer) => layer.released) : allLayers
  const effective = effectiveLayer(layers)
  const due = reader.dates?.dueAt
  return {
    uuid: row.uuid,
    revision: row.revision,
    enrollmentUuid: row.enrollment_uuid,
    courseUuid: row.course_uuid,
    runUuid: row.run_uuid,
    nodeKey: row.node_key,
    versionNumber: row.version_number,
    ...(row.variant_uuid !== null ? { variantUuid: row.variant_uuid } : {}),
    attemptNo: row.attempt_no,
    attemptCounted: row.attempt_counted,
    reply: row.reply,
    status: row.status,
    late: due !== undefined && row.submitted_at.getTime() > due.getTime(),
    submittedAt: row.submitted_at,
    ...(row.graded_at !== null ? { gradedAt: row.graded_at } : {}),
    ...(effective !== undefined
      ? { score: { points: Number(effective.points), maxPoints: effective.max_points, verdict: effective.verdict, passed: effective.passed, feedback: effective.feedback } }
      : {}),
    layers: layers.map((layer) => ({
      uuid: layer.uuid,
      kind: layer.kind,
      points: Number(layer.points),
      maxPoints: layer.max_points,
      verdict: layer.verdict,
      feedback: layer.feedback,
      passed: layer.passed,
      late: layer.late,
      ...(layer.revoked_at !== null ? { revokedAt: layer.revoked_at } : {}),
      createdAt: layer.created_at
    })),
    ...(row.demo_attempt_uuid !== null ? { demoAttemptUuid: row.demo_attempt_uuid } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** One submission as the reader sees it (its layers read afresh). */
export const viewOf = (row: SubmissionRow, reader: Reader) =>
  Effect.map(layersOf([row.uuid]), (layers) => submissionView(row, layers.get(row.uuid) ?? [], reader))

export const lastSubmission = (enrollmentUuid: string, nodeKey: string, reader: Reader) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(submissionColumns)} FROM learning_submissions s
      WHERE s.enrollment_uuid = ${enrollmentUuid} AND s.node_key = ${nodeKey} ORDER BY s.submitted_at DESC, s.uuid DESC LIMIT 1`,
      decodeSubmissions
    )
    return row === undefined ? undefined : yield* viewOf(row, reader)
  })

/** The learner's submissions on a step, newest first (the learner, or staff in scope). */
export const submissionHistory = (
  actor: Actor,
  enrollmentUuid: string,
  nodeKey: string,
  query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* enrollmentFor(actor, enrollmentUuid, { lock: false })
    if (!context.nodes.some((node) => node.nodeKey === nodeKey && node.kind === "step")) {
      return yield* new NotFound({ message: `No step ${nodeKey} in the enrollment's course version` })
    }
    const position = yield* decodeCursor(query.cursor)
    const limit = query.limit ?? 20
    const rows = yield* Effect.flatMap(
      sql`SELECT ${sql.literal(historyColumns)}
      FROM learning_submissions s WHERE s.enrollment_uuid = ${enrollmentUuid} AND s.node_key = ${nodeKey}
        ${position._tag === "Some" ? sql`AND (s.submitted_at, s.uuid) < (${position.value.key}::timestamptz, ${position.value.uuid}::uuid)` : sql``}
      ORDER BY s.submitted_at DESC, s.uuid DESC LIMIT ${limit + 1}`,
      decodeHistory
    )
    const dates = (yield* stepDates(enrollmentUuid)).get(nodeKey)
    const layers = yield* layersOf(rows.slice(0, limit).map((row) => row.uuid))
    return pageOf(rows, limit, (row) => ({ key: row.position, uuid: row.uuid }), (row) =>
      submissionView(row, layers.get(row.uuid) ?? [], { learner: context.asLearner, dates }))
  })

/** One submission: its learner, or staff in scope of its run (404 to anyone else). */
export const getSubmission = (actor: Actor, uuid: string) =>
  Effect.gen(function*() {
    const row = yield* loadSubmission(uuid, { lock: false })
    const context = yield* enrollmentFor(actor, row.enrollment_uuid, { lock: false })
      .pipe(Effect.catchTag("NotFound", () => Effect.fail(new NotFound({ message: `No submission ${uuid}` }))))
    const dates = (yield* stepDates(row.enrollment_uuid)).get(row.node_key)
    return yield* viewOf(row, { learner: context.asLearner, dates })
  })
