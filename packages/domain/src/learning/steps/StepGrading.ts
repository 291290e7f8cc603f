import { Schema } from "effect"
import { AnyJson, strict } from "../../kernel/Common.js"
import { DeclarativeRule, ruleProblem } from "../grading/Declarative.js"

/**
 * What a step's node says about grading its replies and issuing variants,
 * beyond L1's points, threshold and attempts:
 * - `check`: the step's declarative checker, graded inline at submit (Declarative.ts);
 * - `checkerUuid`: an external checker: the submission waits in the grading queue;
 * - `review`: staff, peer or self review after (or instead of) the check: the submission waits for review;
 * - `latePolicy`: after the effective due date, `accept` (marked late, the default), `refuse`
 *   (409 `deadline_passed`) or `penalty` (accepted, the points reduced by `penaltyPercent`);
 * - `selection`: which submission's score is the step's, the last or the best.
 * `variants`: per-learner datasets from a pool (deterministic by enrollment and attempt) or an
 * external generator; `reissue` says when a learner may get a new one.
 */

export const ReviewMode = Schema.Literal("none", "staff", "peer", "self")

export const StepReview = Schema.Struct({
  mode: ReviewMode,
  count: Schema.optional(Schema.Int.pipe(Schema.between(1, 5))),
  /** Moderated grading: reviewers' decisions are provisional; an owner or instructor decides the final one. */
  moderated: Schema.optional(Schema.Boolean),
  /** `auto` (default): a final decision is released at once; `manual`: `reviews.release` publishes it. */
  release: Schema.optional(Schema.Literal("auto", "manual")),
  /** Hours a claim lasts before it is overdue (default 48). */
  dueHours: Schema.optional(Schema.Int.pipe(Schema.between(1, 720)))
}).annotations({ identifier: "LearningStepReview", ...strict })

export const LatePolicy = Schema.Struct({
  mode: Schema.Literal("accept", "refuse", "penalty"),
  penaltyPercent: Schema.optional(Schema.Int.pipe(Schema.between(0, 100)))
}).annotations({ identifier: "LearningLatePolicy", ...strict })
export type LatePolicy = typeof LatePolicy.Type

export const StepGradingFields = {
  check: Schema.optional(DeclarativeRule),
  checkerUuid: Schema.optional(Schema.UUID),
  review: Schema.optional(StepReview),
  latePolicy: Schema.optional(LatePolicy),
  selection: Schema.optional(Schema.Literal("last", "best"))
}

export const maxPoolSize = 100

export const PoolVariant = Schema.Struct({
  /** What the learner sees. */
  dataset: AnyJson,
  /** Server-only: the expected values the checker receives; never shown to the learner. */
  clue: Schema.optional(AnyJson)
}).annotations({ identifier: "LearningPoolVariant", ...strict })

export const NodeVariants = Schema.Struct({
  mode: Schema.Literal("none", "pool", "generated"),
  reissue: Schema.optional(Schema.Literal("never", "per_attempt", "after_fail")),
  pool: Schema.optional(Schema.Array(PoolVariant).pipe(Schema.maxItems(maxPoolSize)))
}).annotations({ identifier: "LearningNodeVariants", ...strict })
export type NodeVariants = typeof NodeVariants.Type

/** The subset of a node this file judges. */
interface GradedNode {
  readonly kind: "module" | "step"
  readonly grading?: { readonly check?: DeclarativeRule | undefined; readonly checkerUuid?: string | undefined } | undefined
  readonly variants?: NodeVariants | undefined
}

/** A node's first grading or variant problem (`<path>.<field>: message`), checked whenever a tree is saved. */
export const stepGradingProblem = (node: GradedNode, path: string): string | undefined => {
  if (node.kind === "module" && node.variants !== undefined) return `${path}.variants: a module has no variants; only steps do`
  const check = node.grading?.check
  if (check !== undefined) {
    if (node.grading?.checkerUuid !== undefined) return `${path}.grading.checkerUuid: a step has either a declarative check or an external checker`
    const problem = ruleProblem(check, `${path}.grading.check`)
    if (problem !== undefined) return problem
  }
  const variants = node.variants
  if (variants?.mode === "pool" && (variants.pool === undefined || variants.pool.length === 0)) {
    return `${path}.variants.pool: a pool of 1 to ${maxPoolSize} variants`
  }
  if (variants?.mode === "generated" && node.grading?.checkerUuid === undefined) {
    return `${path}.variants.mode: generated variants come from the step's external checker (grading.checkerUuid)`
  }
  return undefined
}
