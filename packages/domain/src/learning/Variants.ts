import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { InvalidState } from "../api/ApiError.js"
import type { Actor } from "../api/Authentication.js"
import { once } from "./Courses.js"
import type { CourseNode } from "./Model.js"
import { Variant } from "./StepModel.js"
import { recordStepProgress } from "./StepStates.js"
import { requireWorkable, type StepContext, stepFor } from "./Steps.js"

/**
 * Variants (LEARNING §2.1 #11): a learner's dataset of a step, from the node's pool or from the
 * external generator. The dataset is shown; the clue stays on the server and only the checker
 * reads it. A pool variant is chosen deterministically from (profile, course, node, n), so the
 * same learner gets the same first variant in a demo try and in an enrollment (demo.apply needs
 * it), and a reissue picks a different index. `reissue`: never (default), per_attempt (after a
 * counted submission on the current one), after_fail (after a graded submission that did not pass).
 */

export interface VariantRow {
  readonly uuid: string
  readonly enrollment_uuid: string
  readonly node_key: string
  readonly n: number
  readonly source: "pool" | "generated"
  readonly pool_index: number | null
  readonly dataset: unknown
  readonly clue: unknown
  readonly status: "issued" | "retired"
  readonly created_at: Date
}

const variantColumns = "uuid, enrollment_uuid, node_key, n, source, pool_index, dataset, clue, status, created_at"

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
      sql<VariantRow>`SELECT ${sql.literal(variantColumns)} FROM learning_variants
        WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey} AND status = 'issued'`,
      (rows) => rows[0]
    ))

export const loadVariant = (uuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<VariantRow>`SELECT ${sql.literal(variantColumns)} FROM learning_variants WHERE uuid = ${uuid}`, (rows) => rows[0]))

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
    const [last] = yield* sql<{ n: number }>`SELECT coalesce(max(n), 0)::int AS n FROM learning_variants
      WHERE enrollment_uuid = ${enrollmentUuid} AND node_key = ${nodeKey}`
    const [row] = yield* sql<VariantRow>`INSERT INTO learning_variants (uuid, enrollment_uuid, node_key, n, source, pool_index, dataset, clue, job_uuid)
      VALUES (${crypto.randomUUID()}, ${enrollmentUuid}, ${nodeKey}, ${(last?.n ?? 0) + 1}, ${variant.source}, ${variant.poolIndex ?? null},
        ${JSON.stringify(variant.dataset ?? null)}::jsonb, ${JSON.stringify(variant.clue ?? null)}::jsonb, ${variant.jobUuid ?? null})
      RETURNING ${sql.literal(variantColumns)}`
    return row!
  })

/** A pool variant for the learner: the n-th by the deterministic choice, avoiding the index it replaces. */
const issueFromPool = (step: StepContext, avoid?: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pool = step.node.variants?.pool ?? []
    const [last] = yield* sql<{ n: number }>`SELECT coalesce(max(n), 0)::int AS n FROM learning_variants
      WHERE enrollment_uuid = ${step.enrollment.uuid} AND node_key = ${step.node.nodeKey}`
    const n = (last?.n ?? 0) + 1
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

/** Whether the node's reissue policy lets the learner replace the current variant now. */
const reissueAllowed = (node: CourseNode, current: VariantRow) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const policy = node.variants?.reissue ?? "never"
    if (policy === "never") return false
    const rows = yield* sql<{ status: string; passed: boolean | null }>`SELECT s.status,
        (SELECT l.passed FROM learning_score_layers l WHERE l.submission_uuid = s.uuid AND l.revoked_at IS NULL
          ORDER BY l.created_at DESC LIMIT 1) AS passed
      FROM learning_submissions s WHERE s.variant_uuid = ${current.uuid} AND s.attempt_counted
      ORDER BY s.submitted_at DESC LIMIT 1`
    const latest = rows[0]
    if (latest === undefined) return false
    return policy === "per_attempt" || (latest.passed === false && ["graded", "revision_requested"].includes(latest.status))
  })

/** `variants.issue`: the current variant (issuing the first of a pool step), or a new one when `reissue` and the policy allow. */
export const issueVariant = (actor: Actor, enrollmentUuid: string, nodeKey: string, input: { readonly requestUuid: string; readonly reissue?: boolean | undefined }) =>
  once(actor, "learning.variants.issue", input, Variant, Effect.gen(function*() {
    const step = yield* stepFor(actor, "learning.variants.issue", enrollmentUuid, nodeKey, { lock: true })
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
