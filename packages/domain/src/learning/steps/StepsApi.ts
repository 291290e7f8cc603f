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
import { InvalidPublication, InvalidState, RateLimited, RequestConflict, RevisionConflict, wire } from "../../kernel/ApiError.js"
import { authenticated, recordErrors } from "../../kernel/Operation.js"
import { field } from "../../kernel/Common.js"
import { EnrollmentAccess, learnerOnly, learnerOrStaff } from "../enrollments/EnrollmentRule.js"

/**
 * The learner's step and submission operations of learning L2: the
 * step view at the pinned version, acknowledgements, drafts, submissions and their attempts,
 * variants (pool and generated), sample runs, demo tries and their application, and portfolio
 * drafts from accepted work. Ids, paths, scopes and approval flags as
 * the role matrix (`learning/RoleMatrix.test.ts`) expects them.
 */
const base = "/api/v1/learning"
const Enrollment = field(Schema.UUID, "The enrollment's uuid (from learning.enrollments.list).")
const StepPath = Schema.Struct({
  enrollment: Enrollment,
  node: field(NodeKey, "The step's nodeKey in the course tree (from the enrollment's outline).")
})
const EnrollmentPath = Schema.Struct({ enrollment: Enrollment })
const SubmissionPath = Schema.Struct({ submission: field(Schema.UUID, "The submission's uuid (from submitting or the step's history).") })
const JobPath = Schema.Struct({ job: Schema.UUID })

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
    authenticated("GET", "learning.steps.get", `${base}/enrollments/:enrollment/steps/:node`, {
      scopes: read,
      summary: "A step at the enrollment's pinned version: content once available, dates, attempts left, the variant's dataset, the draft, the last submission"
    }, [recordErrors]).annotate(EnrollmentAccess, learnerOrStaff).setPath(StepPath).addSuccess(StepView)
  )
  .add(
    authenticated("POST", "learning.steps.acknowledge", `${base}/enrollments/:enrollment/steps/:node/acknowledge`, {
      scopes: study,
      summary: "Mark an ungraded step done (module and course completion follow)"
    }, [recordErrors, wire(StepLocked), wire(InvalidState), wire(RequestConflict)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(StepPath)
      .setPayload(StepCommand)
      .addSuccess(AcknowledgedStep)
  )
  .add(
    authenticated("PUT", "learning.drafts.save", `${base}/enrollments/:enrollment/steps/:node/draft`, {
      scopes: study,
      summary: "Autosave the reply draft (never a submission; costs no attempt)"
    }, [recordErrors, wire(StepLocked), wire(InvalidState), wire(RevisionConflict), wire(RequestConflict)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(StepPath)
      .setPayload(DraftSave)
      .addSuccess(Draft)
  )
  .add(
    authenticated("POST", "learning.submissions.create", `${base}/enrollments/:enrollment/steps/:node/submit`, {
      scopes: study,
      approval: true,
      summary: "Submit an attempt: pins version, node and variant; declarative checks grade at once, others wait for grading or review"
    }, [recordErrors, attemptErrors])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(StepPath)
      .setPayload(SubmissionCreate)
      .addSuccess(Submission)
  )
  .add(
    authenticated("GET", "learning.submissions.history", `${base}/enrollments/:enrollment/steps/:node/submissions`, {
      scopes: read,
      summary: "The learner's submissions on the step, newest first"
    }, [recordErrors]).annotate(EnrollmentAccess, learnerOrStaff).setPath(StepPath).setUrlParams(SubmissionHistoryQuery).addSuccess(SubmissionPage)
  )
  .add(
    authenticated("GET", "learning.submissions.get", `${base}/submissions/:submission`, {
      scopes: read,
      summary: "A submission with its effective score and layers (the learner sees released layers only)"
    }, [recordErrors]).annotate(EnrollmentAccess, learnerOrStaff).setPath(SubmissionPath).addSuccess(Submission)
  )
  .add(
    authenticated("POST", "learning.submissions.cancel", `${base}/submissions/:submission/cancel`, {
      scopes: study,
      approval: true,
      summary: "Cancel a submission before it is graded; its attempt is refunded"
    }, [recordErrors, wire(InvalidState), wire(RevisionConflict), wire(RequestConflict)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(SubmissionPath)
      .setPayload(SubmissionCancel)
      .addSuccess(Submission)
  )
  .add(
    authenticated("POST", "learning.variants.issue", `${base}/enrollments/:enrollment/steps/:node/variant`, {
      scopes: study,
      summary: "The learner's variant of the step (its dataset only), or a new one when the node's reissue policy allows"
    }, [recordErrors, wire(StepLocked), wire(InvalidState), wire(RequestConflict)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(StepPath)
      .setPayload(VariantIssue)
      .addSuccess(Variant)
  )
  .add(
    authenticated("GET", "learning.generated_variants.state", `${base}/enrollments/:enrollment/steps/:node/generated-variants`, {
      scopes: read,
      summary: "The state of the step's variant generation: none, pending, ready or failed"
    }, [recordErrors]).annotate(EnrollmentAccess, learnerOnly).setPath(StepPath).addSuccess(GenerationState)
  )
  .add(
    authenticated("POST", "learning.generated_variants.create", `${base}/enrollments/:enrollment/steps/:node/generated-variants`, {
      scopes: study,
      summary: "Ask the step's external generator for a variant (a signed call, run as a job); 5 a day per step"
    }, [recordErrors, checkerCallErrors])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(StepPath)
      .setPayload(StepCommand)
      .addSuccess(GradingJob)
  )
  .add(
    authenticated("GET", "learning.generated_variants.get", `${base}/generated-variants/:job`, {
      scopes: read,
      summary: "A generation job; the dataset once ready (the clue is never shown)"
    }, [recordErrors]).annotate(EnrollmentAccess, learnerOnly).setPath(JobPath).addSuccess(GradingJob)
  )
  .add(
    authenticated("POST", "learning.sample_runs.create", `${base}/enrollments/:enrollment/steps/:node/sample-runs`, {
      scopes: study,
      summary: "Run the reply on the checker's public sample cases: no score, no attempt; 30 an hour per step"
    }, [recordErrors, checkerCallErrors])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(StepPath)
      .setPayload(SampleRunCreate)
      .addSuccess(GradingJob)
  )
  .add(
    authenticated("GET", "learning.sample_runs.get", `${base}/sample-runs/:job`, { scopes: read, summary: "A sample run and its result" }, [recordErrors])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(JobPath)
      .addSuccess(GradingJob)
  )
  .add(
    authenticated("POST", "learning.demo.apply", `${base}/enrollments/:enrollment/steps/:node/apply-demo`, {
      scopes: study,
      approval: true,
      summary: "Turn the caller's demo attempt into a submission of this enrollment (same version and variant; consumes an attempt)"
    }, [recordErrors, attemptErrors])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(StepPath)
      .setPayload(DemoApply)
      .addSuccess(Submission)
  )
  .add(
    authenticated("POST", "learning.demo.try", `${base}/courses/:course/steps/:node/demo`, {
      scopes: study,
      summary: "Try a demo step of the published version without enrolling (graded, nothing counted); 20 a day per step"
    }, [recordErrors, wire(NotEligible), wire(RateLimited), wire(RequestConflict)])
      .setPath(Schema.Struct({ course: Schema.UUID, node: NodeKey }))
      .setPayload(DemoTry)
      .addSuccess(DemoAttempt)
  )
  .add(
    authenticated("GET", "learning.demo.progress", `${base}/courses/:course/demo-progress`, {
      scopes: read,
      summary: "The caller's demo attempts in the course, newest first"
    }, [recordErrors]).setPath(Schema.Struct({ course: Schema.UUID })).addSuccess(DemoProgress)
  )
  .add(
    authenticated("POST", "learning.portfolio.create", `${base}/enrollments/:enrollment/portfolio-drafts`, {
      scopes: study,
      summary: "A private marketplace portfolio draft of the learner's profile from 1 to 10 accepted submissions (as portfolio.save)"
    }, [recordErrors, wire(InvalidState), wire(InvalidPublication), wire(RequestConflict)])
      .annotate(EnrollmentAccess, learnerOnly)
      .setPath(EnrollmentPath)
      .setPayload(PortfolioCreate)
      .addSuccess(kinds.portfolio.own)
  )
  .annotate(OpenApi.Description, "Learning: steps, drafts, submissions and attempts, variants, sample runs, demo tries, portfolio drafts")
