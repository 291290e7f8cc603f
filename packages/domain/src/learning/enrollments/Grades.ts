import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Schema } from "effect"
import { Int8Text, rowsDecoder, Timestamp } from "../../store/Rows.js"
import { pinnedNodesOf } from "./EnrollmentAccess.js"
import { effectiveLayer, type LayerRow } from "../steps/SubmissionViews.js"

/**
 * Learners' grades: a step's grade is its node's selection rule — `last` (the
 * default) or `best` — over the effective scores of the learner's submissions on it, as staff see
 * them (`effectiveLayer`: the newest active layer, `only_if_higher` ones as max); a submission
 * without a layer (waiting, cancelled, platform-failed) has none. A course grade is the points of
 * the graded steps of the run's pinned version over their maximum, as a percentage: the grading
 * model has no weights, so points weigh a step, as a points-based total does in Canvas. A step
 * not attempted counts 0; a score given at another version counts at its share of that version's
 * maximum (a layer keeps its own `max_points`).
 */

export interface LearnerGrade {
  readonly enrollmentUuid: string
  readonly points: number
  readonly maxPoints: number
  /** 0–100, two decimals. */
  readonly percent: number
  /** Graded steps with a score. */
  readonly scoredSteps: number
}

const round2 = (value: number) => Math.round(value * 100) / 100

type Layer = Pick<LayerRow, "submission_uuid" | "points" | "max_points" | "released" | "revoked_at" | "only_if_higher">

/** A score layer with its step and enrollment: what `effectiveLayer` reads of a layer, and no more. */
const GradeLayer = Schema.Struct({
  enrollment_uuid: Schema.String,
  run_uuid: Schema.String,
  node_key: Schema.String,
  submission_uuid: Schema.String,
  points: Int8Text,
  max_points: Schema.Number,
  released: Schema.Boolean,
  revoked_at: Schema.NullOr(Timestamp),
  only_if_higher: Schema.Boolean
})
const decodeLayers = rowsDecoder(GradeLayer)

/**
 * The grades of the enrollments `where` selects (a condition over `learning_enrollments e`), by
 * enrollment uuid; enrollments without any score are left out. One statement for the scores, one
 * for the runs' pins (their trees from the version cache).
 */
export const learnerGrades = (
  where: Fragment,
  /** `learner: true`: as the learner sees them (released layers only); staff see every layer. */
  options: { readonly learner?: boolean } = {}
): Effect.Effect<ReadonlyMap<string, LearnerGrade>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // What `effectiveLayer` reads of a layer, and no more: a course's every layer is read.
    const rows = yield* Effect.flatMap(sql`
      SELECT e.uuid::text AS enrollment_uuid, e.run_uuid::text AS run_uuid, s.node_key, l.submission_uuid::text AS submission_uuid,
        l.points, l.max_points, l.released, l.revoked_at, l.only_if_higher
      FROM learning_enrollments e JOIN learning_submissions s ON s.enrollment_uuid = e.uuid JOIN learning_score_layers l ON l.submission_uuid = s.uuid
      WHERE ${where}
      ORDER BY e.uuid, s.node_key, s.submitted_at, s.uuid, l.created_at, l.uuid`, decodeLayers)
    // enrollment → node → the submissions' layers, each list in submission order.
    const byEnrollment = new Map<string, { runUuid: string; steps: Map<string, Array<Array<Layer>>> }>()
    let previous: string | undefined
    for (const row of rows) {
      const entry = byEnrollment.get(row.enrollment_uuid) ?? { runUuid: row.run_uuid, steps: new Map() }
      byEnrollment.set(row.enrollment_uuid, entry)
      const submissions = entry.steps.get(row.node_key) ?? []
      entry.steps.set(row.node_key, submissions)
      if (previous !== row.submission_uuid) submissions.push([])
      submissions[submissions.length - 1]!.push(row)
      previous = row.submission_uuid
    }
    const trees = yield* pinnedNodesOf([...new Set([...byEnrollment.values()].map((entry) => entry.runUuid))])
    const grades = new Map<string, LearnerGrade>()
    for (const [enrollmentUuid, { runUuid, steps }] of byEnrollment) {
      let points = 0
      let maxPoints = 0
      let scoredSteps = 0
      for (const node of trees.get(runUuid) ?? []) {
        const grading = node.kind === "step" ? node.grading : undefined
        if (grading === undefined || grading.maxPoints === 0) continue
        maxPoints += grading.maxPoints
        const shares = (steps.get(node.nodeKey) ?? []).flatMap((layers) => {
          const layer = effectiveLayer(layers, options)
          return layer === undefined ? [] : [layer.max_points > 0 ? Number(layer.points) / layer.max_points : 0]
        })
        if (shares.length === 0) continue
        scoredSteps++
        const share = grading.selection === "best" ? Math.max(...shares) : shares[shares.length - 1]!
        points += share * grading.maxPoints
      }
      if (scoredSteps === 0) continue
      grades.set(enrollmentUuid, {
        enrollmentUuid,
        points: round2(points),
        maxPoints,
        percent: maxPoints === 0 ? 0 : round2(Math.min(100, (100 * points) / maxPoints)),
        scoredSteps
      })
    }
    return grades
  })
