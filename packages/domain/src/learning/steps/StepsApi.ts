import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AttemptsExhausted, CheckerNotReady, DeadlinePassed, NotEligible, StepLocked } from "../LearningErrors.js"
import { NodeKey } from "../courses/Model.js"
import {
  AcknowledgedStep,
  DemoApply,
  DemoAttempt,
  DemoProgress,
  DemoTry,
  Draft,
  DraftSave,
  GenerationState,
  GradingJob,
  PortfolioCreate,
  SampleRunCreate,
  StepCommand,
  StepView,
  Submission,
  SubmissionCancel,
  SubmissionCreate,
  SubmissionHistoryQuery,
  SubmissionPage,
  Variant,
  VariantIssue
} from "./StepModel.js"
import { kinds } from "../../publications/Kinds.js"
import { Forbidden, InvalidPublication, InvalidState, NotFound, RateLimited, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { Authentication } from "../../kernel/Authentication.js"
import { operation } from "../../kernel/Operation.js"

/**
 * The learner's step and submission operations of learning L2 (LEARNING §4 "L2", issue 17): the
 * step view at the pinned version, acknowledgements, drafts, submissions and their attempts,
 * variants (pool and generated), sample runs, demo tries and their application, and portfolio
 * drafts from accepted work. Ids, paths, scopes and approval flags as §4 gives them.
 */
const base = "/api/v1/learning"
const StepPath = Schema.Struct({ enrollment: Schema.UUID, node: NodeKey })
const EnrollmentPath = Schema.Struct({ enrollment: Schema.UUID })
const SubmissionPath = Schema.Struct({ submission: Schema.UUID })
const JobPath = Schema.Struct({ job: Schema.UUID })

const recordErrors = Schema.Union(wire(NotFound), wire(Forbidden))
/** What an attempt (a submission, an applied demo try) can be refused for. */
const attemptErrors = Schema.Union(
  wire(StepLocked),
  wire(AttemptsExhausted),
  wire(DeadlinePassed),
  wire(InvalidState),
  wire(RevisionConflict),
  wire(RequestConflict)
)
/** What a call to the step's external checker (a sample run, a generation) can be refused for. */
const checkerCallErrors = Schema.Union(wire(CheckerNotReady), wire(StepLocked), wire(InvalidState), wire(RateLimited), wire(RequestConflict))
const read = ["learning:read"]
const study = ["learning:study"]

export const LearningStepsApi = HttpApiGroup.make("learning_steps", { topLevel: true })
  .add(
    operation("GET", "learning.steps.get", `${base}/enrollments/:enrollment/steps/:node`, {
      scopes: read,
      summary: "A step at the enrollment's pinned version: content once available, dates, attempts left, the variant's dataset, the draft, the last submission"
    }).middleware(Authentication).setPath(StepPath).addSuccess(StepView).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.steps.acknowledge", `${base}/enrollments/:enrollment/steps/:node/acknowledge`, {
      scopes: study,
      summary: "Mark an ungraded step done (module and course completion follow)"
    })
      .middleware(Authentication)
      .setPath(StepPath)
      .setPayload(StepCommand)
      .addSuccess(AcknowledgedStep)
      .addError(recordErrors)
      .addError(wire(StepLocked))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("PUT", "learning.drafts.save", `${base}/enrollments/:enrollment/steps/:node/draft`, {
      scopes: study,
      summary: "Autosave the reply draft (never a submission; costs no attempt)"
    })
      .middleware(Authentication)
      .setPath(StepPath)
      .setPayload(DraftSave)
      .addSuccess(Draft)
      .addError(recordErrors)
      .addError(wire(StepLocked))
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.submissions.create", `${base}/enrollments/:enrollment/steps/:node/submit`, {
      scopes: study,
      approval: true,
      summary: "Submit an attempt: pins version, node and variant; declarative checks grade at once, others wait for grading or review"
    })
      .middleware(Authentication)
      .setPath(StepPath)
      .setPayload(SubmissionCreate)
      .addSuccess(Submission)
      .addError(recordErrors)
      .addError(attemptErrors)
  )
  .add(
    operation("GET", "learning.submissions.history", `${base}/enrollments/:enrollment/steps/:node/submissions`, {
      scopes: read,
      summary: "The learner's submissions on the step, newest first"
    }).middleware(Authentication).setPath(StepPath).setUrlParams(SubmissionHistoryQuery).addSuccess(SubmissionPage).addError(recordErrors)
  )
  .add(
    operation("GET", "learning.submissions.get", `${base}/submissions/:submission`, {
      scopes: read,
      summary: "A submission with its effective score and layers (the learner sees released layers only)"
    }).middleware(Authentication).setPath(SubmissionPath).addSuccess(Submission).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.submissions.cancel", `${base}/submissions/:submission/cancel`, {
      scopes: study,
      approval: true,
      summary: "Cancel a submission before it is graded; its attempt is refunded"
    })
      .middleware(Authentication)
      .setPath(SubmissionPath)
      .setPayload(SubmissionCancel)
      .addSuccess(Submission)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(RevisionConflict))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("POST", "learning.variants.issue", `${base}/enrollments/:enrollment/steps/:node/variant`, {
      scopes: study,
      summary: "The learner's variant of the step (its dataset only), or a new one when the node's reissue policy allows"
    })
      .middleware(Authentication)
      .setPath(StepPath)
      .setPayload(VariantIssue)
      .addSuccess(Variant)
      .addError(recordErrors)
      .addError(wire(StepLocked))
      .addError(wire(InvalidState))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.generated_variants.state", `${base}/enrollments/:enrollment/steps/:node/generated-variants`, {
      scopes: read,
      summary: "The state of the step's variant generation: none, pending, ready or failed"
    }).middleware(Authentication).setPath(StepPath).addSuccess(GenerationState).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.generated_variants.create", `${base}/enrollments/:enrollment/steps/:node/generated-variants`, {
      scopes: study,
      summary: "Ask the step's external generator for a variant (a signed call, run as a job); 5 a day per step"
    })
      .middleware(Authentication)
      .setPath(StepPath)
      .setPayload(StepCommand)
      .addSuccess(GradingJob)
      .addError(recordErrors)
      .addError(checkerCallErrors)
  )
  .add(
    operation("GET", "learning.generated_variants.get", `${base}/generated-variants/:job`, {
      scopes: read,
      summary: "A generation job; the dataset once ready (the clue is never shown)"
    }).middleware(Authentication).setPath(JobPath).addSuccess(GradingJob).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.sample_runs.create", `${base}/enrollments/:enrollment/steps/:node/sample-runs`, {
      scopes: study,
      summary: "Run the reply on the checker's public sample cases: no score, no attempt; 30 an hour per step"
    })
      .middleware(Authentication)
      .setPath(StepPath)
      .setPayload(SampleRunCreate)
      .addSuccess(GradingJob)
      .addError(recordErrors)
      .addError(checkerCallErrors)
  )
  .add(
    operation("GET", "learning.sample_runs.get", `${base}/sample-runs/:job`, { scopes: read, summary: "A sample run and its result" })
      .middleware(Authentication)
      .setPath(JobPath)
      .addSuccess(GradingJob)
      .addError(recordErrors)
  )
  .add(
    operation("POST", "learning.demo.apply", `${base}/enrollments/:enrollment/steps/:node/apply-demo`, {
      scopes: study,
      approval: true,
      summary: "Turn the caller's demo attempt into a submission of this enrollment (same version and variant; consumes an attempt)"
    })
      .middleware(Authentication)
      .setPath(StepPath)
      .setPayload(DemoApply)
      .addSuccess(Submission)
      .addError(recordErrors)
      .addError(attemptErrors)
  )
  .add(
    operation("POST", "learning.demo.try", `${base}/courses/:course/steps/:node/demo`, {
      scopes: study,
      summary: "Try a demo step of the published version without enrolling (graded, nothing counted); 20 a day per step"
    })
      .middleware(Authentication)
      .setPath(Schema.Struct({ course: Schema.UUID, node: NodeKey }))
      .setPayload(DemoTry)
      .addSuccess(DemoAttempt)
      .addError(recordErrors)
      .addError(wire(NotEligible))
      .addError(wire(RateLimited))
      .addError(wire(RequestConflict))
  )
  .add(
    operation("GET", "learning.demo.progress", `${base}/courses/:course/demo-progress`, {
      scopes: read,
      summary: "The caller's demo attempts in the course, newest first"
    }).middleware(Authentication).setPath(Schema.Struct({ course: Schema.UUID })).addSuccess(DemoProgress).addError(recordErrors)
  )
  .add(
    operation("POST", "learning.portfolio.create", `${base}/enrollments/:enrollment/portfolio-drafts`, {
      scopes: study,
      summary: "A private marketplace portfolio draft of the learner's profile from 1 to 10 accepted submissions (as portfolio.save)"
    })
      .middleware(Authentication)
      .setPath(EnrollmentPath)
      .setPayload(PortfolioCreate)
      .addSuccess(kinds.portfolio.own)
      .addError(recordErrors)
      .addError(wire(InvalidState))
      .addError(wire(InvalidPublication))
      .addError(wire(RequestConflict))
  )
  .annotate(OpenApi.Description, "Learning: steps, drafts, submissions and attempts, variants, sample runs, demo tries, portfolio drafts")
