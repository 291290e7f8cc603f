import { Context, Effect, FiberRef, Option } from "effect"
import { currentOperation } from "../../kernel/Operation.js"
import type { Atom } from "../Permissions.js"

/**
 * Who may act on one enrollment: its learner (`S`) and course staff in scope of its run. Every
 * operation under `/enrollments/{enrollment}` (and those reaching an enrollment through a
 * submission or job) declares its rule on its declaration, `.annotate(EnrollmentAccess, rule)`;
 * `enrollmentFor` (EnrollmentAccess.ts) reads the rule of the operation running.
 */

/** What staff need for an operation on an enrollment: any staff in scope of the run, or an atom. */
export type StaffRequirement = { readonly kind: "staff" } | { readonly kind: "atom"; readonly atom: Atom }

export interface EnrollmentRule {
  /** The enrollment's own learner may do it. */
  readonly learner: boolean
  /** What a staff member (scoped to the run) needs; absent: staff may not (403). */
  readonly staff?: StaffRequirement
}

/** The declaration's annotation: the operation acts on one enrollment under this rule. */
export class EnrollmentAccess extends Context.Tag("@birzha/domain/learning/EnrollmentAccess")<EnrollmentAccess, EnrollmentRule>() {}

/** The learner's own action: staff may not (403). */
export const learnerOnly: EnrollmentRule = { learner: true }
/** The learner and any staff member in scope of the run. */
export const learnerOrStaff: EnrollmentRule = { learner: true, staff: { kind: "staff" } }
/** Staff holding `atom` on the run; the learner too when `learner`. */
export const staffWith = (atom: Atom, options: { readonly learner: boolean }): EnrollmentRule => ({
  learner: options.learner,
  staff: { kind: "atom", atom }
})

/** The enrollment rule an operation's declaration carries, if any (by its catalog annotations). */
export const enrollmentRuleOf = (annotations: Context.Context<never>): EnrollmentRule | undefined =>
  Option.getOrUndefined(Context.getOption(annotations as Context.Context<EnrollmentAccess>, EnrollmentAccess))

/**
 * The running operation's id and rule (the registry sets `currentOperation` for every call). An
 * operation that checks an enrollment without declaring a rule is a programming error: it dies.
 */
export const runningEnrollmentRule: Effect.Effect<{ readonly operationId: string; readonly rule: EnrollmentRule }> = Effect.flatMap(
  FiberRef.get(currentOperation),
  (entry) => {
    const rule = entry === undefined ? undefined : enrollmentRuleOf(entry.annotations)
    return entry === undefined || rule === undefined
      ? Effect.dieMessage(`${entry?.id ?? "a call outside the registry"} checks an enrollment but declares no EnrollmentAccess rule`)
      : Effect.succeed({ operationId: entry.id, rule })
  }
)
