import { HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import {
  Checker,
  CheckerControl,
  CheckerCreate,
  CheckerListQuery,
  CheckerPage,
  CheckerPreflight,
  ControlEventPage,
  Diagnostics,
  PreflightResult,
  Regrade,
  RegradeApply,
  RegradeCandidatePage,
  RegradeCandidateQuery,
  RegradeCreate,
  RegradeQuery,
  Usage,
  UsageQuery
} from "./GradingModel.js"
import { CheckerNotReady, GradeFrozen, PlanExpired, PlanStale } from "../LearningErrors.js"
import { PageQuery } from "../courses/Model.js"
import { GradingJob } from "../steps/StepModel.js"
import { Forbidden, InvalidState, NotFound, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { Authentication } from "../../kernel/Authentication.js"
import { operation } from "../../kernel/Operation.js"

/**
 * Checkers and grading of learning L3 (LEARNING §4 "L3", issue 18 points 1 and 2): checker
 * versions, preflights against reference cases, suspend and resume with their control history,
 * a grading job's diagnostics (secrets redacted), usage per checker, kind and day, and regrades
 * (dry-run re-execution of a checker version, then apply as regrade layers). Ids,
 * paths, scopes and approval flags as §4 gives them.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const CheckerPath = Schema.Struct({ course: Schema.UUID, checker: Schema.UUID })
const JobPath = Schema.Struct({ course: Schema.UUID, job: Schema.UUID })
const RegradePath = Schema.Struct({ course: Schema.UUID, regrade: Schema.UUID })

const recordErrors = Schema.Union(wire(NotFound), wire(Forbidden))
const read = ["learning:read"]
const write = ["learning:write"]
const grade = ["learning:grade"]

export const LearningGradingApi = HttpApiGroup.make("learning_grading", { topLevel: true })
  .add(
    operation("GET", "learning.checkers.list", `${base}/courses/:course/checkers`, { scopes: read, summary: "The course's checkers with their versions and status" })
      .middleware(Authentication).setPath(CoursePath).setUrlParams(CheckerListQuery).addSuccess(CheckerPage).addError(recordErrors)
  )
  .add(
    operation("GET", "learning.checkers.get", `${base}/courses/:course/checkers/:checker`, { scopes: read, summary: "One checker version (the secret is never returned)" })
      .middleware(Authentication).setPath(CheckerPath).addSuccess(Checker).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.checkers.create", `${base}/courses/:course/checkers`, {
      scopes: write,
      summary: "A new checker, or with `replaces` the next immutable version of a lineage: declarative rules or an external HTTPS grader"
    }).middleware(Authentication).setPath(CoursePath).setPayload(CheckerCreate).addSuccess(Checker).addError(recordErrors).addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.checkers.preflight", `${base}/courses/:course/checkers/:checker/preflight`, {
      scopes: write,
      summary: "Run the checker against its reference cases (correct ones must be accepted, wrong ones not) through signed calls"
    })
      .middleware(Authentication)
      .setPath(CheckerPath)
      .setPayload(CheckerPreflight)
      .addSuccess(GradingJob)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.preflights.get", `${base}/courses/:course/preflights/:job`, { scopes: read, summary: "A preflight's result per reference case" })
      .middleware(Authentication).setPath(JobPath).addSuccess(PreflightResult).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.checkers.resume", `${base}/courses/:course/checkers/:checker/resume`, {
      scopes: grade,
      approval: true,
      summary: "Resume dispatch of a suspended checker; its queued submissions proceed"
    })
      .middleware(Authentication)
      .setPath(CheckerPath)
      .setPayload(CheckerControl)
      .addSuccess(Checker)
      .addError(recordErrors)
      .addError(wire(CheckerNotReady))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.checkers.suspend", `${base}/courses/:course/checkers/:checker/suspend`, {
      scopes: grade,
      summary: "Stop dispatch to a checker; submissions keep queueing"
    })
      .middleware(Authentication)
      .setPath(CheckerPath)
      .setPayload(CheckerControl)
      .addSuccess(Checker)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.checkers.control_history", `${base}/courses/:course/checkers/:checker/control-history`, {
      scopes: read,
      summary: "Suspend, resume, automatic suspension and preflight log with actor and reason"
    }).middleware(Authentication).setPath(CheckerPath).setUrlParams(PageQuery).addSuccess(ControlEventPage).addError(recordErrors)
  )
  .add(
    operation("GET", "learning.grading.diagnostics", `${base}/courses/:course/grading-jobs/:job/diagnostics`, {
      scopes: read,
      summary: "A grading job's internals: tries, latency, HTTP status, key id, truncated answer, verdict mapping (no secrets)"
    }).middleware(Authentication).setPath(JobPath).addSuccess(Diagnostics).addError(recordErrors)
  )
  .add(
    operation("GET", "learning.grading.usage", `${base}/courses/:course/grading-usage`, {
      scopes: read,
      summary: "Grading calls, latency and error rate per checker, kind and day"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(UsageQuery).addSuccess(Usage).addError(recordErrors)
  )
  .add(
    operation("GET", "learning.regrades.candidates", `${base}/courses/:course/regrade-candidates`, {
      scopes: read,
      summary: "Submissions graded by a superseded checker version, or whose check failed"
    }).middleware(Authentication).setPath(CoursePath).setUrlParams(RegradeCandidateQuery).addSuccess(RegradeCandidatePage).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.regrades.create", `${base}/courses/:course/regrades`, {
      scopes: grade,
      summary: "Dry-run re-execution of selected submissions with a chosen checker version (no score changes until applied)"
    })
      .middleware(Authentication)
      .setPath(CoursePath)
      .setPayload(RegradeCreate)
      .addSuccess(Regrade)
      .addError(recordErrors)
      .addError(wire(CheckerNotReady))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.regrades.get", `${base}/courses/:course/regrades/:regrade`, { scopes: read, summary: "A regrade's progress and its items old → new" })
      .middleware(Authentication).setPath(RegradePath).setUrlParams(RegradeQuery).addSuccess(Regrade).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.regrades.apply", `${base}/courses/:course/regrades/:regrade/apply`, {
      scopes: grade,
      approval: true,
      summary: "Commit the regrade's new results (all or a subset) as regrade score layers; frozen items are skipped and listed"
    })
      .middleware(Authentication)
      .setPath(RegradePath)
      .setPayload(RegradeApply)
      .addSuccess(Regrade)
      .addError(recordErrors)
      .addError(wire(PlanStale))
      .addError(wire(PlanExpired))
      .addError(wire(GradeFrozen))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
