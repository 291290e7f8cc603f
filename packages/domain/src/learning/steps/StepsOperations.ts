import { LearningStepsApi } from "./StepsApi.js"
import { implement } from "../../operations/Implementation.js"
import { createGeneration, createSampleRun, generationState, getCheckerJob } from "../grading/CheckerCalls.js"
import { applyDemo, demoProgress, tryDemo } from "./Demo.js"
import { createPortfolioDraft } from "./Portfolio.js"
import { answerLimits } from "./StepLimits.js"
import { acknowledgeStep, getStep, saveDraft } from "./Steps.js"
import { cancelSubmission, createSubmission } from "./Submissions.js"
import { getSubmission, submissionHistory } from "./SubmissionViews.js"
import { issueVariant } from "./Variants.js"

/** The learner's step and submission operations (learning L2) over their services. */
export const LearningStepsOperations = implement(LearningStepsApi)({
  "learning.steps.get": ({ path }, actor) => getStep(actor, path.enrollment, path.node),
  "learning.steps.acknowledge": ({ path, payload }, actor) => acknowledgeStep(actor, path.enrollment, path.node, payload),
  "learning.drafts.save": ({ path, payload }, actor) => saveDraft(actor, path.enrollment, path.node, payload),
  "learning.submissions.create": ({ path, payload }, actor) => createSubmission(actor, path.enrollment, path.node, payload),
  "learning.submissions.history": ({ path, urlParams }, actor) => submissionHistory(actor, path.enrollment, path.node, urlParams),
  "learning.submissions.get": ({ path }, actor) => getSubmission(actor, path.submission),
  "learning.submissions.cancel": ({ path, payload }, actor) => cancelSubmission(actor, path.submission, payload),
  "learning.variants.issue": ({ path, payload }, actor) => issueVariant(actor, path.enrollment, path.node, payload),
  "learning.generated_variants.state": ({ path }, actor) => generationState(actor, path.enrollment, path.node),
  "learning.generated_variants.create": ({ path, payload }, actor, call) => answerLimits(call, createGeneration(actor, path.enrollment, path.node, payload)),
  "learning.generated_variants.get": ({ path }, actor) => getCheckerJob(actor, "generate", path.job),
  "learning.sample_runs.create": ({ path, payload }, actor, call) => answerLimits(call, createSampleRun(actor, path.enrollment, path.node, payload)),
  "learning.sample_runs.get": ({ path }, actor) => getCheckerJob(actor, "sample_run", path.job),
  "learning.demo.apply": ({ path, payload }, actor) => applyDemo(actor, path.enrollment, path.node, payload),
  "learning.demo.try": ({ path, payload }, actor, call) => answerLimits(call, tryDemo(actor, path.course, path.node, payload)),
  "learning.demo.progress": ({ path }, actor) => demoProgress(actor, path.course),
  "learning.portfolio.create": ({ path, payload }, actor) => createPortfolioDraft(actor, path.enrollment, payload)
})
