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
import { InvalidState, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { authenticated, recordErrors } from "../../kernel/Operation.js"

/**
 * Checkers and grading of learning L3: checker
 * versions, preflights against reference cases, suspend and resume with their control history,
 * a grading job's diagnostics (secrets redacted), usage per checker, kind and day, and regrades
 * (dry-run re-execution of a checker version, then apply as regrade layers). Ids,
 * paths, scopes and approval flags as the role matrix (`learning/RoleMatrix.test.ts`) expects them.
 */
const base = "/api/v1/learning"
const CoursePath = Schema.Struct({ course: Schema.UUID })
const CheckerPath = Schema.Struct({ course: Schema.UUID, checker: Schema.UUID })
const JobPath = Schema.Struct({ course: Schema.UUID, job: Schema.UUID })
const RegradePath = Schema.Struct({ course: Schema.UUID, regrade: Schema.UUID })

const read = ["learning:read"]
const write = ["learning:write"]
const grade = ["learning:grade"]

export const LearningGradingApi = HttpApiGroup.make("learning_grading", { topLevel: true })
  .add(
    authenticated("GET", "learning.checkers.list", `${base}/courses/:course/checkers`, { scopes: read, summary: "The course's checkers with their versions and status" }, [recordErrors]).setPath(CoursePath).setUrlParams(CheckerListQuery).addSuccess(CheckerPage)
  )
  .add(
    authenticated("GET", "learning.checkers.get", `${base}/courses/:course/checkers/:checker`, { scopes: read, summary: "One checker version (the secret is never returned)" }, [recordErrors]).setPath(CheckerPath).addSuccess(Checker)
  )
  .add(
    authenticated("POST", "learning.checkers.create", `${base}/courses/:course/checkers`, {
      scopes: write,
      summary: "A new checker, or with `replaces` the next immutable version of a lineage: declarative rules or an external HTTPS grader"
    }, [recordErrors, wire(RequestConflict)]).setPath(CoursePath).setPayload(CheckerCreate).addSuccess(Checker)
  )
  .add(
    authenticated("POST", "learning.checkers.preflight", `${base}/courses/:course/checkers/:checker/preflight`, {
      scopes: write,
      summary: "Run the checker against its reference cases (correct ones must be accepted, wrong ones not) through signed calls"
    }, [recordErrors, wire(InvalidState), wire(RequestConflict)])
      .setPath(CheckerPath)
      .setPayload(CheckerPreflight)
      .addSuccess(GradingJob)
  )
  .add(
    authenticated("GET", "learning.preflights.get", `${base}/courses/:course/preflights/:job`, { scopes: read, summary: "A preflight's result per reference case" }, [recordErrors]).setPath(JobPath).addSuccess(PreflightResult)
  )
  .add(
    authenticated("POST", "learning.checkers.resume", `${base}/courses/:course/checkers/:checker/resume`, {
      scopes: grade,
      approval: true,
      summary: "Resume dispatch of a suspended checker; its queued submissions proceed"
    }, [recordErrors, wire(CheckerNotReady), wire(InvalidState), wire(RevisionConflict), wire(RequestConflict)])
      .setPath(CheckerPath)
      .setPayload(CheckerControl)
      .addSuccess(Checker)
  )
  .add(
    authenticated("POST", "learning.checkers.suspend", `${base}/courses/:course/checkers/:checker/suspend`, {
      scopes: grade,
      summary: "Stop dispatch to a checker; submissions keep queueing"
    }, [recordErrors, wire(InvalidState), wire(RevisionConflict), wire(RequestConflict)])
      .setPath(CheckerPath)
      .setPayload(CheckerControl)
      .addSuccess(Checker)
  )
  .add(
    authenticated("GET", "learning.checkers.control_history", `${base}/courses/:course/checkers/:checker/control-history`, {
      scopes: read,
      summary: "Suspend, resume, automatic suspension and preflight log with actor and reason"
    }, [recordErrors]).setPath(CheckerPath).setUrlParams(PageQuery).addSuccess(ControlEventPage)
  )
  .add(
    authenticated("GET", "learning.grading.diagnostics", `${base}/courses/:course/grading-jobs/:job/diagnostics`, {
      scopes: read,
      summary: "A grading job's internals: tries, latency, HTTP status, key id, truncated answer, verdict mapping (no secrets)"
    }, [recordErrors]).setPath(JobPath).addSuccess(Diagnostics)
  )
  .add(
    authenticated("GET", "learning.grading.usage", `${base}/courses/:course/grading-usage`, {
      scopes: read,
      summary: "Grading calls, latency and error rate per checker, kind and day"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(UsageQuery).addSuccess(Usage)
  )
  .add(
    authenticated("GET", "learning.regrades.candidates", `${base}/courses/:course/regrade-candidates`, {
      scopes: read,
      summary: "Submissions graded by a superseded checker version, or whose check failed"
    }, [recordErrors]).setPath(CoursePath).setUrlParams(RegradeCandidateQuery).addSuccess(RegradeCandidatePage)
  )
  .add(
    authenticated("POST", "learning.regrades.create", `${base}/courses/:course/regrades`, {
      scopes: grade,
      summary: "Dry-run re-execution of selected submissions with a chosen checker version (no score changes until applied)"
    }, [recordErrors, wire(CheckerNotReady), wire(RequestConflict)])
      .setPath(CoursePath)
      .setPayload(RegradeCreate)
      .addSuccess(Regrade)
  )
  .add(
    authenticated("GET", "learning.regrades.get", `${base}/courses/:course/regrades/:regrade`, { scopes: read, summary: "A regrade's progress and its items old → new" }, [recordErrors]).setPath(RegradePath).setUrlParams(RegradeQuery).addSuccess(Regrade)
  )
  .add(
    authenticated("POST", "learning.regrades.apply", `${base}/courses/:course/regrades/:regrade/apply`, {
      scopes: grade,
      approval: true,
      summary: "Commit the regrade's new results (all or a subset) as regrade score layers; frozen items are skipped and listed"
    }, [recordErrors, wire(PlanStale), wire(PlanExpired), wire(GradeFrozen), wire(InvalidState), wire(RequestConflict)])
      .setPath(RegradePath)
      .setPayload(RegradeApply)
      .addSuccess(Regrade)
  )
