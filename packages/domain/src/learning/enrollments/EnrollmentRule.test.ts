import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { BirzhaApi } from "../../api/BirzhaApi.js"
import { catalogOf, currentOperation } from "../../kernel/Operation.js"
import { enrollmentRuleOf, runningEnrollmentRule } from "./EnrollmentRule.js"

const catalog = catalogOf(BirzhaApi)
const entry = (id: string) => catalog.find((candidate) => candidate.id === id)!

describe("an enrollment rule lives on its operation's declaration", () => {
  it("every operation acting on one learner's enrollment declares who may (its learner, staff, an atom)", () => {
    // Operations addressed by an enrollment, or by a submission or grading job of one (the learner's records).
    const onEnrollment = catalog.filter((candidate) =>
      /^\/api\/v1\/learning\/(enrollments\/\{enrollment\}|submissions\/\{submission\}(\/(cancel|appeals))?$|grading-jobs\/)/.test(candidate.path) &&
      !candidate.path.includes("/reviews") // review assignments carry their own reviewer rules (reviews/)
    )
    expect(onEnrollment.length).toBeGreaterThan(20)
    const undeclared = onEnrollment.filter((candidate) => enrollmentRuleOf(candidate.annotations) === undefined).map((candidate) => candidate.id)
    // These answer by their own rules, not `enrollmentFor`: the learner's export (courses/Jobs.ts),
    // course reviews and community threads (community/), open to fellow learners of the run.
    expect(undeclared.sort()).toEqual([
      "learning.community.create",
      "learning.community.list",
      "learning.course_reviews.own",
      "learning.course_reviews.remove",
      "learning.course_reviews.save",
      "learning.exports.enrollment"
    ])
  })

  it("the registry's running operation gives the rule its declaration carries", async () => {
    const ruleOf = (id: string) => Effect.runPromise(Effect.locally(runningEnrollmentRule, currentOperation, entry(id)))
    expect(await ruleOf("learning.extensions.create")).toEqual({ operationId: "learning.extensions.create", rule: { learner: true } })
    expect(await ruleOf("learning.enrollments.decide")).toEqual({
      operationId: "learning.enrollments.decide",
      rule: { learner: false, staff: { kind: "atom", atom: "roster_manage" } }
    })
  })

  it("checking an enrollment outside a declared operation is a defect, never an allowance", async () => {
    const outside = await Effect.runPromiseExit(runningEnrollmentRule)
    const undeclared = await Effect.runPromiseExit(Effect.locally(runningEnrollmentRule, currentOperation, entry("learning.courses.create")))
    for (const exit of [outside, undeclared]) {
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }
  })
})
