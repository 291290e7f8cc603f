import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { appendEvent } from "../store/Outbox.js"
import { appendAudit } from "./Audit.js"
import { layerColumns, type LayerRow, layersOf, effectiveLayer, type SubmissionRow } from "./SubmissionViews.js"

/**
 * Appending a correction layer (appeal, plan, incident) to a submission's scores (LEARNING §5.3):
 * the first layer is never touched, the new layer is appended, the effective score is recomputed;
 * when it changed, `learning.submission.graded` (and `learning.submission.accepted` when it newly
 * passes) is emitted, and the change is audited with before and after. The caller has checked the
 * run's freeze (`grade_frozen`) and holds the submission's lock.
 *
 * Interim: learning issue 3's shared score-layer module (learning/Layers.ts, branch learn3-reviews)
 * replaces this when it lands; the contract is the same (append, effective score, audit).
 */

export interface CorrectionLayer {
  readonly kind: "appeal" | "plan" | "incident"
  readonly points: number
  readonly maxPoints: number
  readonly verdict: string
  readonly passed: boolean
  readonly onlyIfHigher?: boolean
  readonly sourceUuid: string
  readonly by: string
  readonly reason: string
  readonly requestUuid?: string | undefined
}

const scoreOf = (layer: LayerRow | undefined) =>
  layer === undefined ? null : { points: Number(layer.points), maxPoints: layer.max_points, verdict: layer.verdict, passed: layer.passed }

export const appendCorrectionLayer = (
  row: SubmissionRow,
  layer: CorrectionLayer,
  options: { readonly audit?: boolean } = {}
): Effect.Effect<{ readonly layer: LayerRow; readonly changed: boolean }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const before = (yield* layersOf([row.uuid])).get(row.uuid) ?? []
    const [inserted] = yield* sql<LayerRow>`INSERT INTO learning_score_layers (uuid, submission_uuid, kind, points, max_points, verdict, passed,
        only_if_higher, source_uuid, by_profile_uuid, reason)
      VALUES (${crypto.randomUUID()}, ${row.uuid}, ${layer.kind}, ${layer.points}, ${layer.maxPoints}, ${layer.verdict}, ${layer.passed},
        ${layer.onlyIfHigher ?? false}, ${layer.sourceUuid}, ${layer.by}, ${layer.reason})
      RETURNING ${sql.literal(layerColumns)}`
    const was = scoreOf(effectiveLayer(before))
    const now = scoreOf(effectiveLayer([...before, inserted!]))
    const changed = JSON.stringify(was) !== JSON.stringify(now)
    if (changed) {
      const newlyPassed = now?.passed === true && was?.passed !== true && row.status === "graded"
      const [bumped] = yield* sql<{ revision: number }>`UPDATE learning_submissions SET revision = revision + ${newlyPassed ? 2 : 1},
          status = ${newlyPassed ? "accepted" : row.status}, updated_at = now() WHERE uuid = ${row.uuid} RETURNING revision`
      const context = {
        profileUuid: layer.by,
        audience: [row.profile_uuid],
        courseUuid: row.course_uuid,
        runUuid: row.run_uuid,
        enrollmentUuid: row.enrollment_uuid,
        nodeKey: row.node_key,
        submissionUuid: row.uuid
      }
      const revision = bumped!.revision
      yield* appendEvent({
        type: "learning.submission.graded",
        aggregate: { kind: "learning_submission", uuid: row.uuid, revision: newlyPassed ? revision - 1 : revision },
        data: { objectUuid: row.uuid, status: "graded" },
        context
      })
      if (newlyPassed) {
        yield* appendEvent({
          type: "learning.submission.accepted",
          aggregate: { kind: "learning_submission", uuid: row.uuid, revision },
          data: { objectUuid: row.uuid, status: "accepted" },
          context
        })
      }
    }
    if (options.audit !== false) {
      yield* appendAudit({
        courseUuid: row.course_uuid,
        actorProfileUuid: layer.by,
        action: `score.${layer.kind}`,
        subjectKind: "submission",
        subjectUuid: row.uuid,
        enrollmentUuid: row.enrollment_uuid,
        before: was,
        after: { layerUuid: inserted!.uuid, effective: now },
        reason: layer.reason,
        ...(layer.requestUuid !== undefined ? { requestUuid: layer.requestUuid } : {})
      })
    }
    return { layer: inserted!, changed }
  })
