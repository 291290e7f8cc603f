import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { InvalidState } from "../../kernel/ApiError.js"
import type { Actor } from "../../kernel/Authentication.js"
import { rowsDecoder } from "../../store/Rows.js"
import { once } from "../Commands.js"
import type { CourseNode } from "../courses/Model.js"
import { SubmissionStatus, Variant } from "./StepModel.js"
import { recordStepProgress } from "./StepStates.js"
import { requireWorkable, type StepContext, stepFor } from "./Steps.js"
import { currentVariant, insertVariant, lastVariantNumber, type VariantRow, variantView } from "./VariantRepository.js"

/**
 * Variants: a learner's dataset of a step, from the node's pool or from the
 * external generator. The dataset is shown; the clue stays on the server and only the checker
 * reads it. A pool variant is chosen deterministically from (profile, course, node, n), so the
 * same learner gets the same first variant in a demo try and in an enrollment (demo.apply needs
 * it), and a reissue picks a different index. `reissue`: never (default), per_attempt (after a
 * counted submission on the current one), after_fail (after a graded submission that did not pass).
 */

/**
 * The pool index of the n-th variant of a learner on a step: a hash of (profile, course, node, n)
 * over the pool; a reissue (`avoid`) never repeats the index it replaces when the pool has another.
 */
export const poolIndex = (key: { readonly profileUuid: string; readonly courseUuid: string; readonly nodeKey: string; readonly n: number }, size: number, avoid?: number): number => {
  const digest = createHash("sha256").update(`${key.profileUuid}\n${key.courseUuid}\n${key.nodeKey}\n${key.n}`).digest()
  const value = digest.readUInt32BE(0)
  if (avoid === undefined || size < 2) return value % size
  return (avoid + 1 + (value % (size - 1))) % size
}

/** A pool variant for the learner: the n-th by the deterministic choice, avoiding the index it replaces. */
const issueFromPool = (step: StepContext, avoid?: number) =>
  Effect.gen(function*() {
    const pool = step.node.variants?.pool ?? []
    const n = (yield* lastVariantNumber(step.enrollment.uuid, step.node.nodeKey)) + 1
    const index = poolIndex({ profileUuid: step.enrollment.profile_uuid, courseUuid: step.course.uuid, nodeKey: step.node.nodeKey, n }, pool.length, avoid)
    const item = pool[index]!
    return yield* insertVariant(step.enrollment.uuid, step.node.nodeKey, { source: "pool", poolIndex: index, dataset: item.dataset, clue: item.clue })
  })

/**
 * The variant a submission pins: the current one; a pool step issues its first on demand; a
 * generated step needs one generated first (409). Undefined for a step without variants.
 */
export const variantForSubmission = (step: StepContext) =>
  Effect.gen(function*() {
    const mode = step.node.variants?.mode ?? "none"
    if (mode === "none") return undefined
    const current = yield* currentVariant(step.enrollment.uuid, step.node.nodeKey)
    if (current !== undefined) return current
    if (mode === "pool") return yield* issueFromPool(step)
    return yield* new InvalidState({ message: "This step's variant is generated: ask for one (generated-variants) before submitting" })
  })

const decodeLatest = rowsDecoder(Schema.Struct({ status: SubmissionStatus, passed: Schema.NullOr(Schema.Boolean) }))

/** Whether the node's reissue policy lets the learner replace the current variant now. */
const reissueAllowed = (node: CourseNode, current: VariantRow) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const policy = node.variants?.reissue ?? "never"
    if (policy === "never") return false
    const rows = yield* Effect.flatMap(
      sql`SELECT s.status,
        (SELECT l.passed FROM learning_score_layers l WHERE l.submission_uuid = s.uuid AND l.revoked_at IS NULL
          ORDER BY l.created_at DESC LIMIT 1) AS passed
      FROM learning_submissions s WHERE s.variant_uuid = ${current.uuid} AND s.attempt_counted
      ORDER BY s.submitted_at DESC LIMIT 1`,
      decodeLatest
    )
    const latest = rows[0]
    if (latest === undefined) return false
    return policy === "per_attempt" || (latest.passed === false && ["graded", "revision_requested"].includes(latest.status))
  })

/** `variants.issue`: the current variant (issuing the first of a pool step), or a new one when `reissue` and the policy allow. */
export const issueVariant = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: { readonly requestUuid: string; readonly reissue?: boolean | undefined }) =>
  once(actor, "learning.variants.issue", input, Variant, Effect.gen(function*() {
    const step = yield* stepFor(actor, enrollmentUuid, nodeKey, { lock: true })
    yield* requireWorkable(step)
    const mode = step.node.variants?.mode ?? "none"
    if (mode === "none") return yield* new InvalidState({ message: "This step has no variants" })
    const current = yield* currentVariant(enrollmentUuid, nodeKey)
    let issued: VariantRow
    if (current === undefined) {
      if (mode === "generated") return yield* new InvalidState({ message: "This step's variants are generated: ask for one (generated-variants)" })
      issued = yield* issueFromPool(step)
    } else if (input.reissue === true) {
      if (!(yield* reissueAllowed(step.node, current))) {
        return yield* new InvalidState({ message: `The step's reissue policy (${step.node.variants?.reissue ?? "never"}) does not allow a new variant now` })
      }
      if (mode === "generated") return yield* new InvalidState({ message: "A new generated variant comes from the generator (generated-variants)" })
      issued = yield* issueFromPool(step, current.pool_index ?? undefined)
    } else issued = current
    yield* recordStepProgress(enrollmentUuid, nodeKey, "in_progress")
    return variantView(issued)
  }))
